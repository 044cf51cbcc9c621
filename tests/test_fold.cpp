// F::unfold and F::fold (ember/nn/functional/fold.h) and the Unfold / Fold
// layers: the column layout, fold as unfold's adjoint, fold(unfold(x)) as x
// times the blocks covering each element, unbatched inputs, gradients, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "ember/nn/functional.h"
#include "ember/nn/modules/fold.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;

Tensor seeded(IntArrayRef sizes, uint64_t seed, DType t = kFloat32) {
  Generator g(seed);
  return randn(sizes, t, &g);
}

TEST(Fold, UnfoldColumnsAreTheSlidingBlocks) {
  const Tensor x = arange(12, TensorOptions(kFloat32)).view({1, 1, 3, 4});
  const Tensor cols = F::unfold(x, 2);  // blocks at (0, 0), (0, 1), (0, 2), (1, 0), ...
  EXPECT_EQ(cols.sizes(), IntArrayRef({1, 4, 6}));
  // Row (i, j) holds x[h + i, w + j] for the blocks in row-major order.
  EXPECT_TRUE(all_close(cols[0][0], tensor({0.f, 1.f, 2.f, 4.f, 5.f, 6.f}), 0, 0));
  EXPECT_TRUE(all_close(cols[0][3], tensor({5.f, 6.f, 7.f, 9.f, 10.f, 11.f}), 0, 0));
  // Padding reads zeros; stride and dilation pick the blocks and taps.
  const Tensor padded = F::unfold(x, {2, 2}, /*dilation=*/{1, 2}, /*padding=*/1, /*stride=*/2);
  EXPECT_EQ(padded.sizes(), IntArrayRef({1, 4, 4}));  // (3 + 2 - 2) / 2 + 1 = 2, (4 + 2 - 3) / 2 + 1 = 2
  EXPECT_TRUE(all_close(padded[0][0], tensor({0.f, 0.f, 0.f, 5.f}), 0, 0));
}

// <unfold(x), c> == <x, fold(c)> for any x, c: fold is unfold's adjoint.
TEST(Fold, FoldIsTheAdjointOfUnfold) {
  const Tensor x = seeded({2, 3, 7, 6}, 1, kFloat64);
  const Tensor cols = F::unfold(x, {3, 2}, {2, 1}, {1, 2}, {2, 3});
  const Tensor c = seeded(cols.sizes(), 2, kFloat64);
  const double lhs = (cols * c).sum().item<double>();
  const double rhs = (x * F::fold(c, {7, 6}, {3, 2}, {2, 1}, {1, 2}, {2, 3})).sum().item<double>();
  EXPECT_NEAR(lhs, rhs, 1e-10 * std::abs(lhs) + 1e-10);
}

TEST(Fold, FoldOfUnfoldCountsTheCoveringBlocks) {
  const Tensor x = seeded({2, 3, 5, 6}, 3);
  const Tensor ones_image = ones({1, 1, 5, 6});
  const Tensor count = F::fold(F::unfold(ones_image, 3, 1, 1), {5, 6}, 3, 1, 1);
  EXPECT_TRUE(all_close(F::fold(F::unfold(x, 3, 1, 1), {5, 6}, 3, 1, 1), x * count, 1e-5, 1e-5));
  EXPECT_EQ(count[0][0][2][2].item<float>(), 9.0f);  // an interior element lies in 9 blocks
  EXPECT_EQ(count[0][0][0][0].item<float>(), 4.0f);  // a corner in 4
}

TEST(Fold, UnbatchedInputsAndLayers) {
  const Tensor x = seeded({3, 5, 6}, 4);
  nn::Unfold unfold(nn::UnfoldOptions({2, 3}).padding(1).stride(2));
  nn::Fold fold(nn::FoldOptions({5, 6}, {2, 3}).padding(1).stride(2));
  const Tensor cols = unfold(x);
  EXPECT_EQ(cols.sizes(), IntArrayRef({18, 9}));  // 3 * 2 * 3 rows; (5 + 2 - 2) / 2 + 1 = 3 by (6 + 2 - 3) / 2 + 1 = 3
  EXPECT_TRUE(all_close(cols, F::unfold(x.unsqueeze(0), {2, 3}, 1, 1, 2)[0], 0, 0));
  EXPECT_TRUE(all_close(fold(cols), F::fold(cols.unsqueeze(0), {5, 6}, {2, 3}, 1, 1, 2)[0], 0, 0));
  std::ostringstream os;
  fold->pretty_print(os);
  EXPECT_EQ(os.str(), "Fold(output_size=[5, 6], kernel_size=[2, 3], dilation=[1, 1], padding=[1, 1], stride=[2, 2])");
}

TEST(Fold, GradientsAreEachOther) {
  const Tensor x = seeded({1, 2, 4, 5}, 5).requires_grad_();
  const Tensor cols = F::unfold(x, 2, 1, 1);
  const Tensor c = seeded(cols.sizes(), 6);
  (cols * c).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), F::fold(c, {4, 5}, 2, 1, 1), 1e-6, 1e-6));
  const Tensor y = seeded(cols.sizes(), 7).requires_grad_();
  const Tensor img = seeded({1, 2, 4, 5}, 8);
  (F::fold(y, {4, 5}, 2, 1, 1) * img).sum().backward();
  EXPECT_TRUE(all_close(y.grad(), F::unfold(img, 2, 1, 1), 1e-6, 1e-6));
}

TEST(Fold, BadArguments) {
  const Tensor x = seeded({1, 2, 4, 4}, 9);
  EXPECT_EMBER_ERROR(F::unfold(x, {2, 2, 2}), "unfold", "kernel_size", "1 or 2 values");
  EXPECT_EMBER_ERROR(F::unfold(x, 5), "im2col", "no sliding block");
  EXPECT_EMBER_ERROR(F::unfold(seeded({2, 4}, 10), 2), "im2col", "3-D (C, H, W) or 4-D");
  EXPECT_EMBER_ERROR(F::fold(seeded({1, 7, 9}, 11), {4, 4}, 2), "col2im", "multiple of the product of kernel_size");
  EXPECT_EMBER_ERROR(F::fold(seeded({1, 8, 8}, 12), {4, 4}, 2), "col2im", "3 * 3 = 9 sliding blocks", "has 8");
  EXPECT_EMBER_ERROR(nn::Fold(nn::FoldOptions({4, 4, 4}, 2)), "Fold", "output_size");
}

}  // namespace
}  // namespace ember::testing
