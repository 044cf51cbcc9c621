// ember's CPU reductions on float32 at 1 and 2 threads (the argument):
//   sum, mean, logsumexp over 16M contiguous floats (every dim), and
//   sum over dim 0 and over dim 1 of a contiguous [4096, 4096].
// Each reads its 64 MiB input once, so the limit is memory bandwidth
// (~35-42 GB/s on the reference machine, bench/stream.cpp); GB/s counts the
// input bytes read per second. Inputs are made outside the timed loop; the
// result (a few bytes to 16 KiB) is allocated per call, as a user would see.
//
//   cmake --build build/<dir> --target bench_reduce
//   build/<dir>/bench/bench_reduce --benchmark_repetitions=7 --benchmark_report_aggregates_only=true
//       --benchmark_enable_random_interleaving=true
#include <benchmark/benchmark.h>

#include <functional>

#include "ember/ember.h"

namespace {

using ember::Tensor;

const Tensor& vector_16m() {
  static const Tensor x = ember::rand({int64_t{1} << 24});
  return x;
}

const Tensor& square_4096() {
  static const Tensor x = ember::rand({4096, 4096});
  return x;
}

void run(benchmark::State& state, const Tensor& x, const std::function<Tensor(const Tensor&)>& op) {
  ember::set_num_threads(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Tensor r = op(x);
    benchmark::DoNotOptimize(r.data_ptr());
  }
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(x.nbytes()) * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void BM_Sum16M(benchmark::State& s) {
  run(s, vector_16m(), [](const Tensor& x) { return x.sum(); });
}
void BM_Mean16M(benchmark::State& s) {
  run(s, vector_16m(), [](const Tensor& x) { return x.mean(); });
}
void BM_Logsumexp16M(benchmark::State& s) {
  run(s, vector_16m(), [](const Tensor& x) { return x.logsumexp({0}); });
}
void BM_SumDim0_4096x4096(benchmark::State& s) {
  run(s, square_4096(), [](const Tensor& x) { return x.sum({0}); });
}
void BM_SumDim1_4096x4096(benchmark::State& s) {
  run(s, square_4096(), [](const Tensor& x) { return x.sum({1}); });
}

}  // namespace

BENCHMARK(BM_Sum16M)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Mean16M)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Logsumexp16M)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SumDim0_4096x4096)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SumDim1_4096x4096)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
