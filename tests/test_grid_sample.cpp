// F::grid_sample and F::affine_grid (ember/nn/functional/vision.h): the
// identity transform reproduces the input, known points by hand, the
// options form, and errors naming the op. Values against torch are in the
// golden cases (tools/golden/nn_vision.py).
//   GridSample.*
#include <gtest/gtest.h>

#include "ember/nn/functional/vision.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

Tensor identity_theta(int64_t n, int64_t k) {
  return eye(k, k + 1, kFloat32).unsqueeze(0).expand({n, k, k + 1}).contiguous();
}

TEST(GridSample, IdentityTransformGivesTheInputBack) {
  Generator g(1);
  const Tensor x = randn({2, 3, 5, 4}, kFloat32, &g);
  for (bool align : {false, true}) {
    const Tensor grid = F::affine_grid(identity_theta(2, 2), {2, 3, 5, 4}, align);
    for (const char* mode : {kBilinear, kNearest})
      EXPECT_TRUE(all_close(F::grid_sample(x, grid, mode, kZeros, align), x, 1e-5, 1e-6)) << mode << align;
  }
  const Tensor v = randn({1, 2, 3, 4, 2}, kFloat32, &g);
  const Tensor grid3 = F::affine_grid(identity_theta(1, 3), {1, 2, 3, 4, 2}, true);
  EXPECT_TRUE(all_close(F::grid_sample(v, grid3, kBilinear, kBorder, true), v, 1e-5, 1e-6));
}

TEST(GridSample, PointsByHand) {
  // A 1x1x2x2 input [[1, 2], [3, 4]]; with align_corners (-1, -1) is pixel (0, 0).
  const Tensor x = arange(1, 5, 1, kFloat32).reshape({1, 1, 2, 2});
  // Points (x, y): the centre (2.5), the top right pixel (2), beyond the right edge.
  const Tensor grid = ember::tensor({0.0f, 0.0f, 1.0f, -1.0f, 3.0f, 0.0f}).reshape({1, 1, 3, 2});
  const Tensor y = F::grid_sample(x, grid, kBilinear, kZeros, true);
  EXPECT_TRUE(all_close(y, ember::tensor({2.5f, 2.0f, 0.0f}).reshape({1, 1, 1, 3}), 0, 1e-6));
  const Tensor b = F::grid_sample(x, grid, F::GridSampleFuncOptions().padding_mode(kBorder).align_corners(true));
  // border: the last point reads the right column's middle, (2 + 4) / 2
  EXPECT_TRUE(all_close(b, ember::tensor({2.5f, 2.0f, 3.0f}).reshape({1, 1, 1, 3}), 0, 1e-6));
}

TEST(GridSample, BadArgumentsNameTheOp) {
  const Tensor x = zeros({1, 2, 3, 3}), grid = zeros({1, 4, 4, 2});
  EXPECT_EMBER_ERROR(F::grid_sample(x, grid, "bicubic"), "grid_sample", "mode", "bicubic");
  EXPECT_EMBER_ERROR(F::grid_sample(x, grid, kBilinear, "circular"), "grid_sample", "padding_mode", "circular");
  EXPECT_EMBER_ERROR(F::grid_sample(zeros({2, 3}), grid), "grid_sample", "4-D", "[2, 3]");
  EXPECT_EMBER_ERROR(F::grid_sample(x, zeros({1, 4, 4, 3})), "grid_sample", "(N, Ho, Wo, 2)", "[1, 4, 4, 3]");
  EXPECT_EMBER_ERROR(F::grid_sample(x, zeros({2, 4, 4, 2})), "grid_sample", "N = 1");
  EXPECT_EMBER_ERROR(F::grid_sample(x, zeros({1, 4, 4, 2}, kFloat64)), "grid_sample", "float32 and float64");
  EXPECT_EMBER_ERROR(F::affine_grid(zeros({1, 2, 3}), {1, 3, 4}), "affine_grid", "(N, C, H, W)");
  EXPECT_EMBER_ERROR(F::affine_grid(zeros({1, 2, 3}), {1, 3, 4, 4, 4}), "affine_grid", "[1, 3, 4]", "[1, 2, 3]");
  EXPECT_EMBER_ERROR(F::affine_grid(zeros({2, 2, 3}), {1, 3, 4, 4}), "affine_grid", "[1, 2, 3]");
  EXPECT_EMBER_ERROR(F::affine_grid(zeros({1, 2, 3}), {1, 3, 0, 4}), "affine_grid", "positive");
}

}  // namespace
}  // namespace ember::testing
