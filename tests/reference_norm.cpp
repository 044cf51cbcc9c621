// The norm family's tuned kernels (norm.cpp, softmax.cpp) vs the two-pass
// textbook formulas of kernels/cpu/norm/norm_reference.h: outputs and the
// saved statistics, on odd and 1-sized shapes and non-contiguous inputs.
// K is the group length (the terms of the mean and the variance); the
// outputs multiply by rstd, which keeps them of order 1 (Note [Tolerances]).
#include <gtest/gtest.h>

#include "tests/op_info_inputs.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

constexpr DType kDTypes[] = {DType::Float32, DType::Float64};

TEST(ReferenceNorm, LayerNormAndRmsNormMatchOnRows) {
  std::mt19937 rng(31);
  struct Case {
    Shape input, normalized;
  };
  const Case cases[] = {{{4, 7}, {7}},       {{2, 3, 5}, {3, 5}}, {{1, 1}, {1}},         {{3, 1, 33}, {33}},
                        {{5, 1000}, {1000}}, {{0, 6}, {6}},       {{2, 2, 2, 3}, {2, 3}}};
  for (DType dtype : kDTypes) {
    for (const Case& c : cases) {
      for (RefLayout layout : kRefLayouts) {
        for (bool affine : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << dtype << " " << IntArrayRef(c.input) << " over " << IntArrayRef(c.normalized) << " "
                       << layout_name(layout) << (affine ? " affine" : ""));
          const Tensor x = random_input(c.input, dtype, layout, rng, -3, 3);
          const IValue w = affine ? arg(random_input(c.normalized, dtype, RefLayout::Stepped, rng)) : none_arg();
          const IValue b = affine ? arg(random_input(c.normalized, dtype, RefLayout::Contiguous, rng)) : none_arg();
          const int64_t k = numel_of(c.normalized);
          EXPECT_TRUE(
              tuned_matches_reference("layer_norm", {arg(x), ints_arg(c.normalized), w, b, float_arg(1e-5)}, k));
          EXPECT_TRUE(tuned_matches_reference("rms_norm", {arg(x), ints_arg(c.normalized), w, none_arg()}, k));
          EXPECT_TRUE(tuned_matches_reference("rms_norm", {arg(x), ints_arg(c.normalized), w, arg(Scalar(0.1))}, k));
        }
      }
    }
  }
}

TEST(ReferenceNorm, GroupNormMatchesForEveryGrouping) {
  std::mt19937 rng(32);
  struct Case {
    Shape input;
    int64_t groups;
  };
  // Groups of one element are left out: x - mean is then a rounding error
  // that rstd = 1 / sqrt(eps) magnifies, beyond any accumulation bound.
  const Case cases[] = {{{2, 6, 5, 3}, 3}, {{1, 4, 7}, 4},    {{3, 6, 2, 2, 2}, 2},
                        {{2, 5}, 1},       {{1, 8, 1, 1}, 2}, {{2, 4, 33, 9}, 2}};
  for (DType dtype : kDTypes) {
    for (const Case& c : cases) {
      for (RefLayout layout : kRefLayouts) {
        SCOPED_TRACE(::testing::Message()
                     << dtype << " " << IntArrayRef(c.input) << " groups " << c.groups << " " << layout_name(layout));
        const Tensor x = random_input(c.input, dtype, layout, rng, -2, 4);
        const IValue w = arg(random_input({c.input[1]}, dtype, RefLayout::Contiguous, rng));
        const IValue b = arg(random_input({c.input[1]}, dtype, RefLayout::Stepped, rng));
        const int64_t k = numel_of(c.input) / c.input[0] / c.groups;
        EXPECT_TRUE(tuned_matches_reference("group_norm", {arg(x), int_arg(c.groups), w, b, float_arg(1e-5)}, k));
        EXPECT_TRUE(tuned_matches_reference("group_norm",
                                            {arg(x), int_arg(c.groups), none_arg(), none_arg(), float_arg(0.1)}, k));
      }
    }
  }
}

TEST(ReferenceNorm, BatchNormMatchesInTrainingAndEvaluation) {
  std::mt19937 rng(33);
  const Shape inputs[] = {{4, 3, 5, 5}, {2, 7}, {3, 2, 9}, {1, 5, 2, 3}, {16, 4, 3, 3, 2}};
  for (DType dtype : kDTypes) {
    for (const Shape& in : inputs) {
      for (bool training : {true, false}) {
        for (RefLayout layout : kRefLayouts) {
          SCOPED_TRACE(::testing::Message() << dtype << " " << IntArrayRef(in) << (training ? " training " : " eval ")
                                            << layout_name(layout));
          const int64_t c = in[1];
          // Running statistics are updated in place while training; the outputs use the batch's.
          const Tensor rm = random_input({c}, dtype, RefLayout::Contiguous, rng);
          const Tensor rv = random_input({c}, dtype, RefLayout::Contiguous, rng, 0.5, 2);
          const Stack args = {arg(random_input(in, dtype, layout, rng, -1, 3)),
                              arg(random_input({c}, dtype, RefLayout::Contiguous, rng)),
                              arg(random_input({c}, dtype, RefLayout::Stepped, rng)),
                              arg(rm),
                              arg(rv),
                              bool_arg(training),
                              float_arg(0.1),
                              float_arg(1e-5)};
          EXPECT_TRUE(tuned_matches_reference("batch_norm", args, numel_of(in) / c));
        }
      }
    }
  }
}

TEST(ReferenceNorm, SoftmaxAndLogSoftmaxMatchAlongEveryDim) {
  std::mt19937 rng(34);
  const Shape shapes[] = {{5, 7}, {2, 3, 17}, {1, 1}, {3, 1, 4}, {4, 1000}, {0, 3}, {}};
  for (DType dtype : kDTypes) {
    for (const Shape& shape : shapes) {
      const int64_t n = static_cast<int64_t>(shape.size());
      for (int64_t dim = -std::max<int64_t>(n, 1); dim < std::max<int64_t>(n, 1); ++dim) {
        for (RefLayout layout : kRefLayouts) {
          SCOPED_TRACE(::testing::Message()
                       << dtype << " " << IntArrayRef(shape) << " dim " << dim << " " << layout_name(layout));
          const Tensor x = random_input(shape, dtype, layout, rng, -8, 8);
          const int64_t k = n == 0 ? 1 : shape[dim < 0 ? dim + n : dim];
          for (const char* op : {"softmax", "log_softmax"})
            EXPECT_TRUE(tuned_matches_reference(op, {arg(x), int_arg(dim), none_arg()}, k));
        }
      }
    }
  }
}

TEST(ReferenceNorm, ToleranceRejectsAPerturbedNormalisation) {
  std::mt19937 rng(35);
  for (DType dtype : kDTypes) {
    const Tensor x = random_input({6, 40}, dtype, RefLayout::Contiguous, rng);
    EXPECT_TRUE(
        perturbation_is_rejected("layer_norm", {arg(x), ints_arg({40}), none_arg(), none_arg(), float_arg(1e-5)}, 40));
    EXPECT_TRUE(perturbation_is_rejected("softmax", {arg(x), int_arg(1), none_arg()}, 40));
  }
}

}  // namespace
}  // namespace ember::testing
