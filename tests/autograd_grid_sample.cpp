// Gradients of F::grid_sample (input and grid) and F::affine_grid (theta) in
// float64 against finite differences, every mode and padding mode, 4-D and
// 5-D, and second derivatives through affine_grid + grid_sample.
//   AutogradGridSample.*
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/gradcheck.h"
#include "ember/nn/functional/vision.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using autograd::gradcheck;
using autograd::GradcheckResult;
using autograd::gradgradcheck;

Tensor leaf(Tensor t) { return t.requires_grad_(); }

// Grid points uniform in [-1.2, 1.2): some outside the input, and (seeded) none
// within the finite-difference step of a kink (an integer pixel position, a
// border, a nearest-mode tie).
Tensor grid_points(IntArrayRef shape, uint64_t seed) {
  Generator g(seed);
  return rand(shape, kFloat64, &g) * 2.4 - 1.2;
}

TEST(AutogradGridSample, InputAndGridEveryMode) {
  const Tensor x = leaf(randn({1, 2, 4, 3}, kFloat64));
  const Tensor grid = leaf(grid_points({1, 3, 2, 2}, 2));
  for (const char* mode : {kBilinear, kNearest})
    for (const char* padding : {kZeros, kBorder, kReflection})
      for (bool align : {false, true}) {
        SCOPED_TRACE(std::string(mode) + " " + padding + (align ? " align" : ""));
        const GradcheckResult r = gradcheck(
            [&](const TensorList& in) { return TensorList{F::grid_sample(in[0], in[1], mode, padding, align)}; },
            {x, grid});
        EXPECT_TRUE(r) << r.report;
      }
}

TEST(AutogradGridSample, FiveDimensional) {
  const Tensor x = leaf(randn({1, 2, 3, 3, 4}, kFloat64));
  const Tensor grid = leaf(grid_points({1, 2, 2, 2, 3}, 3));
  for (const char* padding : {kZeros, kReflection}) {
    const GradcheckResult r = gradcheck(
        [&](const TensorList& in) { return TensorList{F::grid_sample(in[0], in[1], kBilinear, padding, false)}; },
        {x, grid});
    EXPECT_TRUE(r) << r.report;
  }
}

TEST(AutogradGridSample, AffineGridAndSecondDerivatives) {
  for (int64_t k : {2, 3}) {
    const Tensor theta = leaf(randn({2, k, k + 1}, kFloat64));
    const std::vector<int64_t> size = k == 2 ? std::vector<int64_t>{2, 1, 3, 4} : std::vector<int64_t>{2, 1, 2, 3, 2};
    const GradcheckResult r =
        gradcheck([&](const TensorList& in) { return TensorList{F::affine_grid(in[0], size, k == 2)}; }, {theta});
    EXPECT_TRUE(r) << r.report;
  }
  const Tensor x = leaf(randn({1, 1, 3, 3}, kFloat64));
  const Tensor theta = leaf(ember::tensor({0.8, 0.15, 0.05, -0.1, 0.9, 0.1}).reshape({1, 2, 3}));
  const GradcheckResult r = gradgradcheck(
      [&](const TensorList& in) {
        return TensorList{F::grid_sample(in[0], F::affine_grid(in[1], {1, 1, 2, 3}), kBilinear, kBorder)};
      },
      {x, theta});
  EXPECT_TRUE(r) << r.report;
}

}  // namespace
}  // namespace ember::testing
