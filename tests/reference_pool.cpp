// 2-D pooling: the tuned kernels vs the window loops of
// kernels/cpu/pool/pool_reference.h, on odd planes, 1-sized dims, padding,
// dilation, ceil_mode, count_include_pad, divisor_override and
// non-contiguous inputs. Max pooling moves values, so it must match exactly
// (indices too); averages sum K = window size terms (Note [Tolerances]).
#include <gtest/gtest.h>

#include "tests/op_info_inputs.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

struct PoolCase {
  Shape input, kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

const PoolCase kCases[] = {
    {{2, 3, 7, 9}, {3}, {}, {0}, {1}},
    {{1, 2, 8, 8}, {2}, {2}, {0}, {1}},
    {{3, 5, 6}, {3, 2}, {2, 1}, {1, 0}, {1}},  // unbatched (C, H, W)
    {{1, 1, 1, 1}, {1}, {1}, {0}, {1}},
    {{2, 4, 11, 5}, {3, 3}, {2, 2}, {1, 1}, {2, 1}},
    {{1, 3, 10, 7}, {3}, {2}, {1}, {1}, true},
    {{2, 2, 5, 5}, {2}, {2}, {1}, {1}, true},
    {{1, 1, 13, 1}, {4, 1}, {3, 1}, {2, 0}, {1}, true},
    {{0, 3, 4, 4}, {2}, {2}, {0}, {1}},  // empty batch
};

std::string describe(const PoolCase& c) {
  std::ostringstream os;
  os << IntArrayRef(c.input) << " kernel " << IntArrayRef(c.kernel) << " stride " << IntArrayRef(c.stride)
     << " padding " << IntArrayRef(c.padding) << " dilation " << IntArrayRef(c.dilation)
     << (c.ceil_mode ? " ceil" : "");
  return os.str();
}

int64_t window_size(const PoolCase& c) { return c.kernel[0] * (c.kernel.size() > 1 ? c.kernel[1] : c.kernel[0]); }

TEST(ReferencePool, MaxPoolValuesAndIndicesMatchExactly) {
  std::mt19937 rng(21);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const PoolCase& c : kCases) {
      for (RefLayout layout : kRefLayouts) {
        SCOPED_TRACE(::testing::Message() << dtype << " " << describe(c) << " " << layout_name(layout));
        const Stack args = {arg(random_input(c.input, dtype, layout, rng)),
                            ints_arg(c.kernel),
                            ints_arg(c.stride),
                            ints_arg(c.padding),
                            ints_arg(c.dilation),
                            bool_arg(c.ceil_mode)};
        EXPECT_TRUE(tuned_matches_reference("max_pool2d_with_indices", args, 1, true));
        EXPECT_TRUE(tuned_matches_reference("max_pool2d", args, 1, true));
      }
    }
  }
}

TEST(ReferencePool, AvgPoolMatchesForEveryDivisorRule) {
  std::mt19937 rng(22);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const PoolCase& c : kCases) {
      for (bool count_include_pad : {true, false}) {
        for (std::optional<int64_t> divisor : {std::optional<int64_t>(), std::optional<int64_t>(5)}) {
          SCOPED_TRACE(::testing::Message() << dtype << " " << describe(c) << " count_include_pad " << count_include_pad
                                            << " divisor " << divisor.value_or(0));
          const Stack args = {arg(random_input(c.input, dtype, RefLayout::Transposed, rng)),
                              ints_arg(c.kernel),
                              ints_arg(c.stride),
                              ints_arg(c.padding),
                              bool_arg(c.ceil_mode),
                              bool_arg(count_include_pad),
                              divisor ? int_arg(*divisor) : none_arg()};
          EXPECT_TRUE(tuned_matches_reference("avg_pool2d", args, window_size(c)));
        }
      }
    }
  }
}

TEST(ReferencePool, AdaptiveAvgPoolMatchesForUnevenSplits) {
  std::mt19937 rng(23);
  const Shape inputs[] = {{2, 3, 7, 9}, {1, 5, 1, 13}, {4, 10, 10}, {1, 1, 3, 3}};
  const Shape outputs[] = {{1, 1}, {3, 4}, {7, 9}, {5}, {2, 11}};
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const Shape& in : inputs) {
      for (const Shape& out : outputs) {
        for (RefLayout layout : kRefLayouts) {
          SCOPED_TRACE(::testing::Message()
                       << dtype << " " << IntArrayRef(in) << " -> " << IntArrayRef(out) << " " << layout_name(layout));
          // A window spans at most ceil(H / oh) + 1 rows and as many columns.
          const int64_t k = (in[in.size() - 2] / out[0] + 2) * (in.back() / out.back() + 2);
          EXPECT_TRUE(tuned_matches_reference("adaptive_avg_pool2d",
                                              {arg(random_input(in, dtype, layout, rng)), ints_arg(out)}, k));
        }
      }
    }
  }
}

TEST(ReferencePool, ToleranceRejectsAPerturbedAverage) {
  std::mt19937 rng(24);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Stack args = {arg(random_input({2, 3, 8, 8}, dtype, RefLayout::Contiguous, rng)),
                        ints_arg({3}),
                        ints_arg({2}),
                        ints_arg({1}),
                        bool_arg(false),
                        bool_arg(true),
                        none_arg()};
    EXPECT_TRUE(perturbation_is_rejected("avg_pool2d", args, 9));
  }
}

}  // namespace
}  // namespace ember::testing
