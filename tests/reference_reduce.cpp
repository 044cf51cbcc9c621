// Reductions: the tuned kernels (reduce_driver.h's blocked sums, the index
// reductions) vs the plain folds of kernels/cpu/reduce/reduce_reference.h,
// over every dim subset of odd, 1-sized and empty shapes and non-contiguous
// inputs. Sums and means sum K = the reduced length (Note [Tolerances]);
// max/min and the index reductions move values and must match exactly.
#include <gtest/gtest.h>

#include "tests/op_info_inputs.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

const Shape kShapes[] = {{7}, {3, 5}, {1, 9, 1}, {4, 1, 6, 3}, {2, 0, 3}, {2, 300, 5}, {}};

// Every subset of the dims of an n-dim shape, as dim lists (the empty list reduces every dim).
std::vector<Shape> dim_subsets(int64_t n) {
  std::vector<Shape> out;
  for (int64_t mask = 0; mask < (int64_t{1} << n); ++mask) {
    Shape dims;
    for (int64_t d = 0; d < n; ++d) {
      if (mask & (int64_t{1} << d)) dims.push_back(d % 2 ? d - n : d);  // odd dims counted from the end
    }
    out.push_back(dims);
  }
  return out;
}

int64_t reduced_length(const Shape& shape, const Shape& dims) {
  if (dims.empty()) return numel_of(shape);
  int64_t k = 1;
  for (int64_t d : dims) k *= shape[d < 0 ? d + static_cast<int64_t>(shape.size()) : d];
  return k;
}

TEST(ReferenceReduce, SumMeanProdMatchOverEveryDimSubset) {
  std::mt19937 rng(51);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const Shape& shape : kShapes) {
      for (const Shape& dims : dim_subsets(static_cast<int64_t>(shape.size()))) {
        for (RefLayout layout : kRefLayouts) {
          for (bool keepdim : {false, true}) {
            SCOPED_TRACE(::testing::Message() << dtype << " " << IntArrayRef(shape) << " dims " << IntArrayRef(dims)
                                              << " " << layout_name(layout) << (keepdim ? " keepdim" : ""));
            const Tensor x = random_input(shape, dtype, layout, rng);
            const int64_t k = reduced_length(shape, dims);
            EXPECT_TRUE(tuned_matches_reference("sum", {arg(x), ints_arg(dims), bool_arg(keepdim), none_arg()}, k));
            EXPECT_TRUE(tuned_matches_reference("mean", {arg(x), ints_arg(dims), bool_arg(keepdim)}, k));
            // Products of values near 1 stay of order 1; each factor adds a rounding.
            const Tensor near_one = random_input(shape, dtype, layout, rng, 0.9, 1.1);
            EXPECT_TRUE(
                tuned_matches_reference("prod", {arg(near_one), ints_arg(dims), bool_arg(keepdim), none_arg()}, k));
          }
        }
      }
    }
  }
}

TEST(ReferenceReduce, SumIntoAWiderDtypeMatches) {
  std::mt19937 rng(52);
  const Tensor x = random_input({3, 257}, DType::Float32, RefLayout::Transposed, rng);
  EXPECT_TRUE(tuned_matches_reference("sum", {arg(x), ints_arg({1}), bool_arg(false), dtype_arg(DType::Float64)}, 257));
}

TEST(ReferenceReduce, ExtremesAndTheirIndicesMatchExactly) {
  std::mt19937 rng(53);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const Shape& shape : kShapes) {
      if (numel_of(shape) == 0) continue;  // no identity: an error, checked by the op-info rows
      const int64_t n = static_cast<int64_t>(shape.size());
      for (RefLayout layout : kRefLayouts) {
        const Tensor x = random_input(shape, dtype, layout, rng);
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(::testing::Message() << dtype << " " << IntArrayRef(shape) << " " << layout_name(layout)
                                            << (keepdim ? " keepdim" : ""));
          for (const Shape& dims : dim_subsets(n)) {
            for (const char* op : {"amax", "amin"})
              EXPECT_TRUE(tuned_matches_reference(op, {arg(x), ints_arg(dims), bool_arg(keepdim)}, 1, true))
                  << IntArrayRef(dims);
          }
          for (int64_t dim = -std::max<int64_t>(n, 1); dim < std::max<int64_t>(n, 1); ++dim) {
            for (const char* op : {"max_dim", "min_dim", "argmax", "argmin"})
              EXPECT_TRUE(tuned_matches_reference(op, {arg(x), int_arg(dim), bool_arg(keepdim)}, 1, true)) << dim;
          }
          for (const char* op : {"argmax", "argmin"})
            EXPECT_TRUE(tuned_matches_reference(op, {arg(x), none_arg(), bool_arg(keepdim)}, 1, true));
        }
      }
    }
  }
}

TEST(ReferenceReduce, ToleranceRejectsAPerturbedSum) {
  std::mt19937 rng(54);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor x = random_input({5, 1000}, dtype, RefLayout::Contiguous, rng);
    EXPECT_TRUE(perturbation_is_rejected("sum", {arg(x), ints_arg({1}), bool_arg(false), none_arg()}, 1000));
  }
}

}  // namespace
}  // namespace ember::testing
