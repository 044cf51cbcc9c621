// Gradients of the composite ops, which have no formula of their own:
// gradcheck (finite differences, float64) of addcmul, addcdiv, clamp with
// tensor bounds, einsum (products, diagonals, ellipses, chains),
// baddbmm, kron, diag, trace, cdist, cosine_similarity, pairwise_distance,
// meshgrid and split; and hand-checked values where PyTorch picks a
// subgradient (clamp's ties, cdist at a zero distance).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/gradcheck.h"
#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using autograd::gradcheck;
using autograd::GradcheckResult;
using ::ember::testing::values;

Tensor input(IntArrayRef shape, uint64_t seed, double scale = 1.0) {
  Generator g(seed);
  return (randn(shape, kFloat64, &g) * scale).detach().requires_grad_();
}

// gradcheck of fn on inputs, reported under `what`.
void expect_gradients(const std::string& what, const autograd::GradcheckFunction& fn, const TensorList& inputs) {
  SCOPED_TRACE(what);
  const GradcheckResult r = gradcheck(fn, inputs);
  EXPECT_TRUE(r) << r.report;
}

TEST(CompositeGradients, AddcmulAndAddcdiv) {
  const Tensor s = input({3, 4}, 1), t1 = input({4}, 2), t2 = input({3, 1}, 3);
  expect_gradients("addcmul", [](const TensorList& x) { return TensorList{addcmul(x[0], x[1], x[2], 0.5)}; },
                   {s, t1, t2});
  const Tensor d = (input({3, 1}, 4).detach().abs() + 0.5).requires_grad_();
  expect_gradients("addcdiv", [](const TensorList& x) { return TensorList{addcdiv(x[0], x[1], x[2], -2)}; },
                   {s, t1, d});
}

TEST(CompositeGradients, ClampWithTensorBounds) {
  const Tensor x = input({3, 5}, 5), lo = input({5}, 6, 0.5), hi = (input({3, 1}, 7).detach().abs() + 0.7).requires_grad_();
  expect_gradients("clamp(x, lo, hi)", [](const TensorList& a) { return TensorList{clamp(a[0], a[1], a[2])}; },
                   {x, lo, hi});
  expect_gradients("clamp(x, lo)", [](const TensorList& a) { return TensorList{clamp(a[0], a[1])}; }, {x, lo});
}

// At x == min the gradient goes to x, as PyTorch's clamp; with min > max all of it goes to max.
TEST(CompositeGradients, ClampTiesAndCrossedBounds) {
  const Tensor x = ember::tensor({1.0, 2.0, 5.0}).requires_grad_();
  const Tensor lo = ember::tensor({1.0, 3.0, 4.0}).requires_grad_();
  const Tensor hi = ember::tensor({2.0, 2.5, 3.0}).requires_grad_();
  clamp(x, lo, hi).sum().backward();
  EXPECT_EQ(values(x.grad()), std::vector<double>({1, 0, 0}));
  EXPECT_EQ(values(lo.grad()), std::vector<double>({0, 0, 0}));  // x < lo only where lo > hi
  EXPECT_EQ(values(hi.grad()), std::vector<double>({0, 1, 1}));
}

TEST(CompositeGradients, Einsum) {
  struct Case {
    std::string equation;
    std::vector<std::vector<int64_t>> shapes;
  };
  const std::vector<Case> cases = {
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 2}}},  {"ii->i", {{3, 3}}},
      {"ii", {{3, 3}}},                          {"i,j->ij", {{3}, {2}}},
      {"...ij,...jk", {{2, 2, 3}, {3, 2}}},      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}},
      {"ij,ij->i", {{3, 1}, {3, 4}}},            {"iij->ji", {{2, 2, 3}}},
      {"bn,anm,bm->ba", {{2, 3}, {2, 3, 2}, {2, 2}}}};
  uint64_t seed = 10;
  for (const Case& c : cases) {
    TensorList inputs;
    for (const auto& s : c.shapes) inputs.push_back(input(s, seed++));
    const std::string eq = c.equation;
    expect_gradients(eq, [eq](const TensorList& x) { return TensorList{einsum(eq, x)}; }, inputs);
  }
}

TEST(CompositeGradients, MatrixComposites) {
  expect_gradients("baddbmm", [](const TensorList& x) { return TensorList{baddbmm(x[0], x[1], x[2], 0.5, -1.5)}; },
                   {input({3, 1}, 30), input({2, 3, 4}, 31), input({2, 4, 2}, 32)});
  expect_gradients("kron", [](const TensorList& x) { return TensorList{kron(x[0], x[1])}; },
                   {input({2, 3}, 33), input({2, 1, 2}, 34)});
  expect_gradients("diag(vector, 1)", [](const TensorList& x) { return TensorList{diag(x[0], 1)}; }, {input({3}, 35)});
  expect_gradients("diag(matrix, -1)", [](const TensorList& x) { return TensorList{diag(x[0], -1)}; },
                   {input({3, 4}, 36)});
  expect_gradients("trace", [](const TensorList& x) { return TensorList{trace(x[0])}; }, {input({3, 4}, 37)});
  expect_gradients("meshgrid", [](const TensorList& x) { return meshgrid(x, "xy"); }, {input({2}, 38), input({3}, 39)});
  expect_gradients("split", [](const TensorList& x) { return split(x[0], {1, 2}, 1); }, {input({2, 3}, 40)});
}

TEST(CompositeGradients, Distances) {
  for (double p : {2.0, 1.0, 3.0, std::numeric_limits<double>::infinity()}) {
    expect_gradients("cdist p=" + std::to_string(p),
                     [p](const TensorList& x) { return TensorList{cdist(x[0], x[1], p)}; },
                     {input({3, 4}, 41), input({2, 4}, 42)});
  }
  expect_gradients("cosine_similarity", [](const TensorList& x) { return TensorList{F::cosine_similarity(x[0], x[1])}; },
                   {input({3, 4}, 43), input({3, 4}, 44)});
  expect_gradients("pairwise_distance",
                   [](const TensorList& x) { return TensorList{F::pairwise_distance(x[0], x[1], 1.5)}; },
                   {input({3, 4}, 45), input({4}, 46)});
}

// A zero distance has the subgradient 0 (as PyTorch), not NaN.
TEST(CompositeGradients, CdistAtAZeroDistance) {
  const Tensor x = ember::tensor({1.0, 2.0, 3.0, 4.0}).reshape({2, 2}).detach().requires_grad_();
  cdist(x, x.detach()).sum().backward();
  for (double g : values(x.grad())) EXPECT_TRUE(std::isfinite(g)) << g;
}

}  // namespace
}  // namespace ember
