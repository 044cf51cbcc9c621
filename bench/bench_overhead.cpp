// Per-op eager overhead: ops on 1-element tensors, where the cost is the
// dispatcher, TensorIterator set-up and allocation rather than the math.
// The libtorch side of this comparison is in compare_libtorch.cpp.
#include <benchmark/benchmark.h>

#include "ember/ember.h"

namespace {

void BM_Add1(benchmark::State& state) {
  ember::Tensor a = ember::ones({1}), b = ember::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(BM_Add1);

void BM_AddScalar1(benchmark::State& state) {
  ember::Tensor a = ember::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(a + 1.0);
}
BENCHMARK(BM_AddScalar1);

void BM_AddInplace1(benchmark::State& state) {
  ember::Tensor a = ember::ones({1}), b = ember::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(a.add_(b));
}
BENCHMARK(BM_AddInplace1);

void BM_Relu1(benchmark::State& state) {
  ember::Tensor a = ember::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(a.relu());
}
BENCHMARK(BM_Relu1);

void BM_Sum1(benchmark::State& state) {
  ember::Tensor a = ember::ones({1});
  for (auto _ : state) benchmark::DoNotOptimize(a.sum());
}
BENCHMARK(BM_Sum1);

void BM_View(benchmark::State& state) {
  ember::Tensor a = ember::ones({2, 3});
  for (auto _ : state) benchmark::DoNotOptimize(a.view({3, 2}));
}
BENCHMARK(BM_View);

void BM_Empty(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ember::empty({1}));
}
BENCHMARK(BM_Empty);

}  // namespace
