// The loss family's behaviour beyond the op-info table and the golden files:
// each bad input's error, PyTorch's special cases, dropout's mask.
#include <gtest/gtest.h>

#include <cmath>

#include "core/op_decls_loss.h"
#include "ember/ember.h"
#include "ember/nn/functional/loss.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

Tensor logits(IntArrayRef sizes, uint64_t seed = 1) {
  Generator g(seed);
  return randn(sizes, kFloat32, &g);
}

Tensor log_softmax_rows(const Tensor& x) { return x - x.logsumexp({1}, true); }

// ---- bad input ----

TEST(CrossEntropy, RejectsOutOfRangeClassIndices) {
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0, 4, 1})), "cross_entropy_loss", "target 4",
                     "out of bounds for 4 classes");
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0, -2, 1})), "target -2", "out of bounds");
}

TEST(CrossEntropy, IgnoreIndexIsExemptFromTheRangeCheck) {
  const Tensor loss = F::cross_entropy(logits({3, 4}), tensor({0, 7, 1}), std::nullopt, /*ignore_index=*/7);
  EXPECT_TRUE(std::isfinite(loss.item<float>()));
}

TEST(CrossEntropy, RejectsATargetOfTheWrongShape) {
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0, 1})), "cross_entropy_loss", "[3, 4]",
                     "expects a target of shape (N, d...)", "[2]");
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({2, 4, 5}), tensor({0, 1})), "expects a target of shape");
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({4}), tensor({1})), "expects a 0-d target");
}

TEST(CrossEntropy, RejectsAWeightOfTheWrongSize) {
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0, 1, 2}), ones({5})), "cross_entropy_loss",
                     "weight of shape [4]", "one per class", "[5]");
}

TEST(CrossEntropy, RejectsNonIntegerClassTargets) {
  // A floating target of another shape than the input is neither indices nor probabilities.
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0.0f, 1.0f, 2.0f})), "expected int64 class indices",
                     "float32");
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0, 1, 2}).to(kInt32)), "expected int64 class indices",
                     "int32");
}

TEST(CrossEntropy, RejectsAnUnknownReduction) {
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0, 1, 2}), std::nullopt, -100, "average"),
                     "cross_entropy", "unknown reduction 'average'", "'none', 'mean' or 'sum'");
}

TEST(CrossEntropy, RejectsLabelSmoothingOutsideZeroToOne) {
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), tensor({0, 1, 2}), std::nullopt, -100, "mean", -0.1),
                     "label_smoothing must be in [0, 1]");
}

TEST(CrossEntropy, ProbabilityTargetsRefuseIgnoreIndex) {
  const Tensor p = log_softmax_rows(logits({3, 4}, 2)).exp();
  EXPECT_EMBER_ERROR(F::cross_entropy(logits({3, 4}), p, std::nullopt, 0), "ignore_index is not supported");
}

TEST(CrossEntropy, BoxedCallsRaiseTheSameErrors) {
  const OpEntry* op = Dispatcher::instance().find("cross_entropy_loss");
  ASSERT_NE(op, nullptr);
  Stack stack = {IValue::Payload(logits({2, 3})), IValue::Payload(tensor({0, 3})), IValue(),
                 IValue::Payload(std::string("mean")), IValue::Payload(int64_t{-100}), IValue::Payload(0.0)};
  EXPECT_EMBER_ERROR(Dispatcher::call_boxed(*op, Dispatcher::boxed_key_set(stack), stack), "out of bounds");
}

// ---- PyTorch's special cases ----

TEST(CrossEntropy, AllTargetsIgnoredGivesNaNForMeanAndZeroForSum) {
  const Tensor x = logits({3, 4});
  const Tensor t = tensor({-100, -100, -100});
  EXPECT_TRUE(std::isnan(F::cross_entropy(x, t).item<float>()));
  EXPECT_EQ(F::cross_entropy(x, t, std::nullopt, -100, "sum").item<float>(), 0.0f);
  EXPECT_TRUE(std::isnan(F::nll_loss(x, t).item<float>()));
}

TEST(CrossEntropy, IgnoredRowsGetZeroGradient) {
  const Tensor x = logits({3, 4}).requires_grad_();
  F::cross_entropy(x, tensor({1, -100, 2})).backward();
  for (double v : values(x.grad().select(0, 1))) EXPECT_EQ(v, 0.0);
}

TEST(CrossEntropy, FusedAndRecordedBackwardsAgree) {
  // The plain backward runs the fused kernel; under create_graph the formula
  // is written with differentiable ops. Both give the same gradient.
  const Tensor x = logits({5, 7, 3}).to(kFloat64).requires_grad_();
  const Tensor t = tensor({0, 6, -100, 3, 3, 1, 2, 5, 4, 0, 1, 1, 6, 2, 0}).reshape({5, 3});
  const Tensor w = rand({7}, kFloat64) + 0.5;
  const Tensor loss = F::cross_entropy(x, t, w, -100, "mean", 0.3);
  const Tensor fused = autograd::grad({loss}, {x}, {}, true, false)[0];
  const Tensor recorded = autograd::grad({loss}, {x}, {}, true, true)[0];
  EXPECT_TRUE(all_close(fused, recorded, 1e-12, 1e-14));
}

TEST(CrossEntropy, UnbatchedInputGivesA0dLoss) {
  const Tensor x = logits({5});
  EXPECT_EQ(F::cross_entropy(x, tensor({2}).squeeze(), std::nullopt, -100, "none").dim(), 0);
  const Tensor batched = F::cross_entropy(x.unsqueeze(0), tensor({2}));
  EXPECT_EQ(F::cross_entropy(x, tensor({2}).squeeze()).item<float>(), batched.item<float>());
}

TEST(CrossEntropy, ClassWeightsGetNoGradient) {
  const Tensor w = ones({4}).requires_grad_();
  const Tensor loss = F::cross_entropy(logits({3, 4}), tensor({0, 1, 2}), w);
  EXPECT_EMBER_ERROR(loss.backward(), "derivative for 'weight' is not implemented");
}

TEST(NllLoss, RejectsOutOfRangeClassIndicesAndBadWeights) {
  EXPECT_EMBER_ERROR(F::nll_loss(logits({2, 3}), tensor({3, 0})), "nll_loss", "target 3", "out of bounds");
  EXPECT_EMBER_ERROR(F::nll_loss(logits({2, 3}), tensor({1, 0}), ones({2})), "nll_loss", "one per class");
  EXPECT_EMBER_ERROR(F::nll_loss(logits({2, 3}), tensor({1, 0}), std::nullopt, -100, "max"), "unknown reduction");
}

TEST(ElementwiseLosses, RejectATargetOfAnotherShape) {
  const Tensor x = logits({3, 4}), y = logits({4, 3});
  EXPECT_EMBER_ERROR(F::mse_loss(x, y), "mse_loss", "target of the input's shape [3, 4]", "[4, 3]");
  EXPECT_EMBER_ERROR(F::l1_loss(x, y), "l1_loss", "input's shape");
  EXPECT_EMBER_ERROR(F::smooth_l1_loss(x, y), "smooth_l1_loss", "input's shape");
  EXPECT_EMBER_ERROR(F::binary_cross_entropy_with_logits(x, y), "binary_cross_entropy_with_logits", "input's shape");
  EXPECT_EMBER_ERROR(F::kl_div(x, y), "kl_div", "input's shape");
}

TEST(ElementwiseLosses, RejectAnUnknownReduction) {
  const Tensor x = logits({3}), y = logits({3}, 2);
  EXPECT_EMBER_ERROR(F::mse_loss(x, y, "avg"), "mse_loss", "unknown reduction 'avg'");
  EXPECT_EMBER_ERROR(F::l1_loss(x, y, "avg"), "l1_loss", "unknown reduction");
  EXPECT_EMBER_ERROR(F::smooth_l1_loss(x, y, "avg"), "smooth_l1_loss", "unknown reduction");
  EXPECT_EMBER_ERROR(F::binary_cross_entropy_with_logits(x, y, std::nullopt, "avg"), "unknown reduction");
  EXPECT_EMBER_ERROR(F::kl_div(x, y, "batchsum"), "kl_div", "unknown reduction");
  EXPECT_EMBER_ERROR(F::smooth_l1_loss(x, y, "mean", -1.0), "beta must be >= 0");
}

TEST(ElementwiseLosses, BceWithLogitsIsStableForLargeLogits) {
  const Tensor x = tensor({-200.0f, 200.0f, 0.0f});
  const Tensor y = tensor({1.0f, 0.0f, 1.0f});
  const std::vector<double> l = values(F::binary_cross_entropy_with_logits(x, y, std::nullopt, "none"));
  EXPECT_FLOAT_EQ(l[0], 200.0f);
  EXPECT_FLOAT_EQ(l[1], 200.0f);
  EXPECT_FLOAT_EQ(l[2], std::log(2.0f));
}

TEST(ElementwiseLosses, KlDivBatchmeanDividesByTheBatchSize) {
  const Tensor x = log_softmax_rows(logits({4, 5})), y = log_softmax_rows(logits({4, 5}, 3)).exp();
  EXPECT_FLOAT_EQ(F::kl_div(x, y, "batchmean").item<float>(), F::kl_div(x, y, "sum").item<float>() / 4);
}

// ---- embedding ----

TEST(Embedding, RejectsIdsOutOfRange) {
  const Tensor w = logits({5, 3});
  EXPECT_EMBER_ERROR(F::embedding(tensor({0, 5}), w), "embedding", "index 5", "out of range", "5 rows");
  EXPECT_EMBER_ERROR(F::embedding(tensor({-1}), w), "index -1", "out of range");
  EXPECT_EMBER_ERROR(F::embedding(tensor({0.5f}), w), "embedding", "int64 or int32 indices");
  EXPECT_EMBER_ERROR(F::embedding(tensor({0}), w, 5), "padding_idx 5 must be within num_embeddings");
  EXPECT_EMBER_ERROR(F::embedding(tensor({0}), w, -6), "padding_idx -6");
}

TEST(Embedding, PaddingRowGetsNoGradient) {
  const Tensor w = logits({5, 3}).requires_grad_();
  const Tensor out = F::embedding(tensor({1, 4, 1, 2}), w, -1);  // -1 is row 4
  EXPECT_TRUE(all_close(out.select(0, 1), w.select(0, 4).detach()));  // the forward still reads it
  out.sum().backward();
  EXPECT_EQ(values(w.grad().select(0, 1)), std::vector<double>(3, 2.0));
  EXPECT_EQ(values(w.grad().select(0, 4)), std::vector<double>(3, 0.0));
  EXPECT_EQ(values(w.grad().select(0, 0)), std::vector<double>(3, 0.0));
}

TEST(Embedding, BackwardIsTheSameOnOneAndTwoThreads) {
  Generator g(4);
  const Tensor grad = randn({8192, 64}, kFloat32, &g);
  const Tensor ids = randint(0, 300, {8192}, kInt64, &g);
  const int before = get_num_threads();
  set_num_threads(1);
  const Tensor one = op::embedding_backward.call(grad, ids, 300, std::nullopt);
  set_num_threads(2);
  const Tensor two = op::embedding_backward.call(grad, ids, 300, std::nullopt);
  set_num_threads(before);
  EXPECT_EQ(values(one), values(two));
}

// ---- dropout ----

TEST(Dropout, RejectsPOutsideZeroToOne) {
  EXPECT_EMBER_ERROR(F::dropout(ones({3}), 1.5), "dropout probability has to be between 0 and 1, but got 1.5");
  EXPECT_EMBER_ERROR(F::dropout(ones({3}), -0.5, /*training=*/false), "between 0 and 1");
}

TEST(Dropout, EvalModeAndPZeroReturnTheInput) {
  const Tensor x = logits({4, 4});
  EXPECT_TRUE(F::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(F::dropout(x, 0.0, true).is_same(x));
}

TEST(Dropout, POneGivesZeros) {
  EXPECT_EQ(values(F::dropout(ones({6}), 1.0)), std::vector<double>(6, 0.0));
}

TEST(Dropout, KeepsAboutOneMinusPAndScalesTheRest) {
  Generator g(11);
  const Tensor out = F::dropout(ones({100000}), 0.3, true, &g);
  int64_t kept = 0;
  for (double v : values(out)) {
    if (v != 0) {
      ++kept;
      EXPECT_FLOAT_EQ(static_cast<float>(v), 1.0f / 0.7f);
    }
  }
  EXPECT_NEAR(static_cast<double>(kept) / 100000.0, 0.7, 0.01);
}

TEST(Dropout, SameSeedSameMaskOnAnyThreadCountAndDtype) {
  const Tensor x = ones({1000, 77});
  const int before = get_num_threads();
  set_num_threads(1);
  Generator a(5);
  const Tensor one = F::dropout(x, 0.4, true, &a);
  set_num_threads(2);
  Generator b(5);
  const Tensor two = F::dropout(x, 0.4, true, &b);
  Generator c(5);
  const Tensor half = F::dropout(x.to(kBFloat16), 0.4, true, &c);
  set_num_threads(before);
  EXPECT_EQ(values(one), values(two));
  EXPECT_EQ(values(one.ne(0)), values(half.ne(0)));
  Generator d(6);
  EXPECT_NE(values(one), values(F::dropout(x, 0.4, true, &d)));
  // The generator moved on: a second call draws a new mask.
  EXPECT_NE(values(one), values(F::dropout(x, 0.4, true, &a)));
}

TEST(Dropout, BackwardUsesTheForwardMask) {
  const Tensor x = logits({50, 40}).requires_grad_();
  const Tensor y = F::dropout(x, 0.25);
  y.sum().backward();
  const std::vector<double> out = values(y), grad = values(x.grad());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_FLOAT_EQ(static_cast<float>(grad[i]), out[i] == 0 ? 0.0f : 1.0f / 0.75f);
  }
}

// ---- linear ----

TEST(Linear, ForwardsToEmberLinear) {
  const Tensor x = logits({3, 5}), w = logits({4, 5}, 2), b = logits({4}, 3);
  EXPECT_TRUE(all_close(F::linear(x, w, b), x.matmul(w.t()) + b));
  EXPECT_TRUE(all_close(F::linear(x, w), x.matmul(w.t())));
}

}  // namespace
}  // namespace ember::testing
