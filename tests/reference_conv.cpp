// The convolution op's tuned kernels (im2col + GEMM, direct) vs the direct
// reference loops (kernels/cpu/conv/conv_reference.h): conv1d/2d/3d with
// groups, stride, padding, dilation, with and without bias, and
// conv_transpose2d, on odd and 1-sized shapes and non-contiguous operands.
// K = C_in / groups x kernel volume products, plus the bias (Note [Tolerances]).
#include <gtest/gtest.h>

#include "tests/op_info_inputs.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

struct ConvCase {
  Shape input, weight;  // (N, C_in, *spatial), ordinary: (C_out, C_in / groups, *kernel), transposed: (C_in, C_out /
                        // groups, *kernel)
  Shape stride, padding, dilation;
  int64_t groups = 1;
  bool transposed = false;
  Shape output_padding = {0};
};

std::string describe(const ConvCase& c) {
  std::ostringstream os;
  os << (c.transposed ? "conv_transpose " : "conv ") << IntArrayRef(c.input) << " * " << IntArrayRef(c.weight)
     << " stride " << IntArrayRef(c.stride) << " padding " << IntArrayRef(c.padding) << " dilation "
     << IntArrayRef(c.dilation) << " groups " << c.groups;
  return os.str();
}

int64_t accumulation(const ConvCase& c) {
  int64_t k = c.transposed ? c.weight[0] / c.groups : c.weight[1];
  for (size_t d = 2; d < c.weight.size(); ++d) k *= c.weight[d];
  return k + 1;
}

Stack conv_args(const ConvCase& c, DType dtype, RefLayout layout, bool with_bias, std::mt19937& rng) {
  const int64_t c_out = c.transposed ? c.weight[1] * c.groups : c.weight[0];
  return {arg(random_input(c.input, dtype, layout, rng)),
          arg(random_input(c.weight, dtype, layout == RefLayout::Transposed ? RefLayout::Stepped : layout, rng)),
          with_bias ? arg(random_input({c_out}, dtype, RefLayout::Stepped, rng)) : none_arg(),
          ints_arg(c.stride),
          ints_arg(c.padding),
          ints_arg(c.dilation),
          bool_arg(c.transposed),
          ints_arg(c.output_padding),
          int_arg(c.groups)};
}

const ConvCase kCases[] = {
    // conv2d: odd sizes, stride, padding, dilation, groups, depthwise, 1x1, 1-sized dims
    {{2, 3, 7, 9}, {5, 3, 3, 3}, {1}, {1}, {1}},
    {{1, 4, 11, 6}, {6, 2, 3, 2}, {2, 1}, {1, 0}, {1, 2}, 2},
    {{3, 6, 5, 5}, {6, 1, 3, 3}, {1}, {1}, {1}, 6},
    {{2, 7, 4, 5}, {3, 7, 1, 1}, {1}, {0}, {1}},
    {{1, 1, 1, 1}, {1, 1, 1, 1}, {1}, {0}, {1}},
    {{2, 3, 9, 8}, {4, 3, 2, 3}, {3, 2}, {1, 1}, {2, 1}},
    {{1, 16, 12, 12}, {32, 16, 3, 3}, {1}, {1}, {1}},
    {{0, 3, 5, 5}, {2, 3, 3, 3}, {1}, {0}, {1}},  // empty batch
    // conv1d and conv3d
    {{2, 3, 17}, {4, 3, 5}, {2}, {2}, {1}},
    {{1, 4, 10}, {4, 2, 3}, {1}, {0}, {3}, 2},
    {{1, 2, 4, 5, 3}, {3, 2, 2, 3, 1}, {1}, {1, 0, 0}, {1}},
    // conv_transpose2d
    {{2, 4, 5, 6}, {4, 3, 3, 3}, {2}, {1}, {1}, 1, true, {1}},
    {{1, 6, 3, 4}, {6, 2, 2, 3}, {1, 2}, {0, 1}, {2, 1}, 3, true, {0, 1}},
    {{1, 1, 1, 1}, {1, 5, 3, 3}, {1}, {0}, {1}, 1, true},
};

TEST(ReferenceConv, TunedMatchesDirectLoopsOnAwkwardShapes) {
  std::mt19937 rng(11);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const ConvCase& c : kCases) {
      for (RefLayout layout : kRefLayouts) {
        for (bool with_bias : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << dtype << " " << describe(c) << " " << layout_name(layout) << (with_bias ? " bias" : ""));
          EXPECT_TRUE(
              tuned_matches_reference("convolution", conv_args(c, dtype, layout, with_bias, rng), accumulation(c)));
        }
      }
    }
  }
}

TEST(ReferenceConv, TunedMatchesOnRandomShapes) {
  std::mt19937 rng(12);
  auto draw = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    ConvCase c;
    c.groups = draw(1, 3);
    const int64_t cin = c.groups * draw(1, 3), cout = c.groups * draw(1, 3), kh = draw(1, 4), kw = draw(1, 4);
    c.stride = {draw(1, 3), draw(1, 3)};
    c.dilation = {draw(1, 2), draw(1, 2)};
    c.padding = {draw(0, 2), draw(0, 2)};
    c.transposed = trial % 4 == 3;
    // An input at least as large as the dilated kernel, so the output is not empty.
    const int64_t h = draw(c.dilation[0] * (kh - 1) + 1, 12), w = draw(c.dilation[1] * (kw - 1) + 1, 12);
    c.input = {draw(1, 3), cin, h, w};
    c.weight = c.transposed ? Shape{cin, cout / c.groups, kh, kw} : Shape{cout, cin / c.groups, kh, kw};
    if (c.transposed) c.padding = {0, 0};  // keep (in - 1) * stride - 2 * padding + ... positive
    SCOPED_TRACE(describe(c));
    const DType dtype = trial % 2 ? DType::Float64 : DType::Float32;
    EXPECT_TRUE(tuned_matches_reference("convolution", conv_args(c, dtype, kRefLayouts[trial % 3], trial % 2, rng),
                                        accumulation(c)));
  }
}

TEST(ReferenceConv, ToleranceRejectsAPerturbedOutput) {
  std::mt19937 rng(13);
  const ConvCase c = kCases[0];
  for (DType dtype : {DType::Float32, DType::Float64})
    EXPECT_TRUE(perturbation_is_rejected("convolution", conv_args(c, dtype, RefLayout::Contiguous, true, rng),
                                         accumulation(c)));
}

}  // namespace
}  // namespace ember::testing
