#!/usr/bin/env bash
# The real-GPU check: on a machine with an NVIDIA GPU and a clean checkout,
# build the real CUDA variant with every core, run the `cuda` tests and the
# GPU benchmarks, and write everything to one results file.
#   tools/gpu-check.sh [RESULTS_DIR]     (default: $OUT, else build/gpu-check)
# Budget: 8 minutes on an H200 machine (one architecture, only the targets needed).
set -uo pipefail
cd "$(dirname "$0")/.."

out_dir="${1:-${OUT:-build/gpu-check}}"
mkdir -p "$out_dir"
results="$out_dir/gpu-check.txt"
build=build/gpu
jobs=$(nproc)
arch="${CUDA_ARCH:-90}"
status=0

log() { printf '%s\n' "$*" | tee -a "$results"; }
section() { log ""; log "== $* =="; }
# Runs a step, appends its output to the results, remembers a failure and goes on.
step() {
  local name=$1
  shift
  section "$name"
  local t0=$SECONDS
  "$@" 2>&1 | tee -a "$results" | tail -n 40
  local rc=${PIPESTATUS[0]}
  log "-- $name: exit $rc in $((SECONDS - t0)) s"
  [ "$rc" -eq 0 ] || status=1
}

: > "$results"
log "ember gpu-check $(git rev-parse --short HEAD 2>/dev/null || echo '(no git)') $(date -u +%Y-%m-%dT%H:%M:%SZ)"
section "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | tee -a "$results"
nvcc --version 2>&1 | tail -n 2 | tee -a "$results"
log "cores: $jobs, CUDA architecture: $arch"

step "configure" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DEMBER_BUILD_BENCH=ON
step "build" cmake --build "$build" -j "$jobs" --target ember ember_cuda_tests cuda_bandwidth cuda_gemm
step "cuda tests" ctest --test-dir "$build" --output-on-failure -j 4 -L cuda
step "cuda tests, EMBER_CUDA_LAUNCH_BLOCKING=1" env EMBER_CUDA_LAUNCH_BLOCKING=1 "$build/tests/ember_cuda_tests"
step "bandwidth vs device-to-device copy" "$build/bench/cuda_bandwidth" 256
step "GEMM: ember (cuBLASLt wrapper) vs cuBLAS" "$build/bench/cuda_gemm" 4096

section "summary"
log "results: $results"
log "status: $([ $status -eq 0 ] && echo ok || echo FAILED)"
exit $status
