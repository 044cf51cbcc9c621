// Gradients of nn::functional::scaled_dot_product_attention beyond the op-info
// gradcheck (tests/autograd_gradcheck.cpp runs that on every Float64 sample):
// the fused backward against autograd through the composite on long
// sequences, the gradient of a float mask, second derivatives (through the
// composite route the formula takes under create_graph), and the bits of the
// fused backward on 1 and 2 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "ember/gradcheck.h"
#include "ember/nn/functional/attention.h"
#include "ember/parallel.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor leaf(IntArrayRef sizes, uint64_t seed, DType t = kFloat32) {
  Generator g(seed);
  return randn(sizes, kFloat64, &g).to(t).requires_grad_();
}

// softmax(q k^T / sqrt(E) + mask) v with differentiable ember ops (the L x S matrix is materialised).
Tensor composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask, bool causal) {
  Tensor s = q.matmul(k.transpose(-2, -1)).mul(Scalar(1.0 / std::sqrt(static_cast<double>(q.size(-1)))));
  if (mask.defined()) s = s + mask;
  if (causal) s = s.masked_fill(ones({q.size(-2), k.size(-2)}, kBool).tril().logical_not(), Scalar(-kInf));
  const Tensor e = (s - s.amax({-1}, true).detach()).exp();
  return (e / e.sum({-1}, true)).matmul(v);
}

struct Grads {
  Tensor out;
  TensorList inputs;
};

template <class Fn>
Grads run(const TensorList& inputs, const Tensor& upstream, Fn fn) {
  const Tensor out = fn(inputs);
  return {out, autograd::grad({out}, inputs, {upstream})};
}

TEST(AttentionBackward, FusedMatchesTheCompositeOnLongSequences) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    // Key/value shared across heads (broadcast batch dim): their gradients sum over heads.
    const Tensor q = leaf({2, 3, 150, 24}, 1), k = leaf({2, 1, 150, 24}, 2), v = leaf({2, 1, 150, 20}, 3);
    const Tensor go = randn({2, 3, 150, 20});
    const Grads fused = run({q, k, v}, go, [&](const TensorList& in) {
      return F::scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, causal);
    });
    const Grads ref = run({q, k, v}, go, [&](const TensorList& in) {
      return composite(in[0], in[1], in[2], Tensor(), causal);
    });
    EXPECT_TRUE(all_close(fused.out, ref.out, 1e-4, 1e-5));
    for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(all_close(fused.inputs[i], ref.inputs[i], 1e-3, 1e-4)) << "input " << i;
  }
}

TEST(AttentionBackward, FloatMaskGetsItsGradientSummedOverBroadcastDims) {
  const Tensor q = leaf({2, 2, 5, 4}, 1, kFloat64), k = leaf({2, 2, 6, 4}, 2, kFloat64),
               v = leaf({2, 2, 6, 3}, 3, kFloat64), mask = leaf({2, 1, 5, 6}, 4, kFloat64);
  const Tensor go = randn({2, 2, 5, 3}, kFloat64);
  const Grads fused = run({q, k, v, mask}, go, [](const TensorList& in) {
    return F::scaled_dot_product_attention(in[0], in[1], in[2], in[3]);
  });
  const Grads ref = run({q, k, v, mask}, go, [](const TensorList& in) {
    return composite(in[0], in[1], in[2], in[3], false);
  });
  ASSERT_EQ(fused.inputs[3].sizes(), mask.sizes());
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(all_close(fused.inputs[i], ref.inputs[i], 1e-10, 1e-12)) << "input " << i;
}

TEST(AttentionBackward, Gradgradcheck) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    const Tensor q = leaf({1, 2, 3, 4}, 1, kFloat64), k = leaf({1, 2, 3, 4}, 2, kFloat64),
                 v = leaf({1, 2, 3, 2}, 3, kFloat64);
    auto fn = [causal](const TensorList& in) {
      return TensorList{F::scaled_dot_product_attention(in[0], in[1], in[2], std::nullopt, 0.0, causal)};
    };
    const autograd::GradcheckResult r = autograd::gradgradcheck(fn, {q, k, v});
    EXPECT_TRUE(r) << r.report;
  }
  const Tensor q = leaf({2, 3, 4}, 4, kFloat64), k = leaf({2, 5, 4}, 5, kFloat64), v = leaf({2, 5, 3}, 6, kFloat64),
               mask = leaf({3, 5}, 7, kFloat64);
  auto masked = [](const TensorList& in) {
    return TensorList{F::scaled_dot_product_attention(in[0], in[1], in[2], in[3], 0.0, false, 0.7)};
  };
  const autograd::GradcheckResult r = autograd::gradgradcheck(masked, {q, k, v, mask});
  EXPECT_TRUE(r) << r.report;
}

TEST(AttentionBackward, SameBitsOnOneAndTwoThreads) {
  const Tensor q = leaf({2, 2, 130, 16}, 1), k = leaf({2, 2, 140, 16}, 2), v = leaf({2, 2, 140, 16}, 3);
  const Tensor go = randn({2, 2, 130, 16});
  auto fn = [](const TensorList& in) { return F::scaled_dot_product_attention(in[0], in[1], in[2]); };
  const int saved = get_num_threads();
  set_num_threads(1);
  const Grads one = run({q, k, v}, go, fn);
  set_num_threads(2);
  const Grads two = run({q, k, v}, go, fn);
  set_num_threads(saved);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(all_close(one.inputs[i], two.inputs[i], 0, 0)) << "input " << i;
}

}  // namespace
}  // namespace ember::testing
