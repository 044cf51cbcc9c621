// Unit tests of the pooling family through ember::nn::functional: every bad
// input raises a clear ember::Error, and the special cases behave as in
// PyTorch 1.13 (the op-info rows and the golden files cover the values).
#include <gtest/gtest.h>

#include <limits>

#include "core/op_decls_pooling.h"
#include "ember/ember.h"
#include "ember/nn/functional/pooling.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// 0, 1, 2, ... in row-major order.
Tensor image(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return arange(n, kFloat32).reshape(shape);
}

std::vector<int64_t> ints_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

F::InterpolateOptions sized(std::vector<int64_t> size, std::string mode = "nearest") {
  F::InterpolateOptions o;
  o.size = std::move(size);
  o.mode = std::move(mode);
  return o;
}

F::InterpolateOptions scaled(std::vector<double> scale, std::string mode = "nearest") {
  F::InterpolateOptions o;
  o.scale_factor = std::move(scale);
  o.mode = std::move(mode);
  return o;
}

// ---- bad inputs ----

TEST(PoolingErrors, KernelLargerThanPaddedInput) {
  const Tensor x = image({1, 2, 3, 3});
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 5), "max_pool2d", "larger than the padded input", "[1, 2, 3, 3]");
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 7, 1, 1), "larger than the padded input");
  EXPECT_EMBER_ERROR(F::avg_pool2d(x, {4, 2}), "avg_pool2d", "larger than the padded input");
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 3, 1, 0, 2), "larger than the padded input", "dilation");
}

TEST(PoolingErrors, PaddingOverHalfTheKernel) {
  const Tensor x = image({1, 1, 6, 6});
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 3, 1, 2), "max_pool2d", "padding must be at most half of the kernel size");
  EXPECT_EMBER_ERROR(F::avg_pool2d(x, {4, 2}, {}, {1, 2}), "avg_pool2d", "at most half");
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 3, 1, -1), "padding must be non-negative");
}

TEST(PoolingErrors, StrideZeroOrBadLists) {
  const Tensor x = image({1, 1, 6, 6});
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 3, 0), "max_pool2d", "stride must be positive");
  EXPECT_EMBER_ERROR(F::avg_pool2d(x, 3, {1, 0}), "avg_pool2d", "stride must be positive");
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 0), "kernel_size must be positive");
  EXPECT_EMBER_ERROR(F::max_pool2d(x, 2, 1, 0, 0), "dilation must be positive");
  EXPECT_EMBER_ERROR(F::max_pool2d(x, {2, 2, 2}), "kernel_size must be one int or two ints");
  EXPECT_EMBER_ERROR(F::avg_pool2d(x, 2, {}, 0, false, true, 0), "divisor_override must not be zero");
}

TEST(PoolingErrors, WrongInputRank) {
  EXPECT_EMBER_ERROR(F::max_pool2d(image({6, 6}), 2), "max_pool2d", "3-D [C, H, W] or 4-D", "[6, 6]");
  EXPECT_EMBER_ERROR(F::avg_pool2d(image({1, 1, 1, 6, 6}), 2), "avg_pool2d", "3-D [C, H, W] or 4-D");
  EXPECT_EMBER_ERROR(F::adaptive_avg_pool2d(image({6}), 2), "adaptive_avg_pool2d", "3-D [C, H, W] or 4-D");
  EXPECT_EMBER_ERROR(F::max_pool2d(zeros({1, 0, 4, 4}), 2), "non-zero C, H and W");
  EXPECT_EMBER_ERROR(F::interpolate(image({2, 3, 4}), sized({8}, "bilinear")), "interpolate", "4-D (N, C, H, W)");
  EXPECT_EMBER_ERROR(F::interpolate(image({1, 1, 2, 3, 4}), sized({8})), "interpolate", "3-D (N, C, W) or 4-D");
  EXPECT_EMBER_ERROR(F::pad(image({1, 2, 3, 4}), {1, 1}, "reflect"), "reflection_pad", "takes a 2-D or 3-D input");
  EXPECT_EMBER_ERROR(F::pad(image({3, 4}), {1, 1, 1, 1}, "replicate"), "replication_pad", "takes a 3-D or 4-D input");
  EXPECT_EMBER_ERROR(F::pad(image({3, 4}), {1, 1, 1, 1, 1, 1}), "constant_pad_nd", "pads 3 dims");
}

TEST(PoolingErrors, OutputSizeNotPositive) {
  const Tensor x = image({1, 2, 5, 5});
  EXPECT_EMBER_ERROR(F::interpolate(x, sized({0, 3})), "upsample_nearest2d", "greater than 0");
  EXPECT_EMBER_ERROR(F::interpolate(x, scaled({0.1}, "bilinear")), "upsample_bilinear2d", "greater than 0");
  EXPECT_EMBER_ERROR(F::adaptive_avg_pool2d(x, {-1, 3}), "adaptive_avg_pool2d", "non-negative");
  EXPECT_EMBER_ERROR(F::pad(x, {1, 1, -5, -1}), "constant_pad_nd", "invalid");
  EXPECT_EMBER_ERROR(F::pad(image({1, 2, 5}), {-3, -3}, "replicate"), "replication_pad", "invalid");
}

TEST(PoolingErrors, ReflectPaddingNotSmallerThanTheDim) {
  const Tensor x = image({1, 3, 4});
  EXPECT_EMBER_ERROR(F::pad(x, {4, 0}, "reflect"), "reflection_pad", "smaller than the padded dim", "size 4");
  EXPECT_EMBER_ERROR(F::pad(image({1, 2, 3, 4}), {1, 1, 0, 3}, "reflect"), "reflection_pad", "dim 2 of size 3");
  // replicate has no such limit
  EXPECT_EQ(F::pad(x, {6, 5}, "replicate").sizes(), IntArrayRef({1, 3, 15}));
}

TEST(PoolingErrors, UnknownMode) {
  const Tensor x = image({1, 2, 4, 4});
  EXPECT_EMBER_ERROR(F::pad(x, {1, 1}, "wrap"), "pad", "unknown padding mode \"wrap\"");
  EXPECT_EMBER_ERROR(F::pad(x, {1, 1}, "reflect", 1.0), "pad", "takes no value");
  EXPECT_EMBER_ERROR(F::interpolate(x, sized({8}, "bicubic")), "interpolate", "mode \"bicubic\"");
  F::InterpolateOptions o = sized({8});
  o.align_corners = true;
  EXPECT_EMBER_ERROR(F::interpolate(x, o), "interpolate", "align_corners");
  EXPECT_EMBER_ERROR(F::pad(x, {1, 1, 1}), "constant_pad_nd", "pairs");
}

TEST(PoolingErrors, SizeAndScaleFactor) {
  const Tensor x = image({1, 2, 4, 4});
  F::InterpolateOptions both = sized({8});
  both.scale_factor = std::vector<double>{2.0};
  EXPECT_EMBER_ERROR(F::interpolate(x, both), "interpolate", "exactly one of size and scale_factor", "both");
  EXPECT_EMBER_ERROR(F::interpolate(x, F::InterpolateOptions{}), "interpolate", "neither");
  EXPECT_EMBER_ERROR(F::interpolate(x, sized({8, 8, 8})), "interpolate", "size must have 1 or 2 values");
  F::InterpolateOptions recompute = sized({8});
  recompute.recompute_scale_factor = true;
  EXPECT_EMBER_ERROR(F::interpolate(x, recompute), "recompute_scale_factor");
}

TEST(PoolingErrors, BackwardShapesAreChecked) {
  const Tensor g = zeros({1, 2, 2, 2});
  EXPECT_EMBER_ERROR(op::max_pool2d_with_indices_backward.call(g, full({1, 2, 2, 2}, 99, kInt64), {1, 2, 4, 4}),
                     "max_pool2d_with_indices_backward", "index 99 is outside the input plane of 4x4");
  EXPECT_EMBER_ERROR(op::avg_pool2d_backward.call(g, {1, 2, 6, 6}, {2}, {}, {0}, false, true, std::nullopt),
                     "avg_pool2d_backward", "expected grad_output of shape [1, 2, 3, 3]");
}

// ---- special cases ----

TEST(MaxPool2d, NaNPropagatesAndIndicesFollowTorch) {
  const Tensor x = tensor({1.f, kNaN, 3.f, kNaN, -kInf, -kInf, -kInf, -kInf}).reshape({1, 1, 2, 4});
  auto [values, indices] = F::max_pool2d_with_indices(x, {2, 2});
  // The last NaN of the window wins; an all -inf window reports its first position.
  EXPECT_TRUE(all_close(values, tensor({kNaN, kNaN}).reshape({1, 1, 1, 2})));
  EXPECT_EQ(values.sizes(), IntArrayRef({1, 1, 1, 2}));
  EXPECT_EQ(indices.dtype(), kInt64);
  EXPECT_EQ(ints_of(indices), (std::vector<int64_t>{1, 3}));
  auto [v2, i2] = F::max_pool2d_with_indices(x.narrow(2, 1, 1), {1, 2});
  EXPECT_TRUE(all_close(v2, full({1, 1, 1, 2}, -kInf)));
  EXPECT_EQ(ints_of(i2), (std::vector<int64_t>{0, 2}));
}

TEST(MaxPool2d, OverlappingWindowsAddTheirGradients) {
  // 3x3 windows with stride 1 over increasing values: each window's max is its bottom-right element.
  const Tensor x = image({1, 1, 4, 4}).requires_grad_();
  F::max_pool2d(x, 3, 1, 1).sum().backward();
  const std::vector<double> want = {0, 0, 0, 0, 0, 1, 1, 2, 0, 1, 1, 2, 0, 2, 2, 4};
  EXPECT_EQ(values(x.grad()), want);
}

TEST(MaxPool2d, TwoByTwoStrideTwoFloatPathMatchesTheGeneralLoop) {
  // 2x2 / stride 2 windows take a vector path in float, float16 and bfloat16;
  // double takes the general one. Values with many ties (relu'd small
  // integers) and NaNs must give the same maxima and the same tie-breaking
  // indices, at widths around the vector length and with odd sizes (the last
  // row and column dropped).
  manual_seed(7);
  for (int64_t h : {2, 3, 7}) {
    for (int64_t w : {2, 3, 17, 26, 33, 34, 70}) {
      Tensor x = randint(-2, 3, {2, 3, h, w}, kFloat64).relu();
      x.index_put_({0, 1}, where(rand({h, w}, kFloat64).lt(0.2), kNaN, x.index({0, 1})));
      auto [want, want_at] = F::max_pool2d_with_indices(x, {2, 2});
      for (DType t : {kFloat32, kFloat16, kBFloat16}) {
        SCOPED_TRACE("h " + std::to_string(h) + " w " + std::to_string(w) + " " + std::string(dtype_name(t)));
        const Tensor xt = x.to(t);
        auto [got, got_at] = F::max_pool2d_with_indices(xt, {2, 2});
        EXPECT_EQ(got.dtype(), t);
        EXPECT_TRUE(all_close(got, want, 0, 0));
        EXPECT_EQ(ints_of(got_at), ints_of(want_at));
        EXPECT_TRUE(all_close(F::max_pool2d(xt, 2), want, 0, 0));
      }
    }
  }
}

TEST(MaxPool2d, CeilModeNeverStartsAWindowInThePadding) {
  // torch: 5 + 2 - 2 + 1 = 6 -> ceil(5 / 2) + 1 = 4, minus the window starting at 6 >= 5 + 1.
  EXPECT_EQ(F::max_pool2d(image({1, 1, 5, 5}), 2, 2, 1, 1, true).sizes(), IntArrayRef({1, 1, 3, 3}));
  // Windows start at -1, 1, 3 in each dim; x[i][j] = 5i + j grows with both,
  // so each max is at the window's last in-bounds row and column.
  EXPECT_EQ(values(F::max_pool2d(image({1, 1, 5, 5}), 2, 2, 1, 1, true)),
            (std::vector<double>{0, 2, 4, 10, 12, 14, 20, 22, 24}));
  // avg with count_include_pad: each window divides by its part inside the padded input.
  EXPECT_EQ(values(F::avg_pool2d(image({1, 1, 5, 5}), 2, 2, 0, true)),
            (std::vector<double>{3, 5, 6.5, 13, 15, 16.5, 20.5, 22.5, 24}));
  EXPECT_EQ(F::avg_pool2d(image({1, 1, 5, 5}), 2, 2, 0, true).sizes(), IntArrayRef({1, 1, 3, 3}));
}

TEST(AvgPool2d, DivisorRules) {
  const Tensor x = ones({1, 1, 3, 3});
  // Corner window with padding 1: 4 real elements out of 9.
  EXPECT_NEAR(F::avg_pool2d(x, 3, 1, 1).index({0, 0, 0, 0}).item<float>(), 4.0 / 9.0, 1e-7);
  EXPECT_NEAR(F::avg_pool2d(x, 3, 1, 1, false, false).index({0, 0, 0, 0}).item<float>(), 1.0, 1e-7);
  EXPECT_NEAR(F::avg_pool2d(x, 3, 1, 1, false, true, 2).index({0, 0, 0, 0}).item<float>(), 2.0, 1e-7);
}

TEST(AdaptiveAvgPool2d, GlobalIsTheMean) {
  const Tensor x = randn({2, 3, 7, 5});
  EXPECT_TRUE(all_close(F::adaptive_avg_pool2d(x, 1), x.mean({2, 3}, true), 1e-5, 1e-6));
  EXPECT_EQ(F::adaptive_avg_pool2d(x, {0, 2}).sizes(), IntArrayRef({2, 3, 0, 2}));
}

TEST(Pad, ConstantCropsAndNeverAliases) {
  const Tensor x = image({2, 3});
  const Tensor same = F::pad(x, {0, 0});
  EXPECT_TRUE(all_close(same, x));
  EXPECT_NE(same.data_ptr(), x.data_ptr());
  EXPECT_TRUE(all_close(F::pad(x, {-1, -1}), x.narrow(1, 1, 1)));
  EXPECT_EQ(F::pad(x, {-2, -1}).sizes(), IntArrayRef({2, 0}));
  EXPECT_TRUE(
      all_close(F::pad(x, {1, 0}, "constant", 7.0), tensor({7.f, 0.f, 1.f, 2.f, 7.f, 3.f, 4.f, 5.f}).reshape({2, 4})));
  EXPECT_EQ(F::pad(image({2, 3}).to(kInt64), {1, 1}, "constant", 5.0).index({0, 0}).item<int64_t>(), 5);
}

TEST(Pad, ReflectAndReplicateFollowTorch) {
  const Tensor x = image({1, 1, 4});
  EXPECT_TRUE(all_close(F::pad(x, {3, 0}, "reflect"), tensor({3.f, 2.f, 1.f, 0.f, 1.f, 2.f, 3.f}).reshape({1, 1, 7})));
  EXPECT_TRUE(all_close(F::pad(x, {-1, 2}, "reflect"), tensor({1.f, 2.f, 3.f, 2.f, 1.f}).reshape({1, 1, 5})));
  EXPECT_TRUE(all_close(F::pad(x, {2, -1}, "replicate"), tensor({0.f, 0.f, 0.f, 1.f, 2.f}).reshape({1, 1, 5})));
}

TEST(Interpolate, NearestOn3dEqualsAHeightOfOne) {
  const Tensor x = randn({2, 3, 7});
  const Tensor a = F::interpolate(x, scaled({1.7}));
  const Tensor b = F::interpolate(x.unsqueeze(2), scaled({1.0, 1.7})).squeeze(2);
  EXPECT_EQ(a.sizes(), IntArrayRef({2, 3, 11}));
  EXPECT_TRUE(all_close(a, b, 0, 0));
}

TEST(Interpolate, ScaleFactorIndexesWithTheGivenScaleUnlessRecomputed) {
  // 5 -> 7 columns with scale_factor 1.5: bilinear samples at (o + 0.5) / 1.5 - 0.5, or, recomputed, at
  // (o + 0.5) * 5 / 7 - 0.5.
  const Tensor x = image({1, 1, 1, 5});
  F::InterpolateOptions given = scaled({1.0, 1.5}, "bilinear"), recomputed = given;
  recomputed.recompute_scale_factor = true;
  const std::vector<double> a = values(F::interpolate(x, given)), b = values(F::interpolate(x, recomputed));
  // src = (o + 0.5) / 1.5 - 0.5 vs (o + 0.5) * 5 / 7 - 0.5 at o = 6: 3.8333 vs 4 (clamped to the last tap).
  EXPECT_NEAR(a[6], 3.8333333, 1e-5);
  EXPECT_NEAR(b[6], 4.0, 1e-6);
}

TEST(Interpolate, BilinearAlignCornersKeepsTheCorners) {
  const Tensor x = randn({1, 2, 3, 4});
  F::InterpolateOptions o = sized({7, 9}, "bilinear");
  o.align_corners = true;
  const Tensor y = F::interpolate(x, o);
  for (int64_t c = 0; c < 2; ++c) {
    EXPECT_FLOAT_EQ(y.index({0, c, 0, 0}).item<float>(), x.index({0, c, 0, 0}).item<float>());
    EXPECT_FLOAT_EQ(y.index({0, c, 6, 8}).item<float>(), x.index({0, c, 2, 3}).item<float>());
  }
}

TEST(Interpolate, AScaleFactorPointingPastTheInputStaysOnTheLastTap) {
  // The ops take the caller's scale as given; 1 / 0.1 = 10 would sample far past a 5x5 input.
  const Tensor x = image({1, 1, 5, 5});
  EXPECT_TRUE(all_close(op::upsample_bilinear2d.call(x, {10, 10}, false, 0.1, 0.1), full({1, 1, 10, 10}, 24.0f)));
  const Tensor nearest = op::upsample_nearest2d.call(x, {10, 10}, 0.1, 0.1);  // source min(10 * dst, 4)
  EXPECT_EQ(nearest.index({0, 0, 0, 0}).item<float>(), 0.0f);
  EXPECT_EQ(nearest.index({0, 0, 9, 9}).item<float>(), 24.0f);
}

}  // namespace
}  // namespace ember::testing
