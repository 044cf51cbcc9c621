// The convolution and pooling layers (ember/nn/modules/conv.h, pooling.h):
// PyTorch's parameter names, shapes and init, forward equal to the F:: call,
// the padding modes, printing, errors that name the layer, gradients.
//   NnConv.*     Conv1d, Conv2d, ConvTranspose2d
//   NnPooling.*  MaxPool2d, AvgPool2d, AdaptiveAvgPool2d
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ember/nn/functional.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/pooling.h"
#include "tests/module_grad_check.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
namespace F = ember::nn::functional;

Tensor seeded(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, kFloat32, &g);
}

std::vector<std::string> names(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [name, t] : named) out.push_back(name);
  return out;
}

std::string printed(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }

// ---- Conv ----

TEST(NnConv, Conv2dParametersAreNamedAndShapedAsPyTorch) {
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3, 5}).groups(2));
  EXPECT_EQ(names(conv->named_parameters()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(conv->weight.sizes(), IntArrayRef({6, 2, 3, 5}));
  EXPECT_EQ(conv->bias.sizes(), IntArrayRef({6}));
  EXPECT_TRUE(conv->weight.requires_grad());

  nn::Conv2d no_bias(nn::Conv2dOptions(3, 8, 3).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(names(no_bias->named_parameters()), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(no_bias->state_dict().size(), 1u);

  nn::Conv1d conv1(16, 8, 5);
  EXPECT_EQ(conv1->weight.sizes(), IntArrayRef({8, 16, 5}));
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(6, 4, 2).groups(2));
  EXPECT_EQ(up->weight.sizes(), IntArrayRef({6, 2, 2, 2}));  // (in, out / groups, kH, kW)
  EXPECT_EQ(up->bias.sizes(), IntArrayRef({4}));
}

TEST(NnConv, DefaultInitIsKaimingUniformWithBoundOneOverSqrtFanIn) {
  manual_seed(11);
  nn::Conv2d conv(16, 32, 3);  // fan_in = 16 * 3 * 3 = 144: bound 1/12
  const double bound = 1.0 / 12.0;
  EXPECT_LE(max_abs(conv->weight), bound);
  EXPECT_GT(max_abs(conv->weight), 0.95 * bound);  // 4608 uniform draws reach near the edge
  EXPECT_LE(max_abs(conv->bias), bound);
  EXPECT_NEAR(conv->weight.mean().item<double>(), 0.0, 0.01);
  // ConvTranspose2d: fan_in from weight.size(1) = out / groups.
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(8, 4, 3));  // fan_in = 4 * 9 = 36: bound 1/6
  EXPECT_LE(max_abs(up->weight), 1.0 / 6.0);
  EXPECT_GT(max_abs(up->weight), 0.9 / 6.0);
  EXPECT_LE(max_abs(up->bias), 1.0 / 6.0);
}

TEST(NnConv, Conv2dForwardIsTheFunctionalCall) {
  nn::Conv2d conv(nn::Conv2dOptions(3, 6, {3, 2}).stride({2, 1}).padding({1, 0}).dilation(2).groups(3));
  const Tensor x = seeded({2, 3, 9, 7}, 1);
  const Tensor want = F::conv2d(x, conv->weight, conv->bias, {2, 1}, {1, 0}, 2, 3);
  EXPECT_TRUE(all_close(conv(x), want, 0, 0));
  EXPECT_EQ(conv(x).sizes(), IntArrayRef({2, 6, 4, 5}));  // (9 + 2 - 4 - 1) / 2 + 1, 7 - 2 - 1 + 1
  // Unbatched (C, H, W).
  EXPECT_TRUE(all_close(conv(x[1]), want[1], 1e-6, 1e-6));
}

TEST(NnConv, Conv1dForwardAndSamePadding) {
  nn::Conv1d conv(nn::Conv1dOptions(4, 5, 4).padding("same").dilation(2));
  const Tensor x = seeded({3, 4, 11}, 2);
  const Tensor y = conv(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({3, 5, 11}));
  EXPECT_TRUE(all_close(y, F::conv1d(x, conv->weight, conv->bias, 1, "same", 2), 0, 0));
}

TEST(NnConv, ReflectAndReplicatePaddingPadFirst) {
  const Tensor x = seeded({2, 2, 6, 5}, 3);
  for (const char* mode : {"reflect", "replicate"}) {
    SCOPED_TRACE(mode);
    nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).padding({1, 2}).padding_mode(mode));
    const Tensor want = F::conv2d(F::pad(x, {2, 2, 1, 1}, mode), conv->weight, conv->bias);
    EXPECT_TRUE(all_close(conv(x), want, 0, 0));
  }
  // "same" with an even kernel: total padding 3 per dim, the odd one after.
  nn::Conv2d same(nn::Conv2dOptions(2, 3, 4).padding("same").padding_mode("reflect"));
  const Tensor y = same(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3, 6, 5}));
  EXPECT_TRUE(all_close(y, F::conv2d(F::pad(x, {1, 2, 1, 2}, "reflect"), same->weight, same->bias), 0, 0));
}

TEST(NnConv, ConvTranspose2dOutputSizeAndForward) {
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 3, 3).stride(2).padding(1).output_padding(1));
  const Tensor x = seeded({2, 4, 5, 6}, 4);
  const Tensor y = up(x);
  // (H - 1) * 2 - 2 + (3 - 1) + 1 + 1 = 2 H
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3, 10, 12}));
  EXPECT_TRUE(all_close(y, F::conv_transpose2d(x, up->weight, up->bias, 2, 1, 1), 0, 0));
}

TEST(NnConv, PrintsWhatDiffersFromTheDefaults) {
  EXPECT_EQ(printed(*nn::Conv2d(nn::Conv2dOptions(3, 4, {3, 2}).stride({2, 1}).padding(1))),
            "Conv2d(3, 4, kernel_size=[3, 2], stride=[2, 1], padding=[1, 1])");
  EXPECT_EQ(printed(*nn::Conv1d(
                nn::Conv1dOptions(4, 6, 3).padding("same").dilation(2).groups(2).bias(false).padding_mode("reflect"))),
            "Conv1d(4, 6, kernel_size=[3], stride=[1], padding=same, dilation=[2], groups=2, bias=false, "
            "padding_mode=reflect)");
  EXPECT_EQ(printed(*nn::ConvTranspose2d(nn::ConvTranspose2dOptions(8, 4, 2).stride(2))),
            "ConvTranspose2d(8, 4, kernel_size=[2, 2], stride=[2, 2])");
}

TEST(NnConv, BadInputsNameTheLayer) {
  nn::Conv2d conv(3, 4, 3);
  EXPECT_EMBER_ERROR(conv(seeded({1, 4, 8, 8}, 5)), "Conv2d", "3 channels", "got 4", "[1, 4, 8, 8]");
  EXPECT_EMBER_ERROR(conv(seeded({8, 8}, 5)), "Conv2d", "3-D (unbatched) or 4-D (batched)");
  nn::Conv1d conv1(2, 2, 3);
  EXPECT_EMBER_ERROR(conv1(seeded({1, 3, 8}, 5)), "Conv1d", "2 channels");
  nn::ConvTranspose2d up(4, 2, 2);
  EXPECT_EMBER_ERROR(up(seeded({1, 2, 3, 3}, 5)), "ConvTranspose2d", "4 channels");
}

TEST(NnConv, BadOptionsNameTheLayer) {
  EXPECT_EMBER_ERROR(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)), "Conv2d", "divisible by groups (2)");
  EXPECT_EMBER_ERROR(nn::Conv2d(nn::Conv2dOptions(3, 4, {1, 2, 3})), "Conv2d", "kernel_size", "1 or 2 values");
  EXPECT_EMBER_ERROR(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding("same").stride(2)), "Conv2d", "same", "stride 1");
  EXPECT_EMBER_ERROR(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding("full")), "Conv2d", "\"full\"");
  EXPECT_EMBER_ERROR(nn::Conv1d(nn::Conv1dOptions(3, 4, 3).padding_mode("wrap")), "Conv1d", "padding_mode",
                     "\"wrap\"");
  EXPECT_EMBER_ERROR(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 3, 2).groups(2)), "ConvTranspose2d",
                     "divisible by groups");
  EXPECT_EMBER_ERROR(nn::Conv2d(0, 4, 3), "Conv2d", "positive");
}

TEST(NnConv, GradientsReachEveryParameter) {
  nn::Conv2d conv(nn::Conv2dOptions(2, 4, 3).padding(1).padding_mode("replicate"));
  nn::ConvTranspose2d up(4, 2, 2);
  nn::Conv1d conv1(2, 3, 2);
  conv->to(kFloat64);
  up->to(kFloat64);
  conv1->to(kFloat64);
  const Tensor x = seeded({2, 2, 5, 5}, 6).to(kFloat64);
  auto loss = [&] { return up(conv(x)).pow(2).sum() + conv1(x.select(3, 0)).pow(2).sum(); };
  expect_parameter_grads_match_finite_differences(*conv, loss);
  expect_parameter_grads_match_finite_differences(*up, loss);
  expect_parameter_grads_match_finite_differences(*conv1, loss);
}

// ---- pooling ----

TEST(NnPooling, ForwardIsTheFunctionalCall) {
  const Tensor x = seeded({2, 3, 9, 8}, 7);
  nn::MaxPool2d pool(2);  // stride defaults to the kernel
  EXPECT_EQ(pool->options.stride(), (std::vector<int64_t>{2, 2}));
  EXPECT_TRUE(all_close(pool(x), F::max_pool2d(x, 2), 0, 0));
  EXPECT_EQ(pool(x).sizes(), IntArrayRef({2, 3, 4, 4}));

  nn::MaxPool2d pool3(nn::MaxPool2dOptions({3, 2}).stride(2).padding({1, 0}).dilation({1, 2}).ceil_mode(true));
  const Tensor want = F::max_pool2d(x, {3, 2}, 2, {1, 0}, {1, 2}, true);
  EXPECT_TRUE(all_close(pool3(x), want, 0, 0));
  const auto [values, indices] = pool3->forward_with_indices(x);
  EXPECT_TRUE(all_close(values, want, 0, 0));
  EXPECT_EQ(indices.dtype(), kInt64);

  nn::AvgPool2d avg(nn::AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false).divisor_override(5));
  EXPECT_TRUE(all_close(avg(x), F::avg_pool2d(x, 3, 2, 1, false, false, 5), 0, 0));

  nn::AdaptiveAvgPool2d gap(1);
  EXPECT_TRUE(all_close(gap(x), x.mean({2, 3}, true), 1e-6, 1e-6));
  nn::AdaptiveAvgPool2d to_3x2(nn::AdaptiveAvgPool2dOptions({3, 2}));
  EXPECT_TRUE(all_close(to_3x2(x), F::adaptive_avg_pool2d(x, {3, 2}), 0, 0));
}

TEST(NnPooling, Printing) {
  EXPECT_EQ(printed(*nn::MaxPool2d(2)),
            "MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=false)");
  EXPECT_EQ(printed(*nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(1).count_include_pad(false))),
            "AvgPool2d(kernel_size=[3, 3], stride=[1, 1], padding=[0, 0], count_include_pad=false)");
  EXPECT_EQ(printed(*nn::AdaptiveAvgPool2d(1)), "AdaptiveAvgPool2d(output_size=[1, 1])");
}

TEST(NnPooling, BadArguments) {
  EXPECT_EMBER_ERROR(nn::MaxPool2d(nn::MaxPool2dOptions({1, 2, 3})), "MaxPool2d", "kernel_size", "1 or 2 values");
  EXPECT_EMBER_ERROR(nn::AvgPool2d(nn::AvgPool2dOptions(2).padding({1, 1, 1})), "AvgPool2d", "padding");
  nn::MaxPool2d pool(2);
  EXPECT_EMBER_ERROR(pool(seeded({4, 4}, 8)), "max_pool2d");
}

TEST(NnPooling, GradientsFlowThrough) {
  const Tensor x = seeded({1, 2, 6, 6}, 9).requires_grad_();
  nn::MaxPool2d pool(2);
  nn::AvgPool2d avg(2);
  nn::AdaptiveAvgPool2d gap(1);
  (pool(x).sum() + avg(x).sum() + gap(x).sum()).backward();
  ASSERT_TRUE(x.grad().defined());
  // Each 2x2 window gives its max 1, every element 1/4 (avg) and 1/36 (global).
  EXPECT_NEAR(x.grad().sum().item<double>(), 9.0 * 2 + 36.0 * 2 / 4 + 2.0, 1e-4);
}

}  // namespace
}  // namespace ember::testing
