// Second derivatives of the indexing ops: every backward is another op of the
// family (autograd/formulas_indexing.cpp), so gradgradcheck passes through them.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/gradcheck.h"

namespace ember {
namespace {

Tensor leaf(IntArrayRef shape, uint64_t seed) {
  manual_seed(seed);
  return randn(shape, kFloat64).requires_grad_();
}

void expect_second_derivatives(const autograd::GradcheckFunction& fn, const TensorList& inputs, const char* what) {
  const autograd::GradcheckResult first = autograd::gradcheck(fn, inputs);
  EXPECT_TRUE(first.ok) << what << ": " << first.report;
  const autograd::GradcheckResult second = autograd::gradgradcheck(fn, inputs);
  EXPECT_TRUE(second.ok) << what << ": " << second.report;
}

// The ops are linear in their floating inputs: a product makes the second derivative non-zero.
TEST(IndexingGradgrad, GatherScatterAndIndexSelectAreTwiceDifferentiable) {
  const Tensor x = leaf({4, 5}, 1), src = leaf({4, 3}, 2);
  manual_seed(3);
  const Tensor index = randint(0, 5, {4, 3});
  const Tensor rows = randint(0, 4, {6});
  expect_second_derivatives([&](const TensorList& in) { return TensorList{gather(in[0] * in[0], 1, index)}; }, {x},
                            "gather");
  expect_second_derivatives(
      [&](const TensorList& in) { return TensorList{scatter_add(in[0], 1, index, in[1] * in[1])}; }, {x, src},
      "scatter_add");
  expect_second_derivatives(
      [&](const TensorList& in) { return TensorList{index_select(in[0] * in[0], 0, rows)}; }, {x}, "index_select");
  expect_second_derivatives(
      [&](const TensorList& in) { return TensorList{index_add(in[0], 0, rows, in[1] * in[1], 0.5)}; },
      {x, leaf({6, 5}, 4)}, "index_add");
}

TEST(IndexingGradgrad, ShapingOpsAreTwiceDifferentiable) {
  const Tensor x = leaf({3, 4}, 5);
  const Tensor mask = (randn({1, 4}) > 0);
  expect_second_derivatives([&](const TensorList& in) { return TensorList{masked_select(in[0] * in[0], mask)}; },
                            {x}, "masked_select");
  expect_second_derivatives([](const TensorList& in) { return TensorList{repeat(in[0] * in[0], {2, 1, 3})}; }, {x},
                            "repeat");
  expect_second_derivatives([](const TensorList& in) { return TensorList{flip(in[0] * in[0], {0, 1})}; }, {x}, "flip");
  expect_second_derivatives([](const TensorList& in) { return TensorList{roll(in[0] * in[0], {1, -2}, {0, 1})}; },
                            {x}, "roll");
}

}  // namespace
}  // namespace ember
