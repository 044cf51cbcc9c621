// Elementwise ops: the tuned TensorIterator/SIMD kernels vs the long double
// formulas of kernels/cpu/elementwise/elementwise_reference.h, on broadcast,
// odd-sized, 1-sized, empty and non-contiguous inputs. One rounding (and an
// elementary function's few ulp) per element: K = 1 (Note [Tolerances]).
#include <gtest/gtest.h>

#include <cstring>

#include "ember/unary_op_list.h"
#include "kernels/cpu/elementwise/elementwise_reference.h"
#include "tests/op_info_inputs.h"
#include "tests/reference_check.h"

namespace ember::testing {
namespace {

// Broadcasting pairs: equal shapes, a 1-sized dim, a missing leading dim, a 0-d operand, empty.
const std::pair<Shape, Shape> kPairs[] = {{{37}, {37}}, {{3, 5}, {3, 5}}, {{4, 1, 7}, {1, 6, 7}}, {{5, 3}, {3}},
                                          {{2, 3}, {}}, {{1}, {9, 1}},    {{0, 3}, {1, 3}},       {{2, 129}, {2, 129}}};

TEST(ReferenceElementwise, BinaryOpsMatchWithBroadcasting) {
  std::mt19937 rng(61);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (const auto& [sa, sb] : kPairs) {
      for (RefLayout la : kRefLayouts) {
        for (RefLayout lb : kRefLayouts) {
          SCOPED_TRACE(::testing::Message() << dtype << " " << IntArrayRef(sa) << " " << layout_name(la) << " with "
                                            << IntArrayRef(sb) << " " << layout_name(lb));
          const Tensor a = random_input(sa, dtype, la, rng, -4, 4);
          const Tensor b = random_input(sb, dtype, lb, rng, 0.5, 4);  // away from 0 for div
          for (const char* op : {"add", "sub"})
            EXPECT_TRUE(tuned_matches_reference(op, {arg(a), arg(b), arg(Scalar(-1.5))}, 2));
          for (const char* op : {"mul", "div", "maximum", "minimum"})
            EXPECT_TRUE(tuned_matches_reference(op, {arg(a), arg(b)}, 1));
        }
      }
    }
  }
}

TEST(ReferenceElementwise, MixedFloatDtypesPromote) {
  std::mt19937 rng(62);
  const Tensor a = random_input({4, 5}, DType::Float32, RefLayout::Stepped, rng);
  const Tensor b = random_input({5}, DType::Float64, RefLayout::Contiguous, rng, 0.5, 2);
  for (const char* op : {"mul", "div"}) EXPECT_TRUE(tuned_matches_reference(op, {arg(a), arg(b)}, 1));
}

// The input range of a unary op: inside its domain, away from its poles.
std::pair<double, double> domain_of(const std::string& op) {
  if (op == "log" || op == "log2" || op == "sqrt" || op == "rsqrt" || op == "reciprocal") return {0.1, 5};
  if (op == "acosh") return {1.1, 5};
  if (op == "asin" || op == "acos" || op == "atanh") return {-0.9, 0.9};
  if (op == "log1p") return {-0.5, 4};
  if (op == "tan") return {-1.2, 1.2};
  return {-6, 6};
}

TEST(ReferenceElementwise, UnaryOpsMatchOnOddAndStridedInputs) {
  std::mt19937 rng(63);
  const Shape shapes[] = {{1}, {67}, {3, 1, 5}, {0, 4}, {}, {2, 513}};
  for (const char* op : cpu::unary_reference_ops()) {
    const auto [lo, hi] = domain_of(op);
    for (DType dtype : {DType::Float32, DType::Float64}) {
      for (const Shape& shape : shapes) {
        for (RefLayout layout : kRefLayouts) {
          SCOPED_TRACE(::testing::Message()
                       << op << " " << dtype << " " << IntArrayRef(shape) << " " << layout_name(layout));
          EXPECT_TRUE(tuned_matches_reference(op, {arg(random_input(shape, dtype, layout, rng, lo, hi))}, 1));
        }
      }
    }
  }
}

TEST(ReferenceElementwise, EveryFloatingUnaryOpHasAReference) {
  const std::vector<const char*>& have = cpu::unary_reference_ops();
  auto has = [&](const char* name) {
    return std::any_of(have.begin(), have.end(), [&](const char* h) { return std::strcmp(h, name) == 0; });
  };
#define EMBER_EXPECT_REFERENCE(name) EXPECT_TRUE(has(#name)) << #name;
  EMBER_FORALL_UNARY_OPS(EMBER_EXPECT_REFERENCE)
#undef EMBER_EXPECT_REFERENCE
}

TEST(ReferenceElementwise, ParameterisedActivationsMatch) {
  std::mt19937 rng(64);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (RefLayout layout : kRefLayouts) {
      SCOPED_TRACE(::testing::Message() << dtype << " " << layout_name(layout));
      const Tensor x = random_input({7, 33}, dtype, layout, rng, -6, 6);
      EXPECT_TRUE(tuned_matches_reference("gelu", {arg(x), str_arg("none")}, 1));
      EXPECT_TRUE(tuned_matches_reference("gelu", {arg(x), str_arg("tanh")}, 1));
      EXPECT_TRUE(tuned_matches_reference("leaky_relu", {arg(x), arg(Scalar(0.2))}, 1));
      EXPECT_TRUE(tuned_matches_reference("elu", {arg(x), arg(Scalar(1.3))}, 1));
      EXPECT_TRUE(tuned_matches_reference("softplus", {arg(x), arg(Scalar(2.0)), arg(Scalar(5.0))}, 1));
    }
  }
}

TEST(ReferenceElementwise, FusedGroupMatchesItsUnfusedOps) {
  std::mt19937 rng(66);
  const std::string expr = "t0=mul(i0, i1); t1=tanh(t0); t2=sub(t1, i0, alpha=0.5); t3=sum(t2)";
  for (DType dtype : {DType::Float32, DType::Float64}) {
    for (RefLayout layout : kRefLayouts) {
      SCOPED_TRACE(::testing::Message() << dtype << " " << layout_name(layout));
      const TensorList inputs = {random_input({9, 31}, dtype, layout, rng), random_input({31}, dtype, layout, rng)};
      // Three roundings per element, then a sum of 279 terms.
      EXPECT_TRUE(
          tuned_matches_reference("_fused_elementwise", {arg(inputs), str_arg(expr.substr(0, expr.rfind(';')))}, 3));
      EXPECT_TRUE(tuned_matches_reference("_fused_elementwise", {arg(inputs), str_arg(expr)}, 3 * 279));
    }
  }
}

TEST(ReferenceElementwise, ToleranceRejectsAPerturbedResult) {
  std::mt19937 rng(65);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor x = random_input({50}, dtype, RefLayout::Contiguous, rng);
    EXPECT_TRUE(perturbation_is_rejected("tanh", {arg(x)}, 1));
    EXPECT_TRUE(perturbation_is_rejected("add", {arg(x), arg(x), arg(Scalar(1))}, 1));
  }
}

}  // namespace
}  // namespace ember::testing
