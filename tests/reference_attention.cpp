// flash_attention (the fused kernel behind scaled_dot_product_attention) vs
// the materialised L x S reference of kernels/cpu/attention/attention_reference.h:
// odd lengths and head dims, broadcast batch dims, causal, bool and additive
// masks, rows with every key masked, non-contiguous operands. K is the longer
// of the two sums an output element goes through: E for a score, S for P V.
#include <gtest/gtest.h>

#include "tests/op_info_inputs.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

struct AttentionCase {
  Shape q, k, v;
};

const AttentionCase kCases[] = {
    {{2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 6}},
    {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}},
    {{3, 17, 16}, {3, 17, 16}, {3, 17, 16}},
    {{2, 1, 9, 4}, {1, 3, 13, 4}, {1, 3, 13, 5}},  // broadcast batch dims
    {{1, 2, 70, 33}, {1, 2, 130, 33}, {1, 2, 130, 7}},
    {{2, 4, 8}, {2, 0, 8}, {2, 0, 3}},  // no keys
};

int64_t accumulation(const AttentionCase& c) { return std::max(c.q.back(), c.k[c.k.size() - 2]); }

std::string describe(const AttentionCase& c) {
  std::ostringstream os;
  os << "q " << IntArrayRef(c.q) << " k " << IntArrayRef(c.k) << " v " << IntArrayRef(c.v);
  return os.str();
}

Stack attention_args(const AttentionCase& c, DType dtype, RefLayout layout, IValue mask, bool causal, IValue scale,
                     std::mt19937& rng) {
  return {arg(random_input(c.q, dtype, layout, rng, -2, 2)),
          arg(random_input(c.k, dtype, layout, rng, -2, 2)),
          arg(random_input(c.v, dtype, RefLayout::Stepped, rng)),
          std::move(mask),
          bool_arg(causal),
          std::move(scale)};
}

TEST(ReferenceAttention, MatchesWithoutMaskAndCausal) {
  std::mt19937 rng(41);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const AttentionCase& c : kCases) {
      for (RefLayout layout : kRefLayouts) {
        for (bool causal : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << dtype << " " << describe(c) << " " << layout_name(layout) << (causal ? " causal" : ""));
          EXPECT_TRUE(tuned_matches_reference("flash_attention",
                                              attention_args(c, dtype, layout, none_arg(), causal, none_arg(), rng),
                                              accumulation(c)));
          EXPECT_TRUE(tuned_matches_reference(
              "flash_attention", attention_args(c, dtype, layout, none_arg(), causal, arg(Scalar(0.3)), rng),
              accumulation(c)));
        }
      }
    }
  }
}

TEST(ReferenceAttention, MatchesWithBoolAndAdditiveMasks) {
  std::mt19937 rng(42);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const AttentionCase& c : kCases) {
      const int64_t L = c.q[c.q.size() - 2], S = c.k[c.k.size() - 2];
      // A bool mask (L, S) broadcast over the batch, about a third of the keys
      // masked, and the first query's keys all masked.
      std::vector<double> keep(static_cast<size_t>(L * S));
      for (size_t i = 0; i < keep.size(); ++i) keep[i] = i < static_cast<size_t>(S) ? 0 : (rng() % 3 != 0);
      const Tensor bool_mask = from_values({L, S}, DType::Bool, keep.empty() ? std::vector<double>{1} : keep);
      const Tensor additive = random_input({1, L, S}, dtype, RefLayout::Transposed, rng, -3, 1);
      for (const Tensor& mask : {bool_mask, additive}) {
        SCOPED_TRACE(::testing::Message() << dtype << " " << describe(c) << " mask " << mask.dtype());
        EXPECT_TRUE(tuned_matches_reference(
            "flash_attention", attention_args(c, dtype, RefLayout::Contiguous, arg(mask), false, none_arg(), rng),
            accumulation(c)));
      }
    }
  }
}

TEST(ReferenceAttention, ToleranceRejectsAPerturbedOutput) {
  std::mt19937 rng(43);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const AttentionCase& c = kCases[0];
    EXPECT_TRUE(perturbation_is_rejected(
        "flash_attention", attention_args(c, dtype, RefLayout::Contiguous, none_arg(), true, none_arg(), rng),
        accumulation(c)));
  }
}

}  // namespace
}  // namespace ember::testing
