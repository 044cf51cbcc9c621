// Throughput of the vec_math.h functions on 16M contiguous floats.
//
// Each benchmark reads x and writes y = f(x) (out of place, into buffers
// allocated and written once beforehand) and reports GB/s, counting bytes
// read + written (8 per element; add reads two inputs, 12), and ns per
// element. `copy` (y = x through VecF) is the memory roof the others are
// measured against: a function as fast as copy is bound by memory, not by
// its math. With /threads:2 each thread takes one half of the array, as the
// elementwise loop's thread pool would. The /16384 runs repeat the same loop
// on 16K floats that stay in L1/L2: the cost of the math alone.
// `one_lane_*` run the float form used by strided loops; `std_*` are the
// plain std:: loops the vector versions replace.
//
// Time is each thread's CPU time (CLOCK_THREAD_CPUTIME_ID): on a quiet
// machine the same as wall time, on a shared one less disturbed by others.
//
//   bench_vec_math --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <time.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "kernels/cpu/vec/vec_math.h"

namespace vec = ember::cpu::vec;
using vec::VecF;

namespace {

constexpr size_t kN = size_t{1} << 24;  // 16M floats, 64 MiB per buffer: far beyond the caches

// A 2 MiB-aligned buffer on huge pages where the kernel allows (as the
// caching allocator will hand out), written once so no page fault lands in
// a timed run.
float* make_buffer() {
  constexpr size_t kHuge = size_t{2} << 20;
  auto* p = static_cast<float*>(std::aligned_alloc(kHuge, kN * sizeof(float)));
  madvise(p, kN * sizeof(float), MADV_HUGEPAGE);
  std::memset(p, 0, kN * sizeof(float));
  return p;
}

// Shared by all benchmarks (and by both threads of a /threads:2 run).
float* const g_x = make_buffer();
float* const g_x2 = make_buffer();
float* const g_y = make_buffer();

// Inputs in [lo, hi], a range where the function does real work.
void fill_uniform(float* x, float lo, float hi) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> d(lo, hi);
  for (size_t i = 0; i < kN; ++i) x[i] = d(rng);
}

// This thread's half (or whole) of [0, n), in whole vectors.
std::pair<size_t, size_t> slice(const benchmark::State& state, size_t n) {
  size_t per = n / state.threads() / VecF::kLanes * VecF::kLanes;
  size_t begin = per * state.thread_index();
  return {begin, state.thread_index() + 1 == state.threads() ? n : begin + per};
}

double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Times body() per iteration; GB/s adds up over threads, ns/elem is time
// over all elements.
template <class Body>
void measure(benchmark::State& state, size_t elements, size_t bytes_per_element, Body body) {
  double seconds = 0.0;
  for (auto _ : state) {
    double t0 = thread_seconds();
    body();
    seconds += thread_seconds() - t0;
    benchmark::ClobberMemory();
  }
  double done = static_cast<double>(state.iterations()) * elements;
  state.counters["GB/s"] = benchmark::Counter(done * bytes_per_element / seconds * 1e-9);
  state.counters["ns/elem"] =
      benchmark::Counter(seconds / (done * state.threads()) * 1e9, benchmark::Counter::kAvgThreads);
}

// y = f(x) through VecF, as the contiguous elementwise loop runs it.
template <class F>
void run_vec(benchmark::State& state, float lo, float hi, F f) {
  if (state.thread_index() == 0) fill_uniform(g_x, lo, hi);
  auto [begin, end] = slice(state, static_cast<size_t>(state.range(0)));
  measure(state, end - begin, 2 * sizeof(float), [&, begin = begin, end = end] {
    for (size_t i = begin; i < end; i += VecF::kLanes) f(VecF::load(g_x + i)).store(g_y + i);
  });
}

// y = f(x) one float at a time.
template <class F>
void run_scalar(benchmark::State& state, float lo, float hi, F f) {
  fill_uniform(g_x, lo, hi);
  measure(state, kN, 2 * sizeof(float), [&] {
    for (size_t i = 0; i < kN; ++i) g_y[i] = f(g_x[i]);
  });
}

void copy(benchmark::State& s) {
  run_vec(s, -1, 1, [](VecF x) { return x; });
}
void relu(benchmark::State& s) {
  run_vec(s, -4, 4, [](VecF x) { return vec::max(x, VecF(0.0f)); });
}
void add(benchmark::State& state) {
  if (state.thread_index() == 0) {
    fill_uniform(g_x, -1, 1);
    fill_uniform(g_x2, -1, 1);
  }
  auto [begin, end] = slice(state, static_cast<size_t>(state.range(0)));
  measure(state, end - begin, 3 * sizeof(float), [begin = begin, end = end] {
    for (size_t i = begin; i < end; i += VecF::kLanes) (VecF::load(g_x + i) + VecF::load(g_x2 + i)).store(g_y + i);
  });
}

#define EMBER_BENCH(fn)                                                                        \
  BENCHMARK(fn)->Arg(kN)->Threads(1)->Threads(2)->UseRealTime()->Unit(benchmark::kMillisecond); \
  BENCHMARK(fn)->Arg(16384)->Unit(benchmark::kMicrosecond)

#define EMBER_VEC_BENCH(fn, lo, hi)                                    \
  void fn(benchmark::State& s) {                                       \
    run_vec(s, lo, hi, [](VecF x) { return vec::fn(x); });             \
  }                                                                    \
  EMBER_BENCH(fn)

#define EMBER_SCALAR_BENCH(name, lo, hi, expr)                         \
  void name(benchmark::State& s) {                                     \
    run_scalar(s, lo, hi, [](float x) { return expr; });               \
  }                                                                    \
  BENCHMARK(name)->UseRealTime()->Unit(benchmark::kMillisecond)

EMBER_BENCH(copy);
EMBER_BENCH(relu);
EMBER_BENCH(add);
EMBER_VEC_BENCH(exp, -10, 10);
EMBER_VEC_BENCH(exp2, -10, 10);
EMBER_VEC_BENCH(expm1, -10, 10);
EMBER_VEC_BENCH(log, 0.01f, 100);
EMBER_VEC_BENCH(log2, 0.01f, 100);
EMBER_VEC_BENCH(log1p, -0.5f, 100);
EMBER_VEC_BENCH(tanh, -5, 5);
EMBER_VEC_BENCH(sigmoid, -10, 10);
EMBER_VEC_BENCH(silu, -10, 10);
EMBER_VEC_BENCH(softplus, -10, 10);
EMBER_VEC_BENCH(erf, -4, 4);
EMBER_VEC_BENCH(erfc, -4, 4);
EMBER_VEC_BENCH(gelu_erf, -4, 4);
EMBER_VEC_BENCH(gelu_tanh, -4, 4);
EMBER_VEC_BENCH(sin, -10, 10);
EMBER_VEC_BENCH(cos, -10, 10);
EMBER_SCALAR_BENCH(one_lane_exp, -10, 10, vec::exp(x));
EMBER_SCALAR_BENCH(one_lane_gelu_erf, -4, 4, vec::gelu_erf(x));
EMBER_SCALAR_BENCH(std_exp, -10, 10, std::exp(x));
EMBER_SCALAR_BENCH(std_log, 0.01f, 100, std::log(x));
EMBER_SCALAR_BENCH(std_tanh, -5, 5, std::tanh(x));
EMBER_SCALAR_BENCH(std_erf, -4, 4, std::erf(x));
EMBER_SCALAR_BENCH(std_gelu_erf, -4, 4, 0.5f * x * (1.0f + std::erf(x * 0.70710678f)));

}  // namespace
