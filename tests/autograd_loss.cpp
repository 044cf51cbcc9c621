// Second derivatives of the losses (the issue asks gradgradcheck for
// cross_entropy) and first derivatives of the composite losses, which have
// no op-info row of their own.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/gradcheck.h"
#include "ember/nn/functional/loss.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using autograd::gradcheck;
using autograd::gradgradcheck;

Tensor input(IntArrayRef sizes, uint64_t seed, double scale = 1.0) {
  Generator g(seed);
  return (randn(sizes, kFloat64, &g) * scale).requires_grad_();
}

Tensor probabilities(IntArrayRef sizes, uint64_t seed, int64_t dim) {
  Generator g(seed);
  const Tensor x = randn(sizes, kFloat64, &g);
  return (x - x.logsumexp({dim}, true)).exp();
}

TEST(CrossEntropyGrad, GradgradcheckClassIndices) {
  const Tensor x = input({4, 5}, 1);
  for (const char* reduction : {"mean", "sum", "none"}) {
    SCOPED_TRACE(reduction);
    auto fn = [&](const TensorList& in) {
      return TensorList{F::cross_entropy(in[0], tensor({1, 4, 0, 2}), std::nullopt, -100, reduction)};
    };
    const auto r = gradgradcheck(fn, {x});
    EXPECT_TRUE(r) << r.report;
  }
}

TEST(CrossEntropyGrad, GradgradcheckWeightsIgnoreIndexAndSmoothing) {
  const Tensor x = input({5, 4}, 2);
  const Tensor w = tensor({0.5, 1.5, 1.0, 2.0});
  auto fn = [&](const TensorList& in) {
    return TensorList{F::cross_entropy(in[0], tensor({3, -100, 0, 1, 3}), w, -100, "mean", 0.2)};
  };
  const auto r = gradgradcheck(fn, {x});
  EXPECT_TRUE(r) << r.report;
}

TEST(CrossEntropyGrad, GradgradcheckSpatialAndUnbatched) {
  const Tensor x = input({2, 3, 2, 2}, 3);
  const Tensor t = tensor({0, 2, 1, 1, 2, 0, 0, 1}).reshape({2, 2, 2});
  auto spatial = [&](const TensorList& in) {
    return TensorList{F::cross_entropy(in[0], t, std::nullopt, -100, "none", 0.1)};
  };
  const auto r1 = gradgradcheck(spatial, {x});
  EXPECT_TRUE(r1) << r1.report;
  auto unbatched = [&](const TensorList& in) { return TensorList{F::cross_entropy(in[0], tensor({2}).squeeze())}; };
  const auto r2 = gradgradcheck(unbatched, {input({6}, 4)});
  EXPECT_TRUE(r2) << r2.report;
}

TEST(CrossEntropyGrad, GradgradcheckProbabilityTargets) {
  const Tensor x = input({3, 4}, 5);
  const Tensor p = probabilities({3, 4}, 6, 1).requires_grad_();
  auto fn = [&](const TensorList& in) {
    return TensorList{F::cross_entropy(in[0], in[1], tensor({1.0, 0.5, 2.0, 1.5}), -100, "mean", 0.1)};
  };
  const auto r = gradgradcheck(fn, {x, p});
  EXPECT_TRUE(r) << r.report;
}

TEST(NllLossGrad, GradgradcheckThroughItsBackwardOp) {
  const Tensor x = input({4, 3}, 7);
  auto fn = [&](const TensorList& in) {
    return TensorList{F::nll_loss(in[0].tanh(), tensor({2, 0, -100, 1}), tensor({1.0, 2.0, 0.5}))};
  };
  const auto r = gradgradcheck(fn, {x});
  EXPECT_TRUE(r) << r.report;
}

TEST(EmbeddingGrad, GradgradcheckWithPadding) {
  const Tensor w = input({6, 3}, 8);
  auto fn = [&](const TensorList& in) { return TensorList{F::embedding(tensor({1, 5, 1, 0}), in[0], 0).tanh()}; };
  const auto r = gradgradcheck(fn, {w});
  EXPECT_TRUE(r) << r.report;
}

TEST(DropoutGrad, GradgradcheckWithAFixedGenerator) {
  const Tensor x = input({5, 7}, 9);
  auto fn = [&](const TensorList& in) {
    Generator g(3);  // the same mask on every call
    return TensorList{F::dropout(in[0], 0.4, true, &g).pow(2)};
  };
  const auto r = gradgradcheck(fn, {x});
  EXPECT_TRUE(r) << r.report;
}

TEST(CompositeLossGrad, GradcheckEveryReduction) {
  const Tensor x = input({3, 4}, 10), y = input({3, 4}, 11);
  for (const char* reduction : {"mean", "sum", "none"}) {
    SCOPED_TRACE(reduction);
    auto check = [&](const char* what, auto loss) {
      SCOPED_TRACE(what);
      auto fn = [&](const TensorList& in) { return TensorList{loss(in[0], in[1])}; };
      const auto r = gradgradcheck(fn, {x, y});
      EXPECT_TRUE(r) << r.report;
    };
    check("mse", [&](const Tensor& a, const Tensor& b) { return F::mse_loss(a, b, reduction); });
    check("l1", [&](const Tensor& a, const Tensor& b) { return F::l1_loss(a, b, reduction); });
    check("smooth_l1", [&](const Tensor& a, const Tensor& b) { return F::smooth_l1_loss(a, b, reduction, 0.7); });
    check("bce_with_logits", [&](const Tensor& a, const Tensor& b) {
      return F::binary_cross_entropy_with_logits(a, b.sigmoid(), tensor({1.0, 0.5, 2.0, 1.0}), reduction,
                                                 tensor({2.0, 1.0, 0.5, 3.0}));
    });
    check("kl_div", [&](const Tensor& a, const Tensor& b) { return F::kl_div(a, b.sigmoid(), reduction); });
    check("kl_div_log_target", [&](const Tensor& a, const Tensor& b) { return F::kl_div(a, b, reduction, true); });
  }
}

}  // namespace
}  // namespace ember::testing
