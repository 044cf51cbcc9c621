#!/usr/bin/env bash
# Installs the Debian packages ember's build needs, when they are missing.
# Idempotent and quick when everything is present. Run as root (or with sudo).
#   tools/bootstrap.sh          build + test dependencies
#   tools/bootstrap.sh bench    also the libtorch reference for benchmarks
#   tools/bootstrap.sh golden   also python3-torch, to regenerate golden data
#   tools/bootstrap.sh fuzz     also clang and libFuzzer, for make fuzz
set -euo pipefail

packages=(cmake make g++ ccache pkg-config libeigen3-dev zlib1g-dev nlohmann-json3-dev libcli11-dev
          libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev dataset-fashion-mnist
          libgloo-dev libopenmpi-dev openmpi-bin libonnx-dev libprotobuf-dev python3-venv)
case "${1:-}" in
  bench) packages+=(libtorch-dev libopenblas0-openmp) ;;
  golden) packages+=(python3-torch python3-numpy) ;;
  fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
  "") ;;
  *) echo "usage: $0 [bench|golden|fuzz]" >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
