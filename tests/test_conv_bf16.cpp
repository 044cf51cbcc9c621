// bfloat16 convolutions: where the CPU has the bf16 GEMM they unfold in bf16
// and multiply with gemm_bf16 into float32, rounded once; elsewhere they widen
// to float32. Either way each result is the float32 convolution of the same
// (bf16-valued) operands, rounded to bf16: equal up to the float32 addition
// order, so within one bf16 rounding step (2^-8 relative) of it.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/nn/functional/conv.h"
#include "tests/op_info.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

Tensor rnd_bf16(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, TensorOptions(kFloat64), &g).to(kBFloat16);
}

// One rounding of the float32 result to bf16 (2^-8 relative, taken as 2^-7 to
// cover a float32 sum that lands on the other side of a rounding boundary), and
// an absolute part for results that cancel to near zero.
constexpr double kRtol = 1.0 / 128, kAtol = 1e-2;

struct ConvCase {
  const char* name;
  std::vector<int64_t> input, weight;
  int64_t stride, padding, dilation, groups;
  bool transposed;
};

// Each case reaches one path of kernels/cpu/conv/conv_gemm.cpp in bf16: every
// GEMM at least 32 deep (below that kernels/cpu/conv/conv.cpp widens to float32),
// so at least 32 output channels per group and 32 output pixels.
const std::vector<ConvCase>& cases() {
  static const std::vector<ConvCase> all = {
      {"im2col, padding", {2, 16, 9, 9}, {32, 16, 3, 3}, 1, 1, 1, 1, false},
      {"stride, dilation, groups", {3, 16, 13, 11}, {64, 8, 3, 2}, 2, 1, 2, 2, false},
      {"pointwise", {2, 48, 7, 7}, {32, 48, 1, 1}, 1, 0, 1, 1, false},
      {"direct, depthwise", {2, 6, 12, 12}, {6, 1, 6, 6}, 1, 2, 1, 6, false},
      {"direct, few outputs", {2, 5, 8, 9}, {3, 5, 5, 5}, 1, 2, 1, 1, false},
      {"transposed", {2, 32, 6, 7}, {32, 10, 3, 3}, 2, 1, 1, 1, true},
      {"conv1d", {3, 16, 40}, {64, 8, 5}, 1, 2, 2, 2, false},
      {"shallow: widened", {2, 1, 10, 10}, {8, 1, 3, 3}, 1, 1, 1, 1, false},
  };
  return all;
}

Tensor convolve(const ConvCase& c, const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  if (c.transposed) return F::conv_transpose2d(x, w, b, c.stride, c.padding, 0, c.groups, c.dilation);
  if (c.input.size() == 3) return F::conv1d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  return F::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
}

int64_t bias_size(const ConvCase& c) { return c.transposed ? c.weight[1] * c.groups : c.weight[0]; }

TEST(ConvBf16, ForwardIsTheFloat32ConvolutionRounded) {
  for (const ConvCase& c : cases()) {
    const Tensor x = rnd_bf16(c.input, 1), w = rnd_bf16(c.weight, 2), b = rnd_bf16({bias_size(c)}, 3);
    for (const bool with_bias : {false, true}) {
      const std::optional<Tensor> bias = with_bias ? std::optional<Tensor>(b) : std::nullopt;
      const Tensor y = convolve(c, x, w, bias);
      EXPECT_EQ(y.dtype(), kBFloat16) << c.name;
      const std::optional<Tensor> bias32 = with_bias ? std::optional<Tensor>(b.to(kFloat32)) : std::nullopt;
      const Tensor ref = convolve(c, x.to(kFloat32), w.to(kFloat32), bias32);
      EXPECT_TRUE(all_close(y, ref, kRtol, kAtol)) << c.name << (with_bias ? ", bias" : "");
    }
  }
}

TEST(ConvBf16, GradientsAreTheFloat32GradientsRounded) {
  for (const ConvCase& c : cases()) {
    const Tensor x = rnd_bf16(c.input, 1), w = rnd_bf16(c.weight, 2), b = rnd_bf16({bias_size(c)}, 3);
    TensorList grads[2];
    for (const DType t : {kBFloat16, kFloat32}) {
      const Tensor xt = x.to(t).requires_grad_(), wt = w.to(t).requires_grad_(), bt = b.to(t).requires_grad_();
      const Tensor y = convolve(c, xt, wt, bt);
      // The same bf16-valued output gradient for both dtypes.
      const Tensor v = rnd_bf16(y.sizes(), 4).to(t);
      grads[t == kFloat32] = autograd::grad({(y * v).sum()}, {xt, wt, bt});
    }
    const char* names[] = {"input", "weight", "bias"};
    for (size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(grads[0][k].dtype(), kBFloat16) << c.name << ", " << names[k];
      // The weight and bias gradients sum over every pixel of every image: scale the absolute part.
      const double atol = k == 0 ? kAtol : kAtol * 10;
      EXPECT_TRUE(all_close(grads[0][k], grads[1][k], kRtol, atol)) << c.name << ", " << names[k];
    }
  }
}

}  // namespace
}  // namespace ember::testing
