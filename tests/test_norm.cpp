// The norm family through ember::nn::functional: each bad input raises a
// clear ember::Error, and the special cases behave as in PyTorch.
//   NormErrors.*     one test per kind of bad argument
//   NormSemantics.*  running statistics, eval mode, eps defaults, extreme values
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/nn/functional/norm.h"
#include "ember/parallel.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor seeded(IntArrayRef sizes, uint64_t seed, DType t = kFloat32) {
  Generator g(seed);
  return randn(sizes, kFloat64, &g).to(t);
}

// ---- errors ----

TEST(NormErrors, NormalizedShapeMustMatchTheTrailingDims) {
  const Tensor x = seeded({2, 3}, 1);
  EXPECT_EMBER_ERROR(F::layer_norm(x, {4}), "layer_norm", "normalized_shape [4]", "[2, 3]");
  EXPECT_EMBER_ERROR(F::layer_norm(x, {2}), "layer_norm", "normalized_shape");
  EXPECT_EMBER_ERROR(F::layer_norm(x, {1, 2, 3}), "layer_norm", "normalized_shape");
  EXPECT_EMBER_ERROR(F::rms_norm(x, {4}), "rms_norm", "normalized_shape [4]");
  EXPECT_EMBER_ERROR(F::layer_norm(x, {}), "layer_norm", "at least one dim");
}

TEST(NormErrors, WeightAndBiasShapesAndDtypes) {
  const Tensor x = seeded({2, 4}, 2);
  EXPECT_EMBER_ERROR(F::layer_norm(x, {4}, seeded({3}, 3)), "layer_norm", "weight of shape [4]", "[3]");
  EXPECT_EMBER_ERROR(F::layer_norm(x, {4}, std::nullopt, seeded({4, 1}, 3)), "layer_norm", "bias of shape [4]");
  EXPECT_EMBER_ERROR(F::layer_norm(x, {4}, seeded({4}, 3, kFloat64)), "layer_norm", "weight of dtype float32");
  EXPECT_EMBER_ERROR(F::rms_norm(x, {4}, seeded({5}, 3)), "rms_norm", "weight of shape [4]");
  const Tensor xc = seeded({2, 6, 3}, 4);
  EXPECT_EMBER_ERROR(F::group_norm(xc, 3, seeded({5}, 5)), "group_norm", "weight of shape [6]");
  EXPECT_EMBER_ERROR(F::batch_norm(xc, std::nullopt, std::nullopt, seeded({6}, 5), seeded({2}, 5), true),
                     "batch_norm", "bias of shape [6]");
}

TEST(NormErrors, ChannelsNotDivisibleByGroups) {
  EXPECT_EMBER_ERROR(F::group_norm(seeded({2, 6, 3}, 6), 4), "group_norm", "channels (6)", "num_groups (4)");
  EXPECT_EMBER_ERROR(F::group_norm(seeded({2, 6, 3}, 6), 0), "group_norm", "num_groups > 0");
  EXPECT_EMBER_ERROR(F::group_norm(seeded({6}, 6), 1), "group_norm", "[N, C, *]");
}

TEST(NormErrors, RunningStatisticsOfTheWrongSize) {
  const Tensor x = seeded({4, 3, 2}, 7);
  EXPECT_EMBER_ERROR(F::batch_norm(x, zeros({4}), ones({3}), std::nullopt, std::nullopt, true), "batch_norm",
                     "running_mean of shape [3]", "[4]");
  EXPECT_EMBER_ERROR(F::batch_norm(x, zeros({3}), ones({2}), std::nullopt, std::nullopt, false), "batch_norm",
                     "running_var of shape [3]");
  EXPECT_EMBER_ERROR(F::batch_norm(x, std::nullopt, std::nullopt), "batch_norm",
                     "running_mean and running_var must be given");
}

TEST(NormErrors, TrainingBatchNormNeedsMoreThanOneValuePerChannel) {
  EXPECT_EMBER_ERROR(F::batch_norm(seeded({1, 5}, 8), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true),
                     "batch_norm", "Expected more than 1 value per channel when training", "[1, 5]");
  EXPECT_EMBER_ERROR(
      F::batch_norm(seeded({1, 5, 1, 1}, 8), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true),
      "Expected more than 1 value per channel when training");
  // Evaluation mode is fine with one value.
  EXPECT_NO_THROW(F::batch_norm(seeded({1, 5}, 8), zeros({5}), ones({5})));
}

TEST(NormErrors, DimOutOfRange) {
  const Tensor x = seeded({3, 4}, 9);
  EXPECT_EMBER_ERROR(F::softmax(x, 2), "softmax", "dim 2 is out of range");
  EXPECT_EMBER_ERROR(F::log_softmax(x, -3), "log_softmax", "dim -3 is out of range");
}

TEST(NormErrors, IntegerInputsNeedAFloatingDtype) {
  const Tensor ids = arange(6, kInt64).reshape({2, 3});
  EXPECT_EMBER_ERROR(F::softmax(ids, 1), "softmax", "int64");
  EXPECT_TRUE(all_close(F::softmax(ids, 1, kFloat32), F::softmax(ids.to(kFloat32), 1)));
  EXPECT_EMBER_ERROR(F::layer_norm(ids, {3}), "layer_norm", "int64");
}

// ---- semantics ----

TEST(NormSemantics, SoftmaxIsStableForLargeValuesAndNaNForAllMinusInfRows) {
  const Tensor x = tensor({1000.0, 1001.0, -kInf, -kInf, -kInf, -kInf}, kFloat64).reshape({2, 3});
  const std::vector<double> p = values(F::softmax(x, 1));
  EXPECT_NEAR(p[0], 1 / (1 + std::exp(1.0)), 1e-15);
  EXPECT_EQ(p[2], 0.0);
  for (int k = 3; k < 6; ++k) EXPECT_TRUE(std::isnan(p[k])) << k;
  const std::vector<double> l = values(F::log_softmax(x, 1));
  EXPECT_EQ(l[2], -kInf);
  EXPECT_TRUE(std::isnan(l[3]));
}

TEST(NormSemantics, SoftmaxDtypeConvertsFirst) {
  const Tensor x = seeded({3, 5}, 10, kBFloat16);
  const Tensor y = F::softmax(x, 0, kFloat32);
  EXPECT_EQ(y.dtype(), kFloat32);
  EXPECT_TRUE(all_close(y, F::softmax(x.to(kFloat32), 0)));
}

TEST(NormSemantics, TrainingBatchNormUpdatesRunningStatisticsWithTheUnbiasedVariance) {
  const Tensor x = seeded({4, 2, 3}, 11, kFloat64);
  Tensor rm = full({2}, 0.5, kFloat64), rv = full({2}, 2.0, kFloat64);
  const uint32_t version = rm._version();
  const Tensor y = F::batch_norm(x, rm, rv, std::nullopt, std::nullopt, true, 0.25);
  EXPECT_GT(rm._version(), version);
  const Tensor batch_mean = x.mean({0, 2}), batch_var = x.var({0, 2}, /*correction=*/1);
  EXPECT_TRUE(all_close(rm, batch_mean * 0.25 + 0.5 * 0.75, 1e-12));
  EXPECT_TRUE(all_close(rv, batch_var * 0.25 + 2.0 * 0.75, 1e-12));
  // The output uses the biased variance.
  const Tensor expected = (x - x.mean({0, 2}, true)) / (x.var({0, 2}, 0, true) + 1e-5).sqrt();
  EXPECT_TRUE(all_close(y, expected, 1e-12));
}

TEST(NormSemantics, EvalBatchNormUsesTheRunningStatisticsAndLeavesThem) {
  const Tensor x = seeded({3, 2}, 12, kFloat64);
  const Tensor rm = tensor({1.0, -1.0}, kFloat64), rv = tensor({4.0, 0.25}, kFloat64);
  const Tensor w = tensor({2.0, 3.0}, kFloat64), b = tensor({0.5, -0.5}, kFloat64);
  const Tensor y = F::batch_norm(x, rm, rv, w, b);
  EXPECT_TRUE(all_close(y, (x - rm) / (rv + 1e-5).sqrt() * w + b, 1e-12));
  EXPECT_TRUE(all_close(rm, tensor({1.0, -1.0}, kFloat64)));
}

TEST(NormSemantics, RmsNormEpsDefaultsToTheMachineEpsilon) {
  const Tensor x = zeros({2, 3}, kFloat32).add(tensor({1e-4f, 0.0f, 0.0f}));
  const Tensor y = F::rms_norm(x, {3});
  const double ms = 1e-8 / 3;
  EXPECT_NEAR(values(y)[0], 1e-4 / std::sqrt(ms + 0x1p-23), 1e-4);
  EXPECT_TRUE(all_close(F::rms_norm(x, {3}, std::nullopt, 1e-6), x / (x * x).mean({1}, true).add(1e-6).sqrt()));
}

TEST(NormSemantics, ConstantRowsGiveTheBias) {
  const Tensor x = full({3, 4}, 2.5, kFloat32);
  const Tensor b = tensor({1.0f, 2.0f, 3.0f, 4.0f});
  EXPECT_TRUE(all_close(F::layer_norm(x, {4}, ones({4}), b), b.expand({3, 4})));
}

TEST(NormSemantics, LongGroupsStayAccurateInFloat32) {
  // One million values per channel, offset far from 0: the two-pass, blocked sums keep the variance right.
  const Tensor x = seeded({1000, 2, 1000}, 13, kFloat64) + 1000.0;
  const Tensor y32 = F::batch_norm(x.to(kFloat32), std::nullopt, std::nullopt, std::nullopt, std::nullopt, true);
  const Tensor y64 = F::batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true);
  EXPECT_TRUE(all_close(y32, y64.to(kFloat32), 1e-3, 1e-3));
}

TEST(NormSemantics, BatchNormRunningStatisticsDoNotDependOnTheThreadCount) {
  const Tensor x = seeded({64, 8, 30}, 14);
  Tensor a = zeros({8}), b = zeros({8});
  const int saved = get_num_threads();
  set_num_threads(1);
  F::batch_norm(x, a, ones({8}), std::nullopt, std::nullopt, true);
  set_num_threads(2);
  F::batch_norm(x, b, ones({8}), std::nullopt, std::nullopt, true);
  set_num_threads(saved);
  EXPECT_EQ(values(a), values(b));
}

}  // namespace
}  // namespace ember::testing
