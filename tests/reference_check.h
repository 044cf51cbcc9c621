// Shared by the tests that compare ember's tuned CPU kernels with their plain
// references (tests/reference_<family>.cpp, kernels/reference_kernels.h).
//
// Each comparison calls the op through the dispatcher's boxed path (the tuned
// kernel) and the op's reference row's `run` on the same Stack, with 1 and 2
// intra-op threads, and compares every output with Note [Tolerances]
// (tests/op_info.cpp): the tolerance grows with K, the number of terms one
// output element accumulates, which each test derives from the shapes
// (GEMM: the inner dim; conv: C_in/groups x kernel volume; a reduction: the
// reduced length; a softmax or norm: the row length; attention: the key
// count and head dim).
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/op_info.h"

namespace ember::testing {

// How a random input is laid out in memory: the values are the same, only
// the strides differ.
enum class RefLayout : uint8_t {
  Contiguous,
  Transposed,  // the dims of a contiguous tensor permuted in reverse, then permuted back
  Stepped,     // every other element along the last dim of a larger tensor
};
inline constexpr RefLayout kRefLayouts[] = {RefLayout::Contiguous, RefLayout::Transposed, RefLayout::Stepped};
const char* layout_name(RefLayout l);

// Uniform values in [lo, hi), laid out as `layout` says.
Tensor random_input(const Shape& shape, DType dtype, RefLayout layout, std::mt19937& rng, double lo = -1,
                    double hi = 1);

// Runs `op` (tuned) and its CPU reference on `args` with 1 and then 2
// threads; every output must match within the tolerance for K.
::testing::AssertionResult tuned_matches_reference(const std::string& op, const Stack& args, int64_t accumulated,
                                                   bool exact = false);

// The check can fail: the reference's own output 0 with one element moved by
// 3 tolerances (for K) must be rejected, and the unmoved output accepted.
::testing::AssertionResult perturbation_is_rejected(const std::string& op, const Stack& args, int64_t accumulated);

}  // namespace ember::testing
