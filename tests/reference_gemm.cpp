// mm, addmm and bmm: the tuned GEMM (through the dispatcher) vs the reference
// triple loop, called through its row in kernels/reference_kernels.h.
// K is the inner dim (Note [Tolerances]; addmm adds beta * self, one more term).
#include <gtest/gtest.h>

#include <limits>

#include "kernels/reference_kernels.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

struct MmShape {
  int64_t n, k, m;
};
// Odd sizes, 1-sized dims, empty products (k = 0 gives zeros), and sizes past the GEMM's blocks.
constexpr MmShape kShapes[] = {{1, 1, 1}, {3, 5, 7}, {1, 17, 1},   {33, 1, 9},
                               {0, 4, 3}, {4, 0, 3}, {65, 31, 70}, {130, 257, 3}};

TEST(ReferenceGemm, MmMatchesOnOddAndNonContiguousShapes) {
  std::mt19937 rng(1);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const MmShape& s : kShapes) {
      for (RefLayout la : kRefLayouts) {
        for (RefLayout lb : kRefLayouts) {
          SCOPED_TRACE(::testing::Message() << dtype << " " << s.n << "x" << s.k << "x" << s.m << " " << layout_name(la)
                                            << "/" << layout_name(lb));
          const Stack args = {IValue::Payload(random_input({s.n, s.k}, dtype, la, rng)),
                              IValue::Payload(random_input({s.k, s.m}, dtype, lb, rng))};
          EXPECT_TRUE(tuned_matches_reference("mm", args, s.k));
        }
      }
    }
  }
}

TEST(ReferenceGemm, AddmmMatchesWithBroadcastSelfAndScalars) {
  std::mt19937 rng(2);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const MmShape& s : kShapes) {
      for (const Shape& self_shape : {Shape{s.n, s.m}, Shape{s.m}, Shape{1, s.m}, Shape{s.n, 1}}) {
        for (double beta : {0.0, 1.0, -0.5}) {
          SCOPED_TRACE(::testing::Message() << dtype << " " << s.n << "x" << s.k << "x" << s.m << " self "
                                            << IntArrayRef(self_shape) << " beta " << beta);
          const Stack args = {IValue::Payload(random_input(self_shape, dtype, RefLayout::Stepped, rng)),
                              IValue::Payload(random_input({s.n, s.k}, dtype, RefLayout::Transposed, rng)),
                              IValue::Payload(random_input({s.k, s.m}, dtype, RefLayout::Contiguous, rng)),
                              IValue::Payload(Scalar(beta)), IValue::Payload(Scalar(1.5))};
          EXPECT_TRUE(tuned_matches_reference("addmm", args, s.k + 1));
        }
      }
    }
  }
}

TEST(ReferenceGemm, AddmmWithBetaZeroIgnoresNaNInSelf) {
  const Tensor self = full({2, 3}, std::numeric_limits<double>::quiet_NaN(), TensorOptions(DType::Float32));
  std::mt19937 rng(3);
  const Stack args = {IValue::Payload(self),
                      IValue::Payload(random_input({2, 4}, DType::Float32, RefLayout::Contiguous, rng)),
                      IValue::Payload(random_input({4, 3}, DType::Float32, RefLayout::Contiguous, rng)),
                      IValue::Payload(Scalar(0.0)), IValue::Payload(Scalar(1.0))};
  EXPECT_TRUE(tuned_matches_reference("addmm", args, 4));
  const Tensor out = find_cpu_reference("addmm")->run(args).at(0);
  EXPECT_FALSE(std::isnan(out.data_ptr<float>()[0]));
}

TEST(ReferenceGemm, BmmMatchesOnBatchesOfOddShapes) {
  std::mt19937 rng(4);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (int64_t batch : {0, 1, 3}) {
      for (const MmShape& s : kShapes) {
        for (RefLayout l : kRefLayouts) {
          SCOPED_TRACE(::testing::Message() << dtype << " batch " << batch << " " << s.n << "x" << s.k << "x" << s.m
                                            << " " << layout_name(l));
          const Stack args = {IValue::Payload(random_input({batch, s.n, s.k}, dtype, l, rng)),
                              IValue::Payload(random_input({batch, s.k, s.m}, dtype, RefLayout::Stepped, rng))};
          EXPECT_TRUE(tuned_matches_reference("bmm", args, s.k));
        }
      }
    }
  }
}

TEST(ReferenceGemm, ToleranceRejectsAPerturbedProduct) {
  std::mt19937 rng(5);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Stack args = {IValue::Payload(random_input({9, 40}, dtype, RefLayout::Contiguous, rng)),
                        IValue::Payload(random_input({40, 7}, dtype, RefLayout::Contiguous, rng))};
    EXPECT_TRUE(perturbation_is_rejected("mm", args, 40));
  }
}

TEST(ReferenceGemm, RejectsArgumentsItCannotTake) {
  const ReferenceKernel* mm = find_cpu_reference("mm");
  ASSERT_NE(mm, nullptr);
  const Tensor a = zeros({2, 3}), ints = zeros({3, 2}, TensorOptions(DType::Int64));
  EXPECT_THROW(mm->run({IValue::Payload(a)}), Error);                               // too few arguments
  EXPECT_THROW(mm->run({IValue::Payload(a), IValue::Payload(a)}), Error);           // shapes do not multiply
  EXPECT_THROW(mm->run({IValue::Payload(ints), IValue::Payload(ints)}), Error);     // int64: not covered
  EXPECT_THROW(mm->run({IValue::Payload(a), IValue::Payload(int64_t{3})}), Error);  // not a tensor
}

}  // namespace
}  // namespace ember::testing
