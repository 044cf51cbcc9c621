// Gradients of ember::linalg beyond the op-info gradcheck (which runs every
// dispatched linalg op, tests/op_info_linalg_decompositions.cpp):
//   - the composites (solve's vector and left=False forms, lstsq,
//     matrix_norm for every ord, vector_norm) against finite differences;
//   - second derivatives of the primitives (their formulas are ember ops);
//   - the documented ill-conditioned cases (docs/linalg.md): repeated
//     singular values and eigenvalues, singular matrices, the modes of qr
//     that are not differentiable.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

using autograd::gradcheck;
using autograd::GradcheckResult;
using autograd::gradgradcheck;

Tensor input(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, kFloat64, &g).requires_grad_();
}

Tensor invertible(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return (randn(sizes, kFloat64, &g) + eye(sizes.back(), std::nullopt, kFloat64) * 4).requires_grad_();
}

// A symmetric positive-definite function of a free matrix (gradcheck moves every entry).
Tensor spd(const Tensor& m) { return m.matmul(m.transpose(-2, -1)) + eye(m.size(-1), std::nullopt, kFloat64); }

Tensor sym(const Tensor& m) { return m + m.transpose(-2, -1); }

#define EXPECT_GRADCHECK(fn, ...)                        \
  do {                                                   \
    const GradcheckResult r = gradcheck(fn, __VA_ARGS__); \
    EXPECT_TRUE(r) << r.report;                          \
  } while (0)

#define EXPECT_GRADGRADCHECK(fn, ...)                        \
  do {                                                       \
    const GradcheckResult r = gradgradcheck(fn, __VA_ARGS__); \
    EXPECT_TRUE(r) << r.report;                              \
  } while (0)

bool all_finite(const Tensor& t) {
  for (double v : values(t)) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// ---- composites ----

TEST(LinalgGradients, SolveVectorAndLeftFalse) {
  EXPECT_GRADCHECK([](const TensorList& in) { return TensorList{linalg::solve(in[0], in[1])}; },
                   {invertible({2, 3, 3}, 1), input({3}, 2)});
  EXPECT_GRADCHECK([](const TensorList& in) { return TensorList{linalg::solve(in[0], in[1], false)}; },
                   {invertible({2, 1, 3, 3}, 3), input({2, 4, 3}, 4)});
}

TEST(LinalgGradients, Lstsq) {
  auto solution = [](const TensorList& in) { return TensorList{linalg::lstsq(in[0], in[1]).solution}; };
  EXPECT_GRADCHECK(solution, {input({5, 3}, 5), input({5, 2}, 6)});  // overdetermined
  EXPECT_GRADCHECK(solution, {input({2, 4}, 7), input({2}, 8)});     // underdetermined, vector B
  auto with_residuals = [](const TensorList& in) {
    const linalg::LstsqResult r = linalg::lstsq(in[0], in[1]);
    return TensorList{r.solution, r.residuals};
  };
  EXPECT_GRADCHECK(with_residuals, {input({2, 6, 3}, 9), input({2, 6, 2}, 10)});
}

TEST(LinalgGradients, MatrixNormEveryOrd) {
  const Tensor A = input({2, 3, 4}, 11);
  for (const char* ord : {"fro", "nuc"}) {
    SCOPED_TRACE(ord);
    EXPECT_GRADCHECK([ord](const TensorList& in) { return TensorList{linalg::matrix_norm(in[0], ord)}; }, {A});
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (const double ord : {2.0, -2.0, 1.0, -1.0, inf, -inf}) {
    SCOPED_TRACE(ord);
    EXPECT_GRADCHECK([ord](const TensorList& in) { return TensorList{linalg::matrix_norm(in[0], ord, {0, 2}, true)}; },
                     {A});
  }
}

TEST(LinalgGradients, VectorNorm) {
  for (const double ord : {2.0, 1.0, 3.5, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(ord);
    EXPECT_GRADCHECK([ord](const TensorList& in) { return TensorList{linalg::vector_norm(in[0], ord, {1})}; },
                     {input({3, 4}, 12)});
  }
}

// ---- second derivatives of the primitives ----

TEST(LinalgGradients, SecondDerivatives) {
  EXPECT_GRADGRADCHECK([](const TensorList& in) { return TensorList{linalg::solve(in[0], in[1])}; },
                       {invertible({3, 3}, 13), input({3, 2}, 14)});
  EXPECT_GRADGRADCHECK([](const TensorList& in) { return TensorList{linalg::inv(in[0])}; }, {invertible({3, 3}, 15)});
  EXPECT_GRADGRADCHECK([](const TensorList& in) { return TensorList{linalg::det(in[0])}; }, {invertible({3, 3}, 16)});
  EXPECT_GRADGRADCHECK([](const TensorList& in) { return TensorList{std::get<1>(linalg::slogdet(in[0]))}; },
                       {invertible({3, 3}, 17)});
  EXPECT_GRADGRADCHECK([](const TensorList& in) { return TensorList{linalg::cholesky(spd(in[0]))}; },
                       {input({3, 3}, 18)});
  EXPECT_GRADGRADCHECK(
      [](const TensorList& in) {
        auto [Q, R] = linalg::qr(in[0]);
        return TensorList{Q, R};
      },
      {input({4, 3}, 19)});
  EXPECT_GRADGRADCHECK(
      [](const TensorList& in) {
        auto [L, V] = linalg::eigh(sym(in[0]));
        return TensorList{L, V};
      },
      {input({3, 3}, 20)});
  EXPECT_GRADGRADCHECK(
      [](const TensorList& in) {
        auto [U, S, Vh] = linalg::svd(in[0], false);
        return TensorList{U, S, Vh};
      },
      {input({4, 3}, 21)});
  EXPECT_GRADGRADCHECK([](const TensorList& in) { return TensorList{linalg::pinv(in[0])}; }, {input({4, 3}, 22)});
}

TEST(LinalgGradients, OpsReadingOneTriangleIgnoreTheOther) {
  // The same lower triangle with junk above it, or mirrored: the same
  // results and the same (symmetric) gradients.
  const Tensor lower = spd(input({4, 4}, 25).detach()).tril();
  const Tensor junk = lower + ones({4, 4}, kFloat64).triu(1) * 7, symmetric = lower + lower.tril(-1).t();
  auto gradient_of = [](const Tensor& a, const std::function<Tensor(const Tensor&)>& f) {
    const Tensor x = a.clone().requires_grad_();
    return autograd::grad({(f(x) * tensor({1.0, -2.0, 0.5, 3.0})).sum()}, {x})[0];
  };
  const std::vector<std::function<Tensor(const Tensor&)>> ops = {
      [](const Tensor& a) { return linalg::cholesky(a); },
      [](const Tensor& a) { return std::get<1>(linalg::eigh(a)); },
      [](const Tensor& a) { return linalg::pinv(a, std::nullopt, std::nullopt, true); },
  };
  for (size_t k = 0; k < ops.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_TRUE(all_close(ops[k](junk), ops[k](symmetric), 1e-12, 1e-12));
    EXPECT_TRUE(all_close(gradient_of(junk, ops[k]), gradient_of(symmetric, ops[k]), 1e-10, 1e-12));
  }
}

// ---- ill-conditioned points (docs/linalg.md) ----

TEST(LinalgGradients, RepeatedSingularValuesOnlyBreakTheVectorsGradient) {
  // The identity has one singular value, repeated: U and Vh are not determined.
  const Tensor I = eye(3, std::nullopt, kFloat64).requires_grad_();
  auto [U, S, Vh] = linalg::svd(I, false);
  const Tensor through_s = autograd::grad({S.sum()}, {I}, {}, true)[0];
  EXPECT_TRUE(all_close(through_s, eye(3, std::nullopt, kFloat64), 1e-12, 1e-12));
  const Tensor through_u = autograd::grad({U.sum()}, {I})[0];
  EXPECT_FALSE(all_finite(through_u)) << through_u;
  // The nuclear norm and the 2-norm read only S: finite.
  const Tensor nuc = autograd::grad({linalg::matrix_norm(I, "nuc")}, {I})[0];
  EXPECT_TRUE(all_close(nuc, eye(3, std::nullopt, kFloat64), 1e-12, 1e-12));
}

TEST(LinalgGradients, RepeatedEigenvaluesOnlyBreakTheVectorsGradient) {
  const Tensor I = eye(3, std::nullopt, kFloat64).requires_grad_();
  auto [L, V] = linalg::eigh(I);
  const Tensor through_l = autograd::grad({(L * tensor({1.0, 2.0, 3.0})).sum()}, {I}, {}, true)[0];
  EXPECT_TRUE(all_finite(through_l)) << through_l;
  EXPECT_FALSE(all_finite(autograd::grad({V.sum()}, {I})[0]));
}

TEST(LinalgGradients, DeterminantOfASingularMatrixHasTheAdjugateAsGradient) {
  // det [[1, 2], [2, 4]] = 0; d det / dA = [[4, -2], [-2, 1]] (the cofactors).
  const Tensor A = tensor({1.0, 2.0, 2.0, 4.0}).view({2, 2}).requires_grad_();
  const Tensor g = autograd::grad({linalg::det(A)}, {A})[0];
  EXPECT_TRUE(all_close(g, tensor({4.0, -2.0, -2.0, 1.0}).view({2, 2}), 1e-12, 1e-12)) << g;
  // A batch with one singular matrix: every matrix gets its cofactors.
  const Tensor batch = cat({A.detach().unsqueeze(0), eye(2, std::nullopt, kFloat64).unsqueeze(0) * 3}).requires_grad_();
  EXPECT_GRADCHECK([](const TensorList& in) { return TensorList{linalg::det(in[0])}; }, {batch});
}

TEST(LinalgGradients, SlogdetOfASingularMatrixHasNoGradient) {
  Tensor A = eye(3, std::nullopt, kFloat64).repeat({2, 1, 1});
  A.select(0, 1).select(0, 2).zero_();
  A.requires_grad_();
  EXPECT_EMBER_ERROR(autograd::grad({std::get<1>(linalg::slogdet(A)).sum()}, {A}), "linalg.slogdet",
                     "batch element 1", "singular");
  // The sign alone has a zero gradient, singular or not.
  const Tensor g = autograd::grad({std::get<0>(linalg::slogdet(A)).sum()}, {A}, {}, std::nullopt, false, true)[0];
  EXPECT_TRUE(!g.defined() || g.eq(0).all().item<bool>());
}

TEST(LinalgGradients, QrModesWithoutADerivativeSaySo) {
  const Tensor A = input({4, 3}, 23);
  EXPECT_EMBER_ERROR(autograd::grad({std::get<1>(linalg::qr(A, "r")).sum()}, {A}), "linalg.qr", "mode='r'");
  EXPECT_EMBER_ERROR(autograd::grad({std::get<0>(linalg::qr(A, "complete")).sum()}, {A}), "linalg.qr",
                     "mode='complete'");
  // complete with m <= n is the reduced factorisation: differentiable.
  EXPECT_GRADCHECK([](const TensorList& in) { return TensorList{std::get<0>(linalg::qr(in[0], "complete"))}; },
                   {input({3, 4}, 24)});
}

}  // namespace
}  // namespace ember::testing
