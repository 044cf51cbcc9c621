// nn::init: gains, fans, and the statistics of each initialiser.
#include <cmath>

#include "ember/nn.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;
namespace init = ember::nn::init;

double mean_of(const Tensor& t) { return t.to(kFloat64).mean().item<double>(); }
double std_of(const Tensor& t) { return t.to(kFloat64).std().item<double>(); }
double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }

TEST(NnInit, CalculateGainMatchesPyTorch) {
  EXPECT_EQ(init::calculate_gain("linear"), 1.0);
  EXPECT_EQ(init::calculate_gain("conv2d"), 1.0);
  EXPECT_EQ(init::calculate_gain("sigmoid"), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("tanh"), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain("relu"), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu"), std::sqrt(2.0 / (1 + 0.01 * 0.01)));
  EXPECT_DOUBLE_EQ(init::calculate_gain("leaky_relu", std::sqrt(5.0)), std::sqrt(1.0 / 3.0));
  EXPECT_EQ(init::calculate_gain("selu"), 0.75);
  EXPECT_EMBER_ERROR(init::calculate_gain("swish"), "calculate_gain", "'swish'");
}

TEST(NnInit, FansCountTheReceptiveField) {
  using Fans = std::pair<int64_t, int64_t>;
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(empty({10, 20})), Fans(20, 10));
  EXPECT_EQ(init::calculate_fan_in_and_fan_out(empty({8, 3, 5, 5})), Fans(75, 200));
  EXPECT_EMBER_ERROR(init::calculate_fan_in_and_fan_out(empty({10})), "at least 2 dims", "[10]");
}

TEST(NnInit, UniformAndNormalHaveTheRequestedMoments) {
  Tensor t = empty({1 << 20});
  init::uniform_(t, -1.0, 3.0);
  EXPECT_NEAR(mean_of(t), 1.0, 0.01);
  EXPECT_NEAR(std_of(t), 4.0 / std::sqrt(12.0), 0.01);
  EXPECT_GE(t.min().item<double>(), -1.0);
  EXPECT_LT(t.max().item<double>(), 3.0);
  init::normal_(t, 2.0, 0.5);
  EXPECT_NEAR(mean_of(t), 2.0, 0.005);
  EXPECT_NEAR(std_of(t), 0.5, 0.005);
}

TEST(NnInit, ConstantZerosOnes) {
  Tensor t = empty({2, 3});
  EXPECT_EQ(values(init::constant_(t, 0.25)), std::vector<double>(6, 0.25));
  EXPECT_EQ(values(init::zeros_(t)), std::vector<double>(6, 0.0));
  EXPECT_EQ(values(init::ones_(t)), std::vector<double>(6, 1.0));
  init::zeros_(t.select(0, 1));  // works on a view, in place
  EXPECT_EQ(values(t), (std::vector<double>{1, 1, 1, 0, 0, 0}));
}

TEST(NnInit, KaimingUniformBoundIsExact) {
  // fan_in = 64 * 3 * 3 = 576; gain(leaky_relu, a = sqrt(5)) = sqrt(1/3);
  // bound = sqrt(3) * gain / sqrt(fan_in) = 1 / sqrt(576) = 1/24.
  Tensor w = empty({128, 64, 3, 3});
  init::kaiming_uniform_(w, std::sqrt(5.0));
  EXPECT_LE(max_abs(w), 1.0 / 24.0);
  EXPECT_GT(max_abs(w), 0.999 / 24.0);
  // relu, fan_out = 128 * 9: bound = sqrt(3) * sqrt(2) / sqrt(1152) = sqrt(6/1152).
  init::kaiming_uniform_(w, 0.0, "fan_out", "relu");
  EXPECT_LE(max_abs(w), std::sqrt(6.0 / 1152.0));
  EXPECT_GT(max_abs(w), 0.999 * std::sqrt(6.0 / 1152.0));
  EXPECT_EMBER_ERROR(init::kaiming_uniform_(w, 0.0, "fan_avg"), "kaiming_uniform_", "'fan_avg'");
}

TEST(NnInit, KaimingNormalAndXavierHaveTheirStd) {
  Tensor w = empty({1024, 512});
  init::kaiming_normal_(w, 0.0, "fan_in", "relu");
  EXPECT_NEAR(std_of(w), std::sqrt(2.0 / 512.0), 0.01 * std::sqrt(2.0 / 512.0));
  EXPECT_NEAR(mean_of(w), 0.0, 0.001);
  init::xavier_normal_(w, 2.0);
  const double xavier_std = 2.0 * std::sqrt(2.0 / (1024 + 512));
  EXPECT_NEAR(std_of(w), xavier_std, 0.01 * xavier_std);
  init::xavier_uniform_(w);
  const double bound = std::sqrt(6.0 / (1024 + 512));
  EXPECT_LE(max_abs(w), bound);
  EXPECT_GT(max_abs(w), 0.999 * bound);
}

TEST(NnInit, TruncNormalStaysInRangeWithTheTruncatedMoments) {
  Tensor t = empty({1 << 20});
  init::trunc_normal_(t);  // N(0, 1) restricted to [-2, 2]
  EXPECT_GE(t.min().item<double>(), -2.0);
  EXPECT_LE(t.max().item<double>(), 2.0);
  EXPECT_NEAR(mean_of(t), 0.0, 0.005);
  // Var = 1 - 2 b phi(b) / (2 Phi(b) - 1) with b = 2.
  const double phi = std::exp(-2.0) / std::sqrt(2.0 * M_PI);
  const double mass = std::erf(2.0 / std::sqrt(2.0));
  EXPECT_NEAR(std_of(t), std::sqrt(1.0 - 4.0 * phi / mass), 0.005);
  // One-sided: [0, 10] gives the half-normal, mean std * sqrt(2 / pi).
  init::trunc_normal_(t, 0.0, 0.02, 0.0, 10.0);
  EXPECT_GE(t.min().item<double>(), 0.0);
  EXPECT_NEAR(mean_of(t), 0.02 * std::sqrt(2.0 / M_PI), 0.0002);
  EXPECT_EMBER_ERROR(init::trunc_normal_(t, 0.0, 1.0, 1.0, -1.0), "trunc_normal_", "a < b");
}

TEST(NnInit, WorksOnParametersThatRequireGradAndRecordsNothing) {
  Tensor w = empty({4, 4}).requires_grad_();
  init::kaiming_uniform_(w);
  init::trunc_normal_(w, 0.0, 0.02);
  EXPECT_TRUE(w.is_leaf());
  EXPECT_FALSE(w.grad_fn());
  EXPECT_TRUE(w.requires_grad());
}

TEST(NnInit, AGeneratorGivesReproducibleValues) {
  Generator a(123), b(123);
  Tensor x = empty({16}), y = empty({16});
  init::xavier_uniform_(x.view({4, 4}), 1.0, &a);
  init::xavier_uniform_(y.view({4, 4}), 1.0, &b);
  EXPECT_TRUE(all_close(x, y, 0, 0));
  init::trunc_normal_(x, 0, 1, -2, 2, &a);
  init::trunc_normal_(y, 0, 1, -2, 2, &b);
  EXPECT_TRUE(all_close(x, y, 0, 0));
}

}  // namespace
}  // namespace ember
