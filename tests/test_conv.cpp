// conv1d, conv2d, conv_transpose2d (ember::nn::functional): each bad input
// raises a clear ember::Error, and the special cases behave as in PyTorch.
// Values against PyTorch are in the golden tests (golden_nn_conv.cpp), against
// naive loops in the op-info rows (op_info_conv.cpp); bfloat16 in test_conv_bf16.cpp.
#include <gtest/gtest.h>

#include "core/op_decls_conv.h"
#include "ember/ember.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/functional/pooling.h"
#include "tests/op_info.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

Tensor rnd(IntArrayRef sizes, uint64_t seed, DType t = kFloat32) {
  Generator g(seed);
  return randn(sizes, TensorOptions(kFloat64), &g).to(t);
}

// ---- bad inputs ----

TEST(Conv, WrongInputChannels) {
  EXPECT_EMBER_ERROR(F::conv2d(rnd({2, 3, 5, 5}, 1), rnd({4, 2, 3, 3}, 2)), "convolution",
                     "weight.size(1) * groups = 2", "[2, 3, 5, 5]", "3 channels");
}

TEST(Conv, WrongInputChannelsWithGroups) {
  EXPECT_EMBER_ERROR(F::conv2d(rnd({2, 4, 5, 5}, 1), rnd({4, 1, 3, 3}, 2), std::nullopt, 1, 0, 1, 2), "convolution",
                     "= 2 channels", "groups 2");
}

TEST(Conv, TransposedWrongInputChannels) {
  EXPECT_EMBER_ERROR(F::conv_transpose2d(rnd({2, 3, 5, 5}, 1), rnd({4, 2, 3, 3}, 2)), "convolution",
                     "weight.size(0) = 4 channels");
}

TEST(Conv, GroupsNotDividingChannels) {
  EXPECT_EMBER_ERROR(F::conv2d(rnd({2, 3, 5, 5}, 1), rnd({4, 1, 3, 3}, 2), std::nullopt, 1, 0, 1, 2),
                     "groups (2) must divide the input channels");
  EXPECT_EMBER_ERROR(F::conv2d(rnd({2, 4, 5, 5}, 1), rnd({3, 2, 3, 3}, 2), std::nullopt, 1, 0, 1, 2),
                     "groups (2) must divide the weight's first dim");
  EXPECT_EMBER_ERROR(F::conv2d(rnd({2, 4, 5, 5}, 1), rnd({4, 4, 3, 3}, 2), std::nullopt, 1, 0, 1, 0), "groups > 0");
}

TEST(Conv, KernelLargerThanPaddedInput) {
  EXPECT_EMBER_ERROR(F::conv2d(rnd({1, 2, 3, 3}, 1), rnd({1, 2, 5, 5}, 2)), "convolution", "kernel size (5x5",
                     "larger than the padded input size (3x3");
  // Padding makes it fit: 3 + 2 * 1 == 5.
  EXPECT_EQ(F::conv2d(rnd({1, 2, 3, 3}, 1), rnd({1, 2, 5, 5}, 2), std::nullopt, 1, 1).sizes(),
            IntArrayRef({1, 1, 1, 1}));
  // Dilation widens the kernel's reach: 2 * (3 - 1) + 1 = 5 > 4.
  EXPECT_EMBER_ERROR(F::conv1d(rnd({1, 1, 4}, 1), rnd({1, 1, 3}, 2), std::nullopt, 1, 0, 2), "larger than the padded");
}

TEST(Conv, WeightOfTheWrongRank) {
  EXPECT_EMBER_ERROR(F::conv2d(rnd({1, 2, 5, 5}, 1), rnd({2, 2, 3}, 2)), "conv2d", "4-D weight", "[2, 2, 3]");
  EXPECT_EMBER_ERROR(F::conv1d(rnd({1, 2, 5}, 1), rnd({2, 2, 3, 3}, 2)), "conv1d", "3-D weight");
  EXPECT_EMBER_ERROR(F::conv_transpose2d(rnd({1, 2, 5, 5}, 1), rnd({2, 2, 3}, 2)), "conv_transpose2d", "4-D weight");
  // The op itself (the boxed path of the dispatcher checks the same).
  EXPECT_EMBER_ERROR(
      op::convolution.call(rnd({1, 2, 5, 5}, 1), rnd({2, 2, 3}, 2), std::nullopt, {1}, {0}, {1}, false, {0}, 1),
      "convolution", "4-D weight");
}

TEST(Conv, InputOfTheWrongRank) {
  EXPECT_EMBER_ERROR(F::conv2d(rnd({2, 3, 4, 5, 6}, 1), rnd({2, 3, 3, 3}, 2)), "conv2d", "4-D (batched) input");
}

TEST(Conv, NonPositiveStrideOrDilation) {
  const Tensor x = rnd({1, 2, 5, 5}, 1), w = rnd({2, 2, 3, 3}, 2);
  EXPECT_EMBER_ERROR(F::conv2d(x, w, std::nullopt, 0), "convolution", "stride > 0");
  EXPECT_EMBER_ERROR(F::conv2d(x, w, std::nullopt, {1, -2}), "convolution", "stride > 0", "[1, -2]");
  EXPECT_EMBER_ERROR(F::conv2d(x, w, std::nullopt, 1, 0, 0), "convolution", "dilation > 0");
  EXPECT_EMBER_ERROR(F::conv_transpose2d(x, w, std::nullopt, 1, 0, 0, 1, 0), "convolution", "dilation > 0");
}

TEST(Conv, NegativePadding) {
  EXPECT_EMBER_ERROR(F::conv2d(rnd({1, 2, 5, 5}, 1), rnd({2, 2, 3, 3}, 2), std::nullopt, 1, {0, -1}), "convolution",
                     "padding >= 0");
  EXPECT_EMBER_ERROR(F::conv_transpose2d(rnd({1, 2, 5, 5}, 1), rnd({2, 2, 3, 3}, 2), std::nullopt, 1, -1),
                     "padding >= 0");
}

TEST(Conv, BadOutputPadding) {
  const Tensor x = rnd({1, 2, 5, 5}, 1), w = rnd({2, 2, 3, 3}, 2);
  // Must be smaller than max(stride, dilation).
  EXPECT_EMBER_ERROR(F::conv_transpose2d(x, w, std::nullopt, 2, 0, 2), "convolution",
                     "output_padding < max(stride, dilation)");
  EXPECT_EMBER_ERROR(F::conv_transpose2d(x, w, std::nullopt, 1, 0, 1), "output_padding");
  EXPECT_EMBER_ERROR(F::conv_transpose2d(x, w, std::nullopt, 2, 0, -1), "output_padding");
  // Allowed below the dilation even with stride 1 (as in PyTorch).
  EXPECT_EQ(F::conv_transpose2d(x, w, std::nullopt, 1, 0, 1, 1, 2).sizes(), IntArrayRef({1, 2, 10, 10}));
}

TEST(Conv, BadPaddingString) {
  const Tensor x = rnd({1, 2, 5, 5}, 1), w = rnd({2, 2, 3, 3}, 2);
  EXPECT_EMBER_ERROR(F::conv2d(x, w, std::nullopt, 2, "same"), "conv2d", "\"same\" is not supported for strided");
  EXPECT_EMBER_ERROR(F::conv2d(x, w, std::nullopt, 1, "full"), "conv2d", "\"valid\" or \"same\"", "\"full\"");
}

TEST(Conv, BadBiasAndDtypes) {
  const Tensor x = rnd({1, 2, 5, 5}, 1), w = rnd({3, 2, 3, 3}, 2);
  EXPECT_EMBER_ERROR(F::conv2d(x, w, rnd({2}, 3)), "convolution", "bias of shape [3]", "[2]");
  EXPECT_EMBER_ERROR(F::conv2d(x, w.to(kFloat64)), "convolution", "same dtype", "float32");
  EXPECT_EMBER_ERROR(F::conv2d(x, w, rnd({3}, 3, kFloat64)), "convolution", "bias");
  EXPECT_EMBER_ERROR(F::conv2d(x.to(kInt64), w.to(kInt64)), "convolution");
}

TEST(Conv, BackwardChecksTheGradShape) {
  const Tensor x = rnd({1, 2, 5, 5}, 1), w = rnd({3, 2, 3, 3}, 2);
  EXPECT_EMBER_ERROR(op::convolution_backward.call(rnd({1, 3, 5, 5}, 3), x, w, {1}, {0}, {1}, false, {0}, 1, {1, 1, 1}),
                     "convolution_backward", "grad_output of shape [1, 3, 3, 3]");
}

// ---- special cases ----

TEST(Conv, SamePaddingKeepsTheSizeWithEvenKernels) {
  const Tensor x = rnd({2, 3, 6, 7}, 1);
  // PyTorch pads an even kernel's extra row and column at the end: [4, 2]
  // pads 1 above, 2 below, 0 left, 1 right, then convolves without padding.
  const Tensor w42 = rnd({4, 3, 4, 2}, 2);
  EXPECT_TRUE(all_close(F::conv2d(x, w42, std::nullopt, 1, "same"),
                        F::conv2d(F::pad(x, {0, 1, 1, 2}), w42, std::nullopt, 1, "valid"), 1e-6, 1e-6));
  const Tensor w33 = rnd({4, 3, 3, 3}, 2);  // dilation 2: 2 on each side
  EXPECT_TRUE(all_close(F::conv2d(x, w33, std::nullopt, 1, "same", 2),
                        F::conv2d(F::pad(x, {2, 2, 2, 2}), w33, std::nullopt, 1, "valid", 2), 1e-6, 1e-6));
  EXPECT_EQ(F::conv2d(x, rnd({4, 3, 4, 2}, 2), std::nullopt, 1, "same").sizes(), IntArrayRef({2, 4, 6, 7}));
  EXPECT_EQ(F::conv2d(x, rnd({4, 3, 3, 3}, 2), std::nullopt, 1, "same", 2).sizes(), IntArrayRef({2, 4, 6, 7}));
  EXPECT_EQ(F::conv1d(rnd({2, 3, 8}, 3), rnd({4, 3, 4}, 4), std::nullopt, 1, "same").sizes(), IntArrayRef({2, 4, 8}));
  EXPECT_EQ(F::conv2d(x, rnd({4, 3, 3, 3}, 2), std::nullopt, 1, "valid").sizes(), IntArrayRef({2, 4, 4, 5}));
}

TEST(Conv, SamePaddingPutsTheOddZeroAtTheEnd) {
  // A 2-tap kernel [1, 0] with "same" reads x[i] (the zero pads the right end);
  // [0, 1] reads x[i + 1], 0 at the last position.
  const Tensor x = rnd({1, 1, 5}, 1, kFloat64);
  const Tensor w = tensor({0.0, 1.0}).view({1, 1, 2});
  const Tensor y = F::conv1d(x, w, std::nullopt, 1, "same");
  const std::vector<double> xv = values(x), yv = values(y);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(yv[i], xv[i + 1]);
  EXPECT_EQ(yv[4], 0.0);
}

TEST(Conv, Conv1dIsConv2dWithUnitHeight) {
  const Tensor x = rnd({2, 4, 11}, 1, kFloat64), w = rnd({6, 2, 3}, 2, kFloat64), b = rnd({6}, 3, kFloat64);
  const Tensor y1 = F::conv1d(x, w, b, 2, 2, 2, 2);
  const Tensor y2 = F::conv2d(x.unsqueeze(2), w.unsqueeze(2), b, {1, 2}, {0, 2}, {1, 2}, 2).squeeze(2);
  EXPECT_TRUE(all_close(y1, y2, 0, 0));
}

// <conv2d(x, w), y> == <x, conv_transpose2d(y, w)>: the transposed convolution is the adjoint.
TEST(Conv, TransposedConvolutionIsTheAdjoint) {
  const Tensor x = rnd({2, 4, 7, 6}, 1, kFloat64), w = rnd({6, 2, 3, 2}, 2, kFloat64);
  const Tensor y = F::conv2d(x, w, std::nullopt, {2, 1}, {1, 0}, {1, 2}, 2);
  const Tensor v = rnd(y.sizes(), 3, kFloat64);
  const Tensor xt = F::conv_transpose2d(v, w, std::nullopt, {2, 1}, {1, 0}, {0, 0}, 2, {1, 2});
  ASSERT_EQ(xt.sizes(), x.sizes());
  EXPECT_NEAR((y * v).sum().item<double>(), (x * xt).sum().item<double>(), 1e-10);
}

TEST(Conv, DepthwiseIsOneConvolutionPerChannel) {
  const Tensor x = rnd({2, 3, 6, 6}, 1, kFloat64), w = rnd({3, 1, 3, 3}, 2, kFloat64);
  const Tensor y = F::conv2d(x, w, std::nullopt, 1, 1, 1, 3);
  for (int64_t c = 0; c < 3; ++c) {
    const Tensor yc = F::conv2d(x.slice(1, c, c + 1), w.slice(0, c, c + 1), std::nullopt, 1, 1);
    EXPECT_TRUE(all_close(y.slice(1, c, c + 1), yc, 0, 0)) << "channel " << c;
  }
}

TEST(Conv, UnbatchedInput) {
  const Tensor x = rnd({3, 5, 5}, 1), w = rnd({2, 3, 3, 3}, 2);
  EXPECT_TRUE(all_close(F::conv2d(x, w), F::conv2d(x.unsqueeze(0), w).squeeze(0), 0, 0));
  EXPECT_TRUE(all_close(F::conv_transpose2d(x, w.transpose(0, 1).contiguous()),
                        F::conv_transpose2d(x.unsqueeze(0), w.transpose(0, 1).contiguous()).squeeze(0), 0, 0));
}

TEST(Conv, EmptyBatch) {
  const Tensor x = rnd({0, 3, 5, 5}, 1).requires_grad_(), w = rnd({2, 3, 3, 3}, 2).requires_grad_();
  const Tensor y = F::conv2d(x, w, std::nullopt, 1, 1);
  EXPECT_EQ(y.sizes(), IntArrayRef({0, 2, 5, 5}));
  y.sum().backward();
  EXPECT_TRUE(all_close(w.grad(), zeros({2, 3, 3, 3}), 0, 0));
}

TEST(Conv, BackwardResultsNotAskedForAreEmpty) {
  const Tensor x = rnd({1, 2, 5, 5}, 1), w = rnd({3, 2, 3, 3}, 2), gy = rnd({1, 3, 3, 3}, 3);
  auto [gx, gw, gb] = op::convolution_backward.call(gy, x, w, {1}, {0}, {1}, false, {0}, 1, {0, 1, 0});
  EXPECT_EQ(gx.sizes(), IntArrayRef({0}));
  EXPECT_EQ(gw.sizes(), w.sizes());
  EXPECT_EQ(gb.sizes(), IntArrayRef({0}));
}

// With 250 input channels the unfolded matrix has 2250 rows and is built in
// blocks of 64 pixels, cut in the middle of output rows; a sum of
// one-channel convolutions (one block each) must give the same values and
// gradients. 10 output channels: the GEMM forward (the direct one takes <= 8).
TEST(Conv, PixelBlocksMatchOneChannelConvolutions) {
  constexpr int64_t kChannels = 250;
  for (int64_t stride : {1, 2}) {
    const Tensor x = rnd({2, kChannels, 20, 21}, 1, kFloat64).requires_grad_();
    const Tensor w = rnd({10, kChannels, 3, 3}, 2, kFloat64).requires_grad_();
    const Tensor y = F::conv2d(x, w, std::nullopt, stride, 1);
    const Tensor v = rnd(y.sizes(), 3, kFloat64);
    const TensorList g = autograd::grad({(y * v).sum()}, {x, w});
    Tensor y_sum;
    TensorList gx_parts, gw_parts;
    for (int64_t c = 0; c < kChannels; ++c) {
      const Tensor xc = x.detach().slice(1, c, c + 1).requires_grad_();
      const Tensor wc = w.detach().slice(1, c, c + 1).requires_grad_();
      const Tensor yc = F::conv2d(xc, wc, std::nullopt, stride, 1);
      y_sum = y_sum.defined() ? y_sum + yc : yc;
      const TensorList gc = autograd::grad({(yc * v).sum()}, {xc, wc});
      gx_parts.push_back(gc[0]);
      gw_parts.push_back(gc[1]);
    }
    EXPECT_TRUE(all_close(y, y_sum, 1e-12, 1e-12)) << "stride " << stride;
    EXPECT_TRUE(all_close(g[0], cat(gx_parts, 1), 1e-12, 1e-12)) << "stride " << stride;
    EXPECT_TRUE(all_close(g[1], cat(gw_parts, 1), 1e-12, 1e-12)) << "stride " << stride;
  }
  // Transposed: 250 output channels, so the unfolded output gradient is blocked.
  const Tensor x = rnd({2, 3, 12, 13}, 4, kFloat64), w = rnd({3, kChannels, 3, 3}, 5, kFloat64);
  const Tensor y = F::conv_transpose2d(x, w, std::nullopt, 2, 1, 1);
  for (int64_t c : {int64_t{0}, int64_t{117}, kChannels - 1}) {
    const Tensor yc = F::conv_transpose2d(x, w.slice(1, c, c + 1), std::nullopt, 2, 1, 1);
    EXPECT_TRUE(all_close(y.slice(1, c, c + 1), yc, 1e-12, 1e-12)) << "channel " << c;
  }
}

// The forward and all three gradients are bitwise the same on 1 and 2 threads,
// for a batch split over threads, a single large image (threaded GEMMs) and
// the direct kernel (few output channels); in float32 and in bfloat16 (which
// runs on the bf16 GEMM where the CPU has one: 32 output channels keep its
// GEMMs deep enough).
TEST(Conv, ThreadCountInvariance) {
  ThreadCount restore_threads;
  struct Shape {
    std::vector<int64_t> input;
    int64_t outputs;
  };
  const std::vector<Shape> shapes = {{{9, 8, 20, 20}, 32}, {{1, 16, 48, 48}, 32}, {{8, 8, 20, 20}, 4}};
  for (DType t : {kFloat32, kBFloat16}) {
    for (const Shape& s : shapes) {
      const Tensor x0 = rnd(s.input, 1, t), w0 = rnd({s.outputs, s.input[1], 3, 3}, 2, t), b0 = rnd({s.outputs}, 3, t);
      TensorList runs[2];
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        const Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(), b = b0.clone().requires_grad_();
        const Tensor y = F::conv2d(x, w, b, 1, 1);
        (y * y).sum().backward();
        runs[threads - 1] = {y.detach(), x.grad(), w.grad(), b.grad()};
      }
      for (size_t k = 0; k < 4; ++k) {
        EXPECT_TRUE(bitwise_equal(runs[0][k], runs[1][k])) << t << ", input " << IntArrayRef(s.input) << ", result " << k;
      }
    }
  }
}

}  // namespace
}  // namespace ember::testing
