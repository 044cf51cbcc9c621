#!/usr/bin/env bash
# Runs every benchmark of a build directory; the libtorch side-by-side runs
# with a fair reference (see ../shared/BENCHMARKING.md): OpenBLAS, no
# OPENBLAS_CORETYPE cap, explicit thread counts.
set -euo pipefail
build=${1:-build/release}
shift || true
echo "== machine limits"
"$build/bench/fma_peak"
"$build/bench/stream"
for b in "$build"/bench/bench_*; do
  [ -x "$b" ] || continue
  echo "== $(basename "$b")"
  "$b" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
done
for b in "$build"/bench/compare_*; do
  [ -x "$b" ] || continue
  echo "== ember vs libtorch: $(basename "$b")"
  LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$b" "$@"
done
