// The 3-D layers and the circular padding mode (ember/nn/modules/conv.h,
// pooling.h): Conv3d's parameters and forward, MaxPool3d, AvgPool3d,
// AdaptiveAvgPool3d, padding_mode "circular" on Conv1d/2d/3d, printing,
// errors that name the layer, gradients.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "ember/nn/functional.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/pooling.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;

Tensor seeded(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, kFloat32, &g);
}

std::string printed(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(Nn3d, Conv3dParametersAndForward) {
  nn::Conv3d conv(nn::Conv3dOptions(4, 6, {3, 2, 3}).stride({2, 1, 1}).padding({1, 0, 1}).groups(2));
  EXPECT_EQ(conv->weight.sizes(), IntArrayRef({6, 2, 3, 2, 3}));  // (out, in / groups, kD, kH, kW)
  EXPECT_EQ(conv->bias.sizes(), IntArrayRef({6}));
  const Tensor x = seeded({2, 4, 5, 6, 7}, 1);
  const Tensor y = conv(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 6, 3, 5, 7}));  // (5 + 2 - 3) / 2 + 1, 6 - 2 + 1, 7 + 2 - 3 + 1
  EXPECT_TRUE(all_close(y, F::conv3d(x, conv->weight, conv->bias, {2, 1, 1}, {1, 0, 1}, 1, 2), 0, 0));
  EXPECT_TRUE(all_close(conv(x[1]), y[1], 1e-6, 1e-6));  // unbatched (C, D, H, W)
  EXPECT_EQ(printed(*conv), "Conv3d(4, 6, kernel_size=[3, 2, 3], stride=[2, 1, 1], padding=[1, 0, 1], groups=2)");
}

// A 3-D convolution whose kernel has depth 1 is a 2-D convolution of every depth slice.
TEST(Nn3d, Conv3dWithUnitDepthIsConv2dPerSlice) {
  const Tensor x = seeded({2, 3, 4, 6, 5}, 2), w = seeded({5, 3, 1, 3, 3}, 3), b = seeded({5}, 4);
  const Tensor y = F::conv3d(x, w, b, 1, {0, 1, 1});
  for (int64_t d = 0; d < 4; ++d) {
    const Tensor slice = F::conv2d(x.select(2, d), w.select(2, 0), b, 1, 1);
    EXPECT_TRUE(all_close(y.select(2, d), slice, 1e-5, 1e-5)) << "depth " << d;
  }
}

TEST(Nn3d, Conv3dSamePaddingAndPaddingModes) {
  const Tensor x = seeded({1, 2, 4, 5, 6}, 5);
  nn::Conv3d same(nn::Conv3dOptions(2, 3, {2, 3, 4}).padding("same"));
  EXPECT_EQ(same(x).sizes(), IntArrayRef({1, 3, 4, 5, 6}));
  for (const char* mode : {"reflect", "replicate", "circular"}) {
    SCOPED_TRACE(mode);
    nn::Conv3d conv(nn::Conv3dOptions(2, 3, 3).padding({1, 2, 1}).padding_mode(mode));
    const Tensor want = F::conv3d(F::pad(x, {1, 1, 2, 2, 1, 1}, mode), conv->weight, conv->bias);
    EXPECT_TRUE(all_close(conv(x), want, 0, 0));
  }
}

TEST(Nn3d, CircularPaddingModeOnConv1dAnd2d) {
  const Tensor x = seeded({2, 2, 5, 6}, 6);
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding({1, 2}).padding_mode(kCircular));
  EXPECT_TRUE(all_close(conv(x), F::conv2d(F::pad(x, {2, 2, 1, 1}, "circular"), conv->weight, conv->bias), 0, 0));
  // "same" with an even kernel: the odd one after, as with zeros.
  nn::Conv1d same(nn::Conv1dOptions(2, 4, 4).padding("same").padding_mode("circular"));
  const Tensor x1 = x.select(2, 0);
  EXPECT_TRUE(all_close(same(x1), F::conv1d(F::pad(x1, {1, 2}, "circular"), same->weight, same->bias), 0, 0));
  EXPECT_EQ(printed(*same), "Conv1d(2, 4, kernel_size=[4], stride=[1], padding=same, padding_mode=circular)");
}

TEST(Nn3d, CircularPadWrapsAround) {
  const Tensor x = arange(5, TensorOptions(kFloat32)).view({1, 1, 5});
  EXPECT_TRUE(all_close(F::pad(x, {2, 1}, kCircular), tensor({3.f, 4.f, 0.f, 1.f, 2.f, 3.f, 4.f, 0.f}).view({1, 1, 8}),
                        0, 0));
  // A negative padding crops first; the other side wraps around what is left (as torch).
  EXPECT_TRUE(all_close(F::pad(x, {-1, 2}, kCircular), tensor({1.f, 2.f, 3.f, 4.f, 1.f, 2.f}).view({1, 1, 6}), 0, 0));
  EXPECT_EMBER_ERROR(F::pad(x, {6, 0}, kCircular), "circular_pad", "wraps around more than once");
  EXPECT_EMBER_ERROR(F::pad(x, {1, 1}, "circular", 2.0), "pad", "takes no value");
}

TEST(Nn3d, PoolingLayersAreTheFunctionalCalls) {
  const Tensor x = seeded({2, 3, 6, 7, 8}, 7);
  nn::MaxPool3d pool(2);
  EXPECT_EQ(pool->options.stride(), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(pool(x).sizes(), IntArrayRef({2, 3, 3, 3, 4}));
  EXPECT_TRUE(all_close(pool(x), F::max_pool3d(x, 2), 0, 0));
  nn::MaxPool3d pool3(nn::MaxPool3dOptions({3, 2, 3}).stride({2, 1, 2}).padding({1, 0, 1}).ceil_mode(true));
  const auto [values, indices] = pool3->forward_with_indices(x);
  EXPECT_TRUE(all_close(values, F::max_pool3d(x, {3, 2, 3}, {2, 1, 2}, {1, 0, 1}, 1, true), 0, 0));
  EXPECT_EQ(indices.dtype(), kInt64);
  // The indices point at the maxima: flat positions (d * H + h) * W + w of each volume.
  const Tensor flat = x.reshape({6, -1});
  EXPECT_TRUE(all_close(flat.gather(1, indices.reshape({6, -1})), values.reshape({6, -1}), 0, 0));

  nn::AvgPool3d avg(nn::AvgPool3dOptions(3).stride(2).padding(1).count_include_pad(false).divisor_override(5));
  EXPECT_TRUE(all_close(avg(x), F::avg_pool3d(x, 3, 2, 1, false, false, 5), 0, 0));
  nn::AdaptiveAvgPool3d gap(1);
  EXPECT_TRUE(all_close(gap(x), x.mean({2, 3, 4}, true), 1e-5, 1e-6));
  nn::AdaptiveAvgPool3d to_2x3x4(nn::AdaptiveAvgPool3dOptions({2, 3, 4}));
  EXPECT_TRUE(all_close(to_2x3x4(x), F::adaptive_avg_pool3d(x, {2, 3, 4}), 0, 0));
  EXPECT_TRUE(all_close(to_2x3x4(x[0]), to_2x3x4(x)[0], 0, 0));  // unbatched (C, D, H, W)
}

TEST(Nn3d, PoolingPrintingAndErrors) {
  EXPECT_EQ(printed(*nn::MaxPool3d(2)), "MaxPool3d(kernel_size=[2, 2, 2], stride=[2, 2, 2], padding=[0, 0, 0], "
                                        "dilation=[1, 1, 1], ceil_mode=false)");
  EXPECT_EQ(printed(*nn::AvgPool3d(nn::AvgPool3dOptions({1, 2, 2}).ceil_mode(true))),
            "AvgPool3d(kernel_size=[1, 2, 2], stride=[1, 2, 2], padding=[0, 0, 0], ceil_mode=true)");
  EXPECT_EQ(printed(*nn::AdaptiveAvgPool3d(1)), "AdaptiveAvgPool3d(output_size=[1, 1, 1])");
  EXPECT_EMBER_ERROR(nn::MaxPool3d(nn::MaxPool3dOptions({1, 2})), "MaxPool3d", "kernel_size", "1 or 3 values");
  EXPECT_EMBER_ERROR(nn::AvgPool3d(nn::AvgPool3dOptions(2).padding({1, 1})), "AvgPool3d", "padding");
  nn::MaxPool3d pool(2);
  EXPECT_EMBER_ERROR(pool(seeded({4, 4, 4}, 8)), "max_pool3d", "4-D [C, D, H, W] or 5-D");
  EXPECT_EMBER_ERROR(F::avg_pool3d(seeded({1, 1, 4, 4, 4}, 9), 2, {}, 0, false, true, 0), "avg_pool3d",
                     "divisor_override");
}

TEST(Nn3d, GradientsFlowThrough) {
  const Tensor x = seeded({1, 2, 4, 4, 4}, 10).requires_grad_();
  nn::MaxPool3d pool(2);
  nn::AvgPool3d avg(2);
  nn::AdaptiveAvgPool3d gap(1);
  (pool(x).sum() + avg(x).sum() + gap(x).sum()).backward();
  ASSERT_TRUE(x.grad().defined());
  // Each 2x2x2 window gives its max 1, every element 1/8 (avg) and 1/64 (global).
  EXPECT_NEAR(x.grad().sum().item<double>(), 8.0 * 2 + 64.0 * 2 / 8 + 2.0, 1e-4);

  nn::Conv3d conv(nn::Conv3dOptions(2, 2, 3).padding(1).padding_mode(kCircular));
  const Tensor v = seeded({1, 2, 4, 4, 4}, 11).requires_grad_();
  conv(v).sum().backward();
  ASSERT_TRUE(conv->weight.grad().defined() && conv->bias.grad().defined() && v.grad().defined());
  // With circular padding every input element meets every kernel tap once: its gradient is the weight sum.
  const Tensor per_channel = conv->weight.sum({0, 2, 3, 4});
  EXPECT_TRUE(all_close(v.grad()[0].sum({1, 2, 3}), per_channel * 64, 1e-4, 1e-4));
}

}  // namespace
}  // namespace ember::testing
