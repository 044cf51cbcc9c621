// One AdamW step over the parameters of a 784-512-512-10 MLP (669,706
// float32 values in six tensors), at 1 and 2 threads (the argument):
//   BM_AdamWFused     ember::optim::AdamW::step(): one _fused_adam_ call,
//                     one pass over params, grads and both moments;
//   BM_AdamWPerTensor the same update as PyTorch's single-tensor loop, one
//                     ember op per line per tensor (about a dozen passes over
//                     memory and a temporary per op).
// GB/s counts the 28 bytes per parameter a single pass moves (read p, g, m,
// v; write p, m, v), so the fused step's figure is comparable to the memory
// bandwidth (bench/stream.cpp) and the per-tensor loop's shows how far short
// it falls. Run it while holding the build lock on shared machines:
//
//   cmake --build build/<dir> --target bench_optim
//   build/<dir>/bench/bench_optim --benchmark_repetitions=7 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"
#include "ember/optim.h"

namespace {

using ember::Tensor;

constexpr double kLr = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8, kWeightDecay = 1e-2;

// Weights and biases of Linear(784, 512), Linear(512, 512), Linear(512, 10), with gradients.
std::vector<Tensor> mlp_params() {
  std::vector<Tensor> params;
  const int64_t sizes[][2] = {{512, 784}, {512, 512}, {10, 512}};
  for (const auto& s : sizes) {
    params.push_back(ember::randn({s[0], s[1]}).mul_(0.05).requires_grad_());
    params.push_back(ember::randn({s[0]}).mul_(0.05).requires_grad_());
  }
  for (Tensor& p : params) p.set_grad(ember::randn(p.sizes()));
  return params;
}

void set_rate(benchmark::State& state, const std::vector<Tensor>& params) {
  int64_t n = 0;
  for (const Tensor& p : params) n += p.numel();
  state.counters["GB/s"] = benchmark::Counter(
      28.0 * static_cast<double>(n) * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

void BM_AdamWFused(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(0)));
  std::vector<Tensor> params = mlp_params();
  ember::optim::AdamW opt(params, ember::optim::AdamWOptions(kLr).weight_decay(kWeightDecay));
  for (auto _ : state) opt.step();
  set_rate(state, params);
}

void BM_AdamWPerTensor(benchmark::State& state) {
  ember::set_num_threads(static_cast<int>(state.range(0)));
  std::vector<Tensor> params = mlp_params();
  std::vector<Tensor> exp_avg, exp_avg_sq;
  for (const Tensor& p : params) {
    exp_avg.push_back(ember::zeros(p.sizes()));
    exp_avg_sq.push_back(ember::zeros(p.sizes()));
  }
  int64_t step = 0;
  ember::NoGradGuard no_grad;
  for (auto _ : state) {
    ++step;
    const double bias_correction1 = 1 - std::pow(kBeta1, step);
    const double bias_correction2_sqrt = std::sqrt(1 - std::pow(kBeta2, step));
    for (size_t i = 0; i < params.size(); ++i) {
      Tensor& p = params[i];
      const Tensor g = p.grad();
      p.mul_(1 - kLr * kWeightDecay);
      exp_avg[i].mul_(kBeta1).add_(g, 1 - kBeta1);
      exp_avg_sq[i].mul_(kBeta2).add_(g * g, 1 - kBeta2);
      const Tensor denom = (exp_avg_sq[i].sqrt() / bias_correction2_sqrt).add_(kEps);
      p.add_(exp_avg[i] / denom, -kLr / bias_correction1);
    }
  }
  set_rate(state, params);
}

BENCHMARK(BM_AdamWFused)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_AdamWPerTensor)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
