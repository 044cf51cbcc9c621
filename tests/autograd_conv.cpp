// Gradients of conv1d, conv2d and conv_transpose2d: gradcheck, and
// gradgradcheck (required for conv2d by issue 4), on shapes with bias, odd
// kernels, stride, padding, dilation and groups. The op-info table also
// gradchecks every Float64 sample of `convolution` and `convolution_backward`.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/nn/functional/conv.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using autograd::gradcheck;
using autograd::GradcheckResult;
using autograd::gradgradcheck;

Tensor leaf(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, kFloat64, &g).requires_grad_();
}

TEST(ConvAutograd, Conv2dGradcheckWithBias) {
  const TensorList in = {leaf({2, 3, 5, 4}, 1), leaf({4, 3, 3, 2}, 2), leaf({4}, 3)};
  const GradcheckResult r = gradcheck(
      [](const TensorList& t) {
        return TensorList{F::conv2d(t[0], t[1], t[2], {2, 1}, {1, 2}, 1, 1)};
      },
      in);
  EXPECT_TRUE(r) << r.report;
}

TEST(ConvAutograd, Conv2dGradgradcheckWithBias) {
  const TensorList in = {leaf({2, 2, 4, 4}, 4), leaf({3, 2, 3, 3}, 5), leaf({3}, 6)};
  const GradcheckResult r =
      gradgradcheck([](const TensorList& t) { return TensorList{F::conv2d(t[0], t[1], t[2], 1, 1)}; }, in);
  EXPECT_TRUE(r) << r.report;
}

TEST(ConvAutograd, Conv2dGradgradcheckStridedDilatedGroups) {
  const TensorList in = {leaf({1, 4, 6, 5}, 7), leaf({2, 2, 2, 3}, 8)};
  const GradcheckResult r = gradgradcheck(
      [](const TensorList& t) {
        return TensorList{F::conv2d(t[0], t[1], std::nullopt, {2, 1}, {2, 1}, {2, 1}, 2)};
      },
      in);
  EXPECT_TRUE(r) << r.report;
}

TEST(ConvAutograd, Conv2dGradgradcheckSameEvenKernel) {
  const TensorList in = {leaf({1, 2, 4, 5}, 9), leaf({2, 2, 2, 2}, 10), leaf({2}, 11)};
  const GradcheckResult r =
      gradgradcheck([](const TensorList& t) { return TensorList{F::conv2d(t[0], t[1], t[2], 1, "same")}; }, in);
  EXPECT_TRUE(r) << r.report;
}

TEST(ConvAutograd, Conv1dGradgradcheck) {
  const TensorList in = {leaf({2, 3, 7}, 12), leaf({2, 3, 3}, 13), leaf({2}, 14)};
  const GradcheckResult r =
      gradgradcheck([](const TensorList& t) { return TensorList{F::conv1d(t[0], t[1], t[2], 2, 1, 1)}; }, in);
  EXPECT_TRUE(r) << r.report;
}

TEST(ConvAutograd, ConvTranspose2dGradgradcheck) {
  const TensorList in = {leaf({1, 4, 3, 3}, 15), leaf({4, 1, 3, 2}, 16), leaf({2}, 17)};
  const GradcheckResult r = gradgradcheck(
      [](const TensorList& t) {
        return TensorList{F::conv_transpose2d(t[0], t[1], t[2], {2, 1}, {1, 0}, {1, 0}, 2, 1)};
      },
      in);
  EXPECT_TRUE(r) << r.report;
}

// A gradient that flows only into the weight (the input is a constant) and one
// only into the input: the masked-out results of convolution_backward are not used.
TEST(ConvAutograd, GradientOfOneArgumentOnly) {
  const Tensor x = leaf({1, 2, 4, 4}, 18).detach(), w = leaf({3, 2, 3, 3}, 19);
  EXPECT_TRUE(gradcheck([&](const TensorList& t) { return TensorList{F::conv2d(x, t[0])}; }, {w}));
  const Tensor x2 = leaf({1, 2, 4, 4}, 20), w2 = leaf({3, 2, 3, 3}, 21).detach();
  EXPECT_TRUE(
      gradgradcheck([&](const TensorList& t) { return TensorList{F::conv2d(t[0], w2, std::nullopt, 1, 1)}; }, {x2}));
}

}  // namespace
}  // namespace ember::testing
