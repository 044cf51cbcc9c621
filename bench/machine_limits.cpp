// The measuring loops of machine_limits.h. Compiled with -O3 and the build's
// CPU flags (-march=native by default) so the FMA loop uses the widest
// vectors the machine has.
#include "bench/machine_limits.h"

#if defined(__AVX512F__) || defined(__FMA__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <thread>

namespace ember::bench {
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
constexpr int kLanes = 4;  // 16 bytes: the baseline vector width (SSE2, NEON)
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));
constexpr const char* kIsa = "generic vectors (no FMA)";
Vec splat(float x) { return Vec{} + x; }
Vec fma(Vec a, Vec b, Vec c) { return a * b + c; }
float lane0(Vec v) { return v[0]; }
#endif

constexpr int kFmaChains = 12;  // > 4-cycle latency x 2 pipes, with slack

// Runs `rounds` rounds of kFmaChains FMAs; returns a value that depends on all of them.
float run_chains(int64_t rounds) {
  Vec acc[kFmaChains];
  for (int c = 0; c < kFmaChains; ++c) acc[c] = splat(static_cast<float>(c));
  const Vec mul = splat(0.999999f), add = splat(1e-7f);
  for (int64_t it = 0; it < rounds; ++it) {
#pragma GCC unroll 12
    for (int c = 0; c < kFmaChains; ++c) acc[c] = fma(acc[c], mul, add);
  }
  float sum = 0;
  for (int c = 0; c < kFmaChains; ++c) sum += lane0(acc[c]);
  return sum;
}

volatile float g_sink;  // where results go so the compiler cannot drop the work

// Seconds for `threads` threads to run body(lo, hi) over [0, n) split evenly.
template <class Body>
double timed_split(int threads, size_t n, const Body& body) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&body, n, t, threads] { body(n * t / threads, n * (t + 1) / threads); });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

const char* fma_isa() { return kIsa; }
int fma_chains() { return kFmaChains; }

double fma_gflops(int threads, double flops_per_thread) {
  const int64_t rounds = std::max<int64_t>(1, static_cast<int64_t>(flops_per_thread / (2.0 * kLanes * kFmaChains)));
  std::vector<float> sinks(threads);
  const double seconds = timed_split(threads, static_cast<size_t>(threads), [&](size_t lo, size_t hi) {
    for (size_t t = lo; t < hi; ++t) sinks[t] = run_chains(rounds);
  });
  for (float s : sinks) g_sink = g_sink + s;
  return 2.0 * kLanes * kFmaChains * static_cast<double>(rounds) * threads / seconds * 1e-9;
}

StreamArrays::StreamArrays(size_t bytes_per_array)
    : a_(bytes_per_array / sizeof(double), 1.0),
      b_(bytes_per_array / sizeof(double), 2.0),
      c_(bytes_per_array / sizeof(double), 3.0) {}

double StreamArrays::triad_gbs(int threads) {
  double* a = a_.data();
  const double *b = b_.data(), *c = c_.data();
  const double s = timed_split(threads, a_.size(), [=](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0 * c[i];
  });
  return 3.0 * static_cast<double>(bytes_per_array()) / s * 1e-9;
}

double StreamArrays::copy_gbs(int threads) {
  double* a = a_.data();
  const double* b = b_.data();
  const double s = timed_split(threads, a_.size(), [=](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) a[i] = b[i];
  });
  return 2.0 * static_cast<double>(bytes_per_array()) / s * 1e-9;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace ember::bench
