// nn::functional::scaled_dot_product_attention: argument errors (each one),
// special cases, long sequences against the composite
// softmax(q k^T * scale + mask) v written with ember ops in float64, dropout,
// and the argument order (calls written for another order do not compile).
// The op-info rows (tests/op_info_attention.cpp) pin the values of many small shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "core/op_decls_attention.h"
#include "ember/ember.h"
#include "ember/nn/functional/attention.h"
#include "ember/parallel.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor input(IntArrayRef sizes, uint64_t seed, DType t = kFloat32) {
  Generator g(seed);
  return randn(sizes, kFloat64, &g).to(t);
}

// The composite, in float64 with ember ops: the attention matrix is materialised.
Tensor composite(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = Tensor(),
                 bool causal = false) {
  const Tensor qd = q.to(kFloat64), kd = k.to(kFloat64), vd = v.to(kFloat64);
  Tensor s = qd.matmul(kd.transpose(-2, -1)).mul(Scalar(1.0 / std::sqrt(static_cast<double>(q.size(-1)))));
  if (mask.defined() && mask.dtype() == kBool) s = s.masked_fill(mask.logical_not(), Scalar(-kInf));
  else if (mask.defined()) s = s + mask.to(kFloat64);
  if (causal) s = s.masked_fill(ones({q.size(-2), k.size(-2)}, kBool).tril().logical_not(), Scalar(-kInf));
  const Tensor e = (s - s.amax({-1}, true)).exp();
  return (e / e.sum({-1}, true)).matmul(vd);
}

TEST(ScaledDotProductAttention, ErrorsNameTheProblem) {
  const Tensor q = input({2, 3, 4, 8}, 1), k = input({2, 3, 5, 8}, 2), v = input({2, 3, 5, 6}, 3);
  const std::string op = "scaled_dot_product_attention";
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k, v, ones({3, 5}, kBool)), op.c_str(),
                     "attn_mask of shape [3, 5] cannot be broadcast", "[2, 3, 4, 5]");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, input({2, 3, 5, 7}, 4), v), op.c_str(), "head dim");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, input({3, 3, 5, 8}, 5), input({3, 3, 5, 6}, 6)),
                     op.c_str(), "batch dims", "do not broadcast");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k, input({2, 3, 6, 6}, 7)), op.c_str(),
                     "same length S");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, input({3, 5, 8}, 8), input({3, 5, 6}, 9)), op.c_str(),
                     "same number of dims");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(input({8}, 10), input({8}, 11), input({8}, 12)), op.c_str(),
                     "at least 2");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k, v, ones({4, 5}, kBool), 0.0, true), op.c_str(),
                     "is_causal and attn_mask cannot both be set");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k, v, ones({4, 5}, DType::Int64)), op.c_str(),
                     "attn_mask must be bool", "int64");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k, v, ones({4, 5}, kFloat64)), op.c_str(),
                     "attn_mask must be bool", "float64");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k.to(kFloat64), v), op.c_str(), "one dtype");
}

TEST(ScaledDotProductAttention, BackwardOpChecksItsUpstreamShapes) {
  const Tensor q = input({1, 2, 4, 8}, 1), k = input({1, 2, 5, 8}, 2), v = input({1, 2, 5, 6}, 3);
  const auto [out, lse] = op::flash_attention.call(q, k, v, std::nullopt, false, std::nullopt);
  EXPECT_EMBER_ERROR(op::flash_attention_backward.call(input({1, 2, 4, 5}, 4), std::nullopt, q, k, v, out, lse,
                                                       std::nullopt, false, std::nullopt),
                     "flash_attention_backward", "grad_output must have shape [1, 2, 4, 6]");
  EXPECT_EMBER_ERROR(op::flash_attention_backward.call(out, std::nullopt, q, k, v, out, lse.to(kFloat64),
                                                       std::nullopt, false, std::nullopt),
                     "flash_attention_backward", "logsumexp must have dtype float32");
}

TEST(ScaledDotProductAttention, LongSequencesMatchTheComposite) {
  // Several query and key blocks, ragged last blocks, head dims that are not a multiple of the SIMD width.
  const Tensor q = input({2, 2, 300, 20}, 1), k = input({2, 2, 333, 20}, 2), v = input({2, 2, 333, 13}, 3);
  EXPECT_TRUE(all_close(F::scaled_dot_product_attention(q, k, v), composite(q, k, v), 1e-4, 1e-5));
  const Tensor qs = input({1, 3, 257, 16}, 4);
  EXPECT_TRUE(all_close(F::scaled_dot_product_attention(qs, qs, qs, std::nullopt, 0.0, true),
                        composite(qs, qs, qs, Tensor(), true), 1e-4, 1e-5));
  const Tensor mask = input({300, 333}, 5).gt(Scalar(-1.0));  // ~84% attended
  EXPECT_TRUE(all_close(F::scaled_dot_product_attention(q, k, v, mask), composite(q, k, v, mask), 1e-4, 1e-5));
}

TEST(ScaledDotProductAttention, LargeScoresDoNotOverflow) {
  // Scores of several thousand: exp would overflow without the running max.
  const Tensor q = input({1, 1, 70, 8}, 1).mul(Scalar(300.0)), k = input({1, 1, 200, 8}, 2),
               v = input({1, 1, 200, 4}, 3);
  const Tensor out = F::scaled_dot_product_attention(q, k, v);
  EXPECT_TRUE(all_close(out, composite(q, k, v), 1e-4, 1e-5));
}

// As PyTorch >= 2.5: a query whose keys are all masked gets zeros and zero
// gradients (not 0/0), on the fused route, the dropout route and the
// composite backward (create_graph), and the other rows are untouched.
TEST(ScaledDotProductAttention, RowWithEveryKeyMaskedIsZero) {
  const Tensor k = input({1, 1, 5, 4}, 2), v = input({1, 1, 5, 2}, 3);
  Tensor mask = ones({3, 5}, kBool);
  mask.select(0, 1).fill_(Scalar(false));
  Tensor additive = zeros({3, 5});
  additive.select(0, 1).fill_(Scalar(-kInf));
  for (const Tensor& m : {mask, additive}) {
    for (double p : {0.0, 0.5}) {
      for (bool create_graph : {false, true}) {
        SCOPED_TRACE(std::string(m.dtype() == kBool ? "bool" : "-inf") + " mask, dropout " + std::to_string(p) +
                     (create_graph ? ", create_graph" : ""));
        const Tensor q = input({1, 1, 3, 4}, 1).requires_grad_();
        const Tensor out = F::scaled_dot_product_attention(q, k, v, m, p);
        const std::vector<double> o = values(out);
        const Tensor grad = autograd::grad({out.sum()}, {q}, {}, std::nullopt, create_graph)[0];
        const std::vector<double> g = values(grad);
        for (int c = 0; c < 2; ++c) EXPECT_EQ(o[static_cast<size_t>(2 + c)], 0.0);
        for (int c = 0; c < 4; ++c) EXPECT_EQ(g[static_cast<size_t>(4 + c)], 0.0);
        for (double x : o) EXPECT_TRUE(std::isfinite(x));
        for (double x : g) EXPECT_TRUE(std::isfinite(x));
        if (p == 0.0) {
          const Tensor rows = out.select(2, 0);
          EXPECT_TRUE(all_close(rows, composite(q.detach(), k, v).select(2, 0), 1e-6, 1e-6));
        }
      }
    }
  }
}

TEST(ScaledDotProductAttention, NoKeysGiveZeros) {
  const Tensor out = F::scaled_dot_product_attention(input({2, 3, 4}, 1), empty({2, 0, 4}), empty({2, 0, 5}));
  EXPECT_TRUE(all_close(out, zeros({2, 3, 5})));
}

TEST(ScaledDotProductAttention, ExplicitScaleAndBroadcastHeads) {
  // One key/value head shared by four query heads (multi-query attention).
  const Tensor q = input({2, 4, 6, 8}, 1), k = input({2, 1, 7, 8}, 2), v = input({2, 1, 7, 8}, 3);
  const Tensor out = F::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, false, 0.5);
  const Tensor want = composite(q.mul(Scalar(0.5 * std::sqrt(8.0))), k.expand({2, 4, 7, 8}), v.expand({2, 4, 7, 8}));
  EXPECT_TRUE(all_close(out, want, 1e-5, 1e-6));
}

TEST(ScaledDotProductAttention, ReducedPrecisionComputesInFloat32) {
  const Tensor q = input({1, 2, 33, 16}, 1, kBFloat16), k = input({1, 2, 40, 16}, 2, kBFloat16),
               v = input({1, 2, 40, 16}, 3, kBFloat16);
  const Tensor out = F::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true);
  EXPECT_EQ(out.dtype(), kBFloat16);
  EXPECT_TRUE(all_close(out, composite(q, k, v, Tensor(), true), 1e-2, 1e-2));
  const auto [o16, lse] = op::flash_attention.call(q.to(kFloat16), k.to(kFloat16), v.to(kFloat16), std::nullopt,
                                                    false, std::nullopt);
  EXPECT_EQ(o16.dtype(), kFloat16);
  EXPECT_EQ(lse.dtype(), kFloat32);  // the saved logsumexp keeps float32
}

TEST(ScaledDotProductAttention, SameBitsOnOneAndTwoThreads) {
  const Tensor q = input({1, 2, 200, 24}, 1), k = input({1, 2, 190, 24}, 2), v = input({1, 2, 190, 24}, 3);
  const int saved = get_num_threads();
  set_num_threads(1);
  const Tensor a = F::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true);
  set_num_threads(2);
  const Tensor b = F::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true);
  set_num_threads(saved);
  EXPECT_TRUE(all_close(a, b, 0, 0));
}

// PyTorch's order is (q, k, v, attn_mask, dropout_p, is_causal, scale);
// dropout_p takes only floating values and is_causal only bools, so a call
// written for an order without dropout_p cannot bind silently.
template <class... Args>
concept AttentionCall = requires(Args... args) { F::scaled_dot_product_attention(args...); };
using Mask = std::optional<Tensor>;
static_assert(AttentionCall<Tensor, Tensor, Tensor, Mask, double, bool>);
static_assert(AttentionCall<Tensor, Tensor, Tensor, Mask, float, bool, double>);
static_assert(!AttentionCall<Tensor, Tensor, Tensor, Mask, bool>);          // (q, k, v, mask, true)
static_assert(!AttentionCall<Tensor, Tensor, Tensor, Mask, bool, double>);  // (q, k, v, mask, false, 0.5)
static_assert(!AttentionCall<Tensor, Tensor, Tensor, Mask, int, bool>);     // dropout_p = 0 (an int)
static_assert(!AttentionCall<Tensor, Tensor, Tensor, Mask, double, double>);  // is_causal = 0.0
static_assert(!AttentionCall<Tensor, Tensor, Tensor, Mask, double, int>);     // is_causal = 1

TEST(ScaledDotProductAttention, LibtorchPositionalCallIsCausal) {
  const Tensor q = input({2, 6, 8}, 1), k = input({2, 6, 8}, 2), v = input({2, 6, 5}, 3);
  // libtorch's positional call: no mask, dropout_p 0, is_causal true.
  const Tensor out = F::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
  EXPECT_TRUE(all_close(out, composite(q, k, v, Tensor(), true), 1e-4, 1e-5));
  EXPECT_FALSE(all_close(out, composite(q, k, v), 1e-4, 1e-5));
}

// With dropout the result is dropout(softmax(scores)) @ v with the default
// generator's next masks: the same composite, drawn from the same seed.
TEST(ScaledDotProductAttention, DropoutDropsAttentionProbabilities) {
  const Tensor q = input({2, 3, 7, 8}, 1), k = input({2, 3, 9, 8}, 2), v = input({2, 3, 9, 4}, 3);
  const Tensor bool_mask = input({7, 9}, 4).gt(Scalar(-1.0));
  const Tensor scores = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(8.0));
  struct Case {
    std::optional<Tensor> mask;
    bool causal;
    Tensor masked_scores;
  };
  const Tensor causal_blocked = ones({7, 9}, kBool).triu(1);
  const std::vector<Case> cases = {
      {std::nullopt, false, scores},
      {std::nullopt, true, scores.masked_fill(causal_blocked, Scalar(-kInf))},
      {bool_mask, false, scores.masked_fill(bool_mask.logical_not(), Scalar(-kInf))},
  };
  for (const Case& c : cases) {
    manual_seed(7);
    const Tensor out = F::scaled_dot_product_attention(q, k, v, c.mask, 0.25, c.causal);
    manual_seed(7);
    const Tensor want = F::dropout(F::softmax(c.masked_scores, -1), 0.25, true).matmul(v);
    EXPECT_TRUE(all_close(out, want, 1e-6, 1e-6));
    EXPECT_FALSE(all_close(out, F::scaled_dot_product_attention(q, k, v, c.mask, 0.0, c.causal), 1e-3, 1e-3));
  }
  EXPECT_TRUE(all_close(F::scaled_dot_product_attention(q, k, v, std::nullopt, 1.0), zeros({2, 3, 7, 4})));
}

TEST(ScaledDotProductAttention, DropoutIsDifferentiable) {
  const Tensor q = input({2, 5, 4}, 1).requires_grad_(), k = input({2, 6, 4}, 2).requires_grad_(),
               v = input({2, 6, 3}, 3).requires_grad_();
  manual_seed(3);
  F::scaled_dot_product_attention(q, k, v, std::nullopt, 0.5).sum().backward();
  for (const Tensor& t : {q, k, v}) {
    ASSERT_TRUE(t.grad().defined());
    EXPECT_GT(t.grad().abs().sum().item<double>(), 0.0);
  }
}

TEST(ScaledDotProductAttention, DropoutChecksItsArguments) {
  const Tensor q = input({2, 4, 8}, 1), k = input({2, 5, 8}, 2), v = input({2, 5, 6}, 3);
  const std::string op = "scaled_dot_product_attention";
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k, v, std::nullopt, 1.5), op.c_str(), "dropout_p",
                     "[0, 1]");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, input({2, 5, 7}, 4), v, std::nullopt, 0.1), op.c_str(),
                     "head dim");
  EXPECT_EMBER_ERROR(F::scaled_dot_product_attention(q, k, v, ones({4, 5}, kBool), 0.1, true), op.c_str(),
                     "is_causal and attn_mask");
}

}  // namespace
}  // namespace ember::testing
