// ember's fused scaled_dot_product_attention (flash attention, kernels/cpu/attention/)
// against libtorch 1.13's composite softmax(q k^T * scale) v (matmul, softmax,
// matmul; autograd for the backward), which is what a 1.13 user runs: float32,
// batch 16, 4 heads, head dim 64, sequence 128 and 1024, forward and
// forward+backward (gradients of q, k and v), 1 and 2 threads (harness:
// compare_harness.h). The rate column counts the composite's flops: 4*B*H*L*S*E
// forward, 12*B*H*L*S*E forward+backward (ember's backward also recomputes
// q k^T, which is not counted).
// After the table: peak memory of one forward+backward at sequence 1024, measured
// with ember's allocator statistics, for the fused op and for the same composite
// written with ember ops.
//
//   env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp \
//     env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE build/release/bench/compare_attention [name filter]
#include <torch/torch.h>

#include <cmath>

#include "bench/compare_harness.h"
#include "ember/nn/functional/attention.h"

using namespace ember_bench;
namespace F = ember::nn::functional;

namespace {

constexpr int64_t kBatch = 16, kHeads = 4, kHeadDim = 64;

torch::Tensor torch_composite(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return torch::softmax(q.matmul(k.transpose(-2, -1)) * scale, -1).matmul(v);
}

ember::Tensor ember_composite(const ember::Tensor& q, const ember::Tensor& k, const ember::Tensor& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const ember::Tensor s = q.matmul(k.transpose(-2, -1)).mul(ember::Scalar(scale));
  const ember::Tensor e = (s - s.amax({-1}, true)).exp();
  return (e / e.sum({-1}, true)).matmul(v);
}

void add_cases(std::vector<Case>& cases, int64_t seq) {
  const std::vector<int64_t> shape = {kBatch, kHeads, seq, kHeadDim};
  const double flops = 4.0 * kBatch * kHeads * seq * seq * kHeadDim;
  auto eq = ember::randn(shape), ek = ember::randn(shape), ev = ember::randn(shape), egy = ember::randn(shape);
  auto tq = torch::randn(shape), tk = torch::randn(shape), tv = torch::randn(shape), tgy = torch::randn(shape);
  const std::string name = "sdpa B16 H4 L" + std::to_string(seq) + " E64";
  cases.push_back({name + " forward", [=] { keep(F::scaled_dot_product_attention(eq, ek, ev)); },
                   [=] {
                     torch::NoGradGuard no_grad;
                     keep(torch_composite(tq, tk, tv));
                   },
                   flops, "GFLOP/s"});
  auto eqr = eq.clone().requires_grad_(), ekr = ek.clone().requires_grad_(), evr = ev.clone().requires_grad_();
  auto tqr = tq.clone().requires_grad_(), tkr = tk.clone().requires_grad_(), tvr = tv.clone().requires_grad_();
  cases.push_back({name + " forward+backward",
                   [=] {
                     auto y = F::scaled_dot_product_attention(eqr, ekr, evr);
                     keep(ember::autograd::grad({y}, {eqr, ekr, evr}, {egy}));
                   },
                   [=] {
                     auto y = torch_composite(tqr, tkr, tvr);
                     keep(torch::autograd::grad({y}, {tqr, tkr, tvr}, {tgy}));
                   },
                   3 * flops, "GFLOP/s"});
}

// Peak bytes allocated by ember during fn, above what was allocated before.
template <class Fn>
double peak_mib(Fn fn) {
  const int64_t before = ember::memory_stats().allocated_bytes;
  ember::reset_peak_memory_stats();
  fn();
  return static_cast<double>(ember::memory_stats().peak_allocated_bytes - before) / (1 << 20);
}

void report_memory(int64_t seq) {
  const std::vector<int64_t> shape = {kBatch, kHeads, seq, kHeadDim};
  auto q = ember::randn(shape).requires_grad_(), k = ember::randn(shape).requires_grad_(),
       v = ember::randn(shape).requires_grad_(), gy = ember::randn(shape);
  const double fused = peak_mib([&] {
    auto y = F::scaled_dot_product_attention(q, k, v);
    keep(ember::autograd::grad({y}, {q, k, v}, {gy}));
  });
  const double composite = peak_mib([&] {
    auto y = ember_composite(q, k, v);
    keep(ember::autograd::grad({y}, {q, k, v}, {gy}));
  });
  const double matrix = static_cast<double>(kBatch * kHeads * seq * seq * 4) / (1 << 20);
  const double operand = static_cast<double>(kBatch * kHeads * seq * kHeadDim * 4) / (1 << 20);
  std::printf("\npeak memory of one forward+backward, L = S = %ld (inputs not counted; one [B,H,L,E] operand "
              "is %.0f MiB, one [B,H,L,S] matrix %.0f MiB):\n",
              seq, operand, matrix);
  std::printf("  ember fused (flash_attention)      %8.1f MiB\n", fused);
  std::printf("  ember composite (matmul, softmax)  %8.1f MiB = %.1f attention matrices\n", composite,
              composite / matrix);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  std::vector<Case> cases;
  add_cases(cases, 128);
  add_cases(cases, 1024);
  run_cases(cases, only);
  if (only.empty() || only == "memory") report_memory(1024);
  return 0;
}
