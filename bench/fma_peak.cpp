// Measures this machine's fp32 FMA peak: the ceiling a GEMM is judged against.
//
// Each thread runs kChains independent FMA chains on full-width vector
// registers (zmm with AVX-512, ymm with AVX2/FMA). With at least
// latency x pipes chains in flight the FMA units never wait, so
// flops / second = threads x pipes x lanes x 2 x clock.
//
//   g++ -std=c++20 -O3 -march=native bench/fma_peak.cpp -pthread -o /tmp/fma_peak && /tmp/fma_peak
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16;
constexpr const char* kIsa = "AVX-512 (zmm)";
Vec splat(float x) { return _mm512_set1_ps(x); }
Vec fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
float lane0(Vec v) { return _mm512_cvtss_f32(v); }
#elif defined(__FMA__)
using Vec = __m256;
constexpr int kLanes = 8;
constexpr const char* kIsa = "AVX2/FMA (ymm)";
Vec splat(float x) { return _mm256_set1_ps(x); }
Vec fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
float lane0(Vec v) { return _mm256_cvtss_f32(v); }
#else
#error "fma_peak needs FMA instructions (build with -march=native on an x86-64 CPU with FMA)"
#endif

constexpr int kChains = 12;  // > 4-cycle latency x 2 pipes, with slack
constexpr int64_t kIterations = 1'000'000'000 / kChains;

volatile float g_sink;  // where results go so the compiler cannot drop the work

// Runs kIterations rounds of kChains FMAs; returns a value that depends on all of them.
float run_chains() {
  Vec acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = splat(static_cast<float>(c));
  const Vec mul = splat(0.999999f), add = splat(1e-7f);
  for (int64_t it = 0; it < kIterations; ++it) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = fma(acc[c], mul, add);
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += lane0(acc[c]);
  return sum;
}

// GFLOP/s of `threads` threads running run_chains() at once.
double measure_gflops(int threads) {
  std::vector<float> sinks(threads);
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) workers.emplace_back([&sinks, t] { sinks[t] = run_chains(); });
  for (auto& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (float s : sinks) g_sink = g_sink + s;
  const double flops = 2.0 * kLanes * kChains * static_cast<double>(kIterations) * threads;
  return flops / seconds * 1e-9;
}

}  // namespace

int main() {
  const int max_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::printf("fp32 FMA peak, %s, %d independent chains per thread (best of 5 runs)\n", kIsa, kChains);
  for (int threads : {1, max_threads}) {
    double best = 0;
    for (int run = 0; run < 5; ++run) best = std::max(best, measure_gflops(threads));
    std::printf("  %2d thread%s: %7.1f GFLOP/s\n", threads, threads == 1 ? " " : "s", best);
    if (max_threads == 1) break;
  }
  return 0;
}
