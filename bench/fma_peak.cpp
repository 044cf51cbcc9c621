// Measures this machine's fp32 FMA peak: the ceiling a GEMM is judged against
// (the loop and why it reaches the peak: bench/machine_limits.h).
//
//   build/release/bench/fma_peak
#include <algorithm>
#include <cstdio>
#include <thread>

#include "bench/machine_limits.h"

int main() {
  namespace mb = ember::bench;
  const int max_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("fp32 FMA peak, %s, %d independent chains per thread (best of 5 runs)\n", mb::fma_isa(),
              mb::fma_chains());
  for (int threads : {1, max_threads}) {
    double best = 0;
    for (int run = 0; run < 5; ++run) best = std::max(best, mb::fma_gflops(threads, 32e9));
    std::printf("  %2d thread%s: %7.1f GFLOP/s\n", threads, threads == 1 ? " " : "s", best);
    if (max_threads == 1) break;
  }
  return 0;
}
