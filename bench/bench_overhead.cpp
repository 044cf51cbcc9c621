// Per-op eager overhead: ops on 1-element tensors, where the cost is the
// dispatcher, TensorIterator set-up and allocation rather than the math.
// The last two measure autograd: recording, and a backward pass.
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

// Autograd overhead: the same tiny op, recording a backward node.
void BM_Add1RequiresGrad(benchmark::State& state) {
  ember::Tensor a = ember::ones({1}).requires_grad_(), b = ember::ones({1}).requires_grad_();
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(BM_Add1RequiresGrad);

// Forward and backward of 1,000 tiny ops: per-node cost of recording and of
// the engine. Items are ops.
void BM_Chain1000ForwardBackward(benchmark::State& state) {
  ember::Tensor x = ember::ones({1}).requires_grad_();
  for (auto _ : state) {
    ember::Tensor h = x;
    for (int i = 0; i < 1000; ++i) h = i % 2 == 0 ? h * 1.0001 : h + 0.5;
    h.backward();
    x.set_grad(ember::Tensor());
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_Chain1000ForwardBackward);

}  // namespace
