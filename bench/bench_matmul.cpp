// ember::mm through the full Tensor API (dispatch, output allocation, the
// GEMM), f32, on square matrices and on the 128x784 * 784x512 product of an
// MLP's first layer, at 1 and 2 threads. Reports GFLOP/s (2*m*n*k flops per
// call); bench_gemm.cpp measures the bare GEMM kernel for comparison.
//
// Build and run (interleaved repetitions, so both thread counts see the same noise):
//   cmake --build build/<dir> --target bench_matmul
//   build/<dir>/bench/bench_matmul --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true
//       --benchmark_report_aggregates_only=true --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "ember/ember.h"
#include "ember/parallel.h"

namespace {

// Arguments: m, k, n, threads. Inputs are made outside the timed loop.
void BM_EmberMmF32(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  ember::set_num_threads(static_cast<int>(state.range(3)));
  ember::Generator gen(42);
  const ember::Tensor a = ember::rand({m, k}, ember::kFloat32, &gen);
  const ember::Tensor b = ember::rand({k, n}, ember::kFloat32, &gen);
  for (auto _ : state) {
    ember::Tensor c = ember::mm(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n) + ", " +
                 std::to_string(state.range(3)) + " thread(s)");
}

void MmShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "k", "n", "threads"});
  for (int64_t threads : {1, 2}) {
    for (int64_t size : {256, 512, 1024, 2048}) b->Args({size, size, size, threads});
    b->Args({128, 784, 512, threads});
  }
}

BENCHMARK(BM_EmberMmF32)->Apply(MmShapes)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
