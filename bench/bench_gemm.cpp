// ember's f32 GEMM against Eigen's product and the reference triple loop, on
// row-major square matrices and the 128x784 * 784x512 product of an MLP's
// first layer, at 1 and 2 threads. Reports GFLOP/s (2*m*n*k flops per call).
// The bf16 GEMM (bf16 A and B, f32 C) runs on the same shapes, with the kernel
// gemm_bf16 picks and with the AVX-512 BF16 dot kernel forced, where they run.
//
// Build (-fopenmp lets Eigen use 2 threads; -isystem keeps Eigen's own
// warnings out of -Werror) and run, interleaving the repetitions so ember and
// Eigen see the same machine noise (OMP_WAIT_POLICY=passive stops Eigen's
// OpenMP threads spinning on the cores after their own runs):
//   g++ -std=c++20 -O3 -march=native -fopenmp -Wall -Wextra -Werror -Iinclude -I. -isystem /usr/include/eigen3
//       bench/bench_gemm.cpp kernels/cpu/linalg/gemm*.cpp core/thread_pool.cpp core/error.cpp
//       -lbenchmark -lbenchmark_main -pthread -o /tmp/bench_gemm
//   OMP_WAIT_POLICY=passive /tmp/bench_gemm --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true
//       --benchmark_report_aggregates_only=true --benchmark_min_time=0.1
#include <benchmark/benchmark.h>

// GCC 12 warns about its own AVX-512 intrinsics (_mm512_undefined_ps) once
// they are inlined into Eigen's kernels; -isystem does not reach those.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <vector>

#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/linalg/gemm_bf16.h"

namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Row-major inputs A (m, k), B (k, n) and output C (m, n), filled outside the timed loop.
struct GemmInputs {
  int64_t m, n, k;
  std::vector<float> a, b, c;

  explicit GemmInputs(const benchmark::State& state)
      : m(state.range(0)), n(state.range(1)), k(state.range(2)), a(m * k), b(k * n), c(m * n) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    for (float& x : a) x = dist(rng);
    for (float& x : b) x = dist(rng);
  }
};

void report_flops(benchmark::State& state, const GemmInputs& in) {
  const double flops = 2.0 * static_cast<double>(in.m) * in.n * in.k;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void BM_EmberGemmF32(benchmark::State& state) {
  GemmInputs in(state);
  ember::set_num_threads(static_cast<int>(state.range(3)));
  for (auto _ : state) {
    ember::cpu::gemm_f32(in.m, in.n, in.k, 1.f, in.a.data(), in.k, 1, in.b.data(), in.n, 1, 0.f, in.c.data(), in.n,
                         1);
    benchmark::DoNotOptimize(in.c.data());
    benchmark::ClobberMemory();
  }
  report_flops(state, in);
}

void BM_EigenGemmF32(benchmark::State& state) {
  GemmInputs in(state);
  Eigen::setNbThreads(static_cast<int>(state.range(3)));
  Eigen::Map<const RowMajor> a(in.a.data(), in.m, in.k), b(in.b.data(), in.k, in.n);
  Eigen::Map<RowMajor> c(in.c.data(), in.m, in.n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(in.c.data());
    benchmark::ClobberMemory();
  }
  report_flops(state, in);
  state.SetLabel("Eigen threads: " + std::to_string(Eigen::nbThreads()));
}

void BM_ReferenceGemmF32(benchmark::State& state) {
  GemmInputs in(state);
  for (auto _ : state) {
    ember::cpu::gemm_reference_f32(in.m, in.n, in.k, 1.f, in.a.data(), in.k, 1, in.b.data(), in.n, 1, 0.f,
                                   in.c.data(), in.n, 1);
    benchmark::DoNotOptimize(in.c.data());
    benchmark::ClobberMemory();
  }
  report_flops(state, in);
}

// The inputs of GemmInputs rounded to bf16; C stays float32.
struct Bf16GemmInputs {
  int64_t m, n, k;
  std::vector<ember::BFloat16> a, b;
  std::vector<float> c;

  explicit Bf16GemmInputs(const benchmark::State& state) : m(state.range(0)), n(state.range(1)), k(state.range(2)) {
    const GemmInputs f32(state);
    a.assign(f32.a.begin(), f32.a.end());
    b.assign(f32.b.begin(), f32.b.end());
    c.resize(f32.c.size());
  }
};

void run_gemm_bf16(benchmark::State& state, bool force_dot) {
  using ember::cpu::GemmBf16Kernel;
  const bool amx = !force_dot && ember::cpu::gemm_bf16_supports(GemmBf16Kernel::kAmxTiles);
  const GemmBf16Kernel kernel = amx ? GemmBf16Kernel::kAmxTiles : GemmBf16Kernel::kAvx512Dot;
  if (!ember::cpu::gemm_bf16_supports(kernel)) {
    state.SkipWithError("no bf16 GEMM kernel on this CPU");
    return;
  }
  Bf16GemmInputs in(state);
  ember::set_num_threads(static_cast<int>(state.range(3)));
  for (auto _ : state) {
    ember::cpu::gemm_bf16_using(kernel, in.m, in.n, in.k, 1.f, in.a.data(), in.k, 1, in.b.data(), in.n, 1, 0.f,
                                in.c.data(), in.n, 1);
    benchmark::DoNotOptimize(in.c.data());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * static_cast<double>(in.m) * in.n * in.k;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
  state.SetLabel(amx ? "AMX tiles" : "AVX-512 BF16 dot");
}

void BM_EmberGemmBf16(benchmark::State& state) { run_gemm_bf16(state, false); }
void BM_EmberGemmBf16Dot(benchmark::State& state) { run_gemm_bf16(state, true); }

// Arguments: m, n, k, threads. One-thread runs are timed in CPU time, which
// the other processes on a shared machine disturb far less than wall time;
// two-thread runs need wall time.
void add_shapes(benchmark::internal::Benchmark* b, int64_t threads) {
  b->ArgNames({"m", "n", "k", "threads"});
  for (int64_t size : {256, 512, 1024, 2048}) b->Args({size, size, size, threads});
  b->Args({128, 512, 784, threads});
  b->Unit(benchmark::kMillisecond);
  if (threads > 1) b->UseRealTime();
}
void one_thread(benchmark::internal::Benchmark* b) { add_shapes(b, 1); }
void two_threads(benchmark::internal::Benchmark* b) { add_shapes(b, 2); }

void reference_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "n", "k", "threads"});
  b->Args({256, 256, 256, 1});
  b->Args({128, 512, 784, 1});
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_EmberGemmF32)->Apply(one_thread);
BENCHMARK(BM_EigenGemmF32)->Apply(one_thread);
BENCHMARK(BM_EmberGemmBf16)->Apply(one_thread);
BENCHMARK(BM_EmberGemmBf16Dot)->Apply(one_thread);
BENCHMARK(BM_EmberGemmF32)->Apply(two_threads);
BENCHMARK(BM_EigenGemmF32)->Apply(two_threads);
BENCHMARK(BM_EmberGemmBf16)->Apply(two_threads);
BENCHMARK(BM_EmberGemmBf16Dot)->Apply(two_threads);
BENCHMARK(BM_ReferenceGemmF32)->Apply(reference_shapes);

}  // namespace
