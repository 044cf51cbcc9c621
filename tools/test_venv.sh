#!/bin/sh
# Creates a Python environment for tests that check ember against a Python
# package (onnxruntime, tensorboard), with nothing installed system-wide:
#   tools/test_venv.sh VENV_DIR PACKAGE...
# Each PACKAGE is installed from PyPI and must import under its own name.
# Does nothing when VENV_DIR already imports them all; fails with a message
# naming what is missing when PyPI (or PIP_INDEX_URL) cannot be reached.
set -eu
venv=${1:?usage: test_venv.sh VENV_DIR PACKAGE...}
shift
[ $# -gt 0 ] || { echo "usage: test_venv.sh VENV_DIR PACKAGE..." >&2; exit 2; }
imports=$(echo "$@" | tr ' ' ',')
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import $imports" 2>/dev/null; then
  exit 0
fi
python3 -m venv "$venv" || {
  echo "test_venv.sh: python3 -m venv $venv failed (Debian: apt-get install python3-venv)" >&2
  exit 1
}
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"; then
  echo "test_venv.sh: pip could not install $* into $venv;" \
       "these tests need PyPI (or a pip mirror: PIP_INDEX_URL) to be reachable once" >&2
  exit 1
fi
"$venv/bin/python" -c "import $imports" || {
  echo "test_venv.sh: $* installed into $venv but do not import" >&2
  exit 1
}
