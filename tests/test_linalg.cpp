// ember::linalg's public functions (ember/linalg.h) beyond what the op-info
// rows check (tests/op_info_linalg_decompositions.cpp): solve's vector and
// left=False forms, lstsq, matrix_norm and vector_norm against host
// references in double (tests/linalg_reference.h), and the error messages.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ember/ember.h"
#include "tests/linalg_reference.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

using ref::Mat;

Tensor random(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, kFloat64, &g);
}

Tensor invertible(IntArrayRef sizes, uint64_t seed) {
  return random(sizes, seed) + eye(sizes.back(), std::nullopt, kFloat64) * 4;
}

Mat to_mat(const Tensor& t) {
  Mat m(t.size(0), t.size(1));
  m.v = values(t);
  return m;
}

Tensor to_tensor(const Mat& m) {
  Tensor t = empty({m.rows, m.cols}, kFloat64);
  std::copy(m.v.begin(), m.v.end(), t.data_ptr<double>());
  return t;
}

double infinity() { return std::numeric_limits<double>::infinity(); }

// ---- solve ----

TEST(Linalg, SolveTakesVectorsAndBatchesOfVectors) {
  const Tensor A = invertible({2, 3, 3}, 1), b = random({2, 3}, 2);
  const Tensor x = linalg::solve(A, b);
  ASSERT_EQ(x.sizes(), IntArrayRef({2, 3}));
  EXPECT_TRUE(all_close(A.matmul(x.unsqueeze(-1)).squeeze(-1), b, 1e-12, 1e-12));

  const Tensor v = random({3}, 3);
  const Tensor y = linalg::solve(A, v);  // one vector, broadcast over A's batch
  ASSERT_EQ(y.sizes(), IntArrayRef({2, 3}));
  EXPECT_TRUE(all_close(A.matmul(y.unsqueeze(-1)).squeeze(-1), v.expand({2, 3}), 1e-12, 1e-12));
}

TEST(Linalg, SolveWithLeftFalseSolvesXATimesEqualsB) {
  const Tensor A = invertible({2, 1, 3, 3}, 4), B = random({4, 2, 3}, 5);
  const Tensor X = linalg::solve(A, B, /*left=*/false);
  ASSERT_EQ(X.sizes(), IntArrayRef({2, 4, 2, 3}));
  EXPECT_TRUE(all_close(X.matmul(A), B.expand({2, 4, 2, 3}), 1e-12, 1e-12));

  const Tensor a = invertible({3, 3}, 6), row = random({3}, 7);
  EXPECT_TRUE(all_close(linalg::solve(a, row, false).unsqueeze(0).matmul(a).squeeze(0), row, 1e-12, 1e-12));
}

// ---- errors ----

TEST(Linalg, ErrorsNameTheOpTheBatchElementAndWhatWasExpected) {
  Tensor spd = eye(2, std::nullopt, kFloat64).repeat({5, 1, 1});
  spd.select(0, 3).copy_(tensor({1.0, 2.0, 2.0, 1.0}).view({2, 2}));
  EXPECT_EMBER_ERROR(linalg::cholesky(spd), "linalg.cholesky: the input is not positive-definite (batch element 3: "
                                            "the leading minor of order 2 is not positive)");
  EXPECT_EMBER_ERROR(linalg::cholesky(-eye(3, std::nullopt, kFloat64)),
                     "linalg.cholesky: the input is not positive-definite (the leading minor of order 1 is not "
                     "positive)");
  Tensor singular = invertible({3, 2, 2}, 8);
  singular.select(0, 2).select(1, 1).zero_();
  EXPECT_EMBER_ERROR(linalg::solve(singular, random({3, 2, 1}, 9)), "linalg.solve: A (shape [3, 2, 2]) is singular",
                     "batch element 2", "U[1, 1]");
  EXPECT_EMBER_ERROR(linalg::inv(singular), "linalg.inv: the input (shape [3, 2, 2]) is singular",
                     "batch element 2", "expected invertible matrices");
  EXPECT_EMBER_ERROR(linalg::inv(ones({3, 3}, kInt64)), "linalg.inv", "float32 or float64", "int64", "[3, 3]");
  EXPECT_EMBER_ERROR(linalg::det(ones({2, 3}, kFloat32)), "linalg.det", "square", "[2, 3]");
  EXPECT_EMBER_ERROR(linalg::svd(ones({4}, kFloat32)), "linalg.svd", "at least 2 dims", "[4]");
  EXPECT_EMBER_ERROR(linalg::qr(ones({2, 2}), "full"), "linalg.qr", "'reduced', 'complete' or 'r'", "'full'");
  EXPECT_EMBER_ERROR(linalg::eigh(ones({2, 2}), "lower"), "linalg.eigh", "'L' or 'U'");
  EXPECT_EMBER_ERROR(linalg::solve(invertible({3, 3}, 10), random({2, 1}, 11)), "linalg.solve", "incompatible",
                     "[3, 3]", "[2, 1]");
  EXPECT_EMBER_ERROR(linalg::solve(invertible({3, 3}, 10), random({3, 1}, 11).to(kFloat32)), "linalg.solve",
                     "same dtype");
}

TEST(Linalg, DeterminantsOfSingularMatricesAreZero) {
  const Tensor A = tensor({1.0, 2.0, 2.0, 4.0}).view({2, 2});
  EXPECT_EQ(linalg::det(A).item<double>(), 0.0);
  auto [sign, logabsdet] = linalg::slogdet(A);
  EXPECT_EQ(sign.item<double>(), 0.0);
  EXPECT_EQ(logabsdet.item<double>(), -infinity());
  EXPECT_EQ(linalg::det(empty({0, 0}, kFloat64)).item<double>(), 1.0);  // the empty product
}

// ---- lstsq ----

TEST(Linalg, LstsqOfAFullRankTallMatrixSolvesTheNormalEquations) {
  const Tensor A = random({6, 3}, 12), B = random({6, 2}, 13);
  const linalg::LstsqResult r = linalg::lstsq(A, B);
  const Mat a = to_mat(A), at = ref::transpose(a);
  const Mat x = ref::lu_solve(ref::lu(ref::matmul(at, a)), ref::matmul(at, to_mat(B)));
  EXPECT_TRUE(all_close(r.solution, to_tensor(x), 1e-10, 1e-12));
  EXPECT_TRUE(all_close(r.residuals, (A.matmul(r.solution) - B).pow(2).sum({0}), 1e-10, 1e-12));
  EXPECT_EQ(r.rank.dtype(), kInt64);
  EXPECT_EQ(r.rank.item<int64_t>(), 3);
  const ref::SVD s = ref::svd(a);
  EXPECT_TRUE(all_close(r.singular_values, tensor({s.S[0], s.S[1], s.S[2]}), 1e-12, 1e-12));
}

TEST(Linalg, LstsqGivesTheMinimumNormSolution) {
  // Underdetermined: X = A^T (A A^T)^{-1} B, and no residuals.
  const Tensor A = random({2, 4}, 14), B = random({2, 3}, 15);
  const linalg::LstsqResult r = linalg::lstsq(A, B);
  const Mat a = to_mat(A);
  const Mat x = ref::matmul(ref::transpose(a), ref::lu_solve(ref::lu(ref::matmul(a, ref::transpose(a))), to_mat(B)));
  EXPECT_TRUE(all_close(r.solution, to_tensor(x), 1e-10, 1e-12));
  EXPECT_EQ(r.residuals.numel(), 0);
  EXPECT_EQ(r.rank.item<int64_t>(), 2);

  // Rank-deficient tall (rank 2 of 3 columns): the solution has no component
  // along A's null space, and residuals are not reported (as gelsd).
  const Tensor deficient = random({5, 2}, 16).matmul(random({2, 3}, 17));
  const linalg::LstsqResult d = linalg::lstsq(deficient, random({5}, 18));
  ASSERT_EQ(d.solution.sizes(), IntArrayRef({3}));
  EXPECT_EQ(d.rank.item<int64_t>(), 2);
  EXPECT_EQ(d.residuals.numel(), 0);
  const Tensor null = std::get<2>(linalg::svd(deficient)).select(0, 2);  // the right singular vector of 0
  EXPECT_NEAR(d.solution.dot(null).item<double>(), 0.0, 1e-12);
}

// ---- norms ----

TEST(Linalg, MatrixNormsMatchTheirDefinitions) {
  const Tensor A = random({3, 4}, 19);
  const Mat a = to_mat(A);
  const ref::SVD s = ref::svd(a);
  double fro = 0, nuc = 0;
  for (double x : a.v) fro += x * x;
  for (double x : s.S) nuc += x;
  std::vector<double> row_sums(3, 0.0), col_sums(4, 0.0);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) {
      row_sums[static_cast<size_t>(i)] += std::fabs(a(i, j));
      col_sums[static_cast<size_t>(j)] += std::fabs(a(i, j));
    }
  auto norm = [&](const Tensor& t) { return t.item<double>(); };
  EXPECT_NEAR(norm(linalg::matrix_norm(A)), std::sqrt(fro), 1e-12);
  EXPECT_NEAR(norm(linalg::matrix_norm(A, "nuc")), nuc, 1e-12);
  EXPECT_NEAR(norm(linalg::matrix_norm(A, 2)), s.S.front(), 1e-12);
  EXPECT_NEAR(norm(linalg::matrix_norm(A, -2)), s.S.back(), 1e-12);
  EXPECT_NEAR(norm(linalg::matrix_norm(A, infinity())), *std::max_element(row_sums.begin(), row_sums.end()), 1e-12);
  EXPECT_NEAR(norm(linalg::matrix_norm(A, -infinity())), *std::min_element(row_sums.begin(), row_sums.end()), 1e-12);
  EXPECT_NEAR(norm(linalg::matrix_norm(A, 1)), *std::max_element(col_sums.begin(), col_sums.end()), 1e-12);
  EXPECT_NEAR(norm(linalg::matrix_norm(A, -1)), *std::min_element(col_sums.begin(), col_sums.end()), 1e-12);
}

TEST(Linalg, MatrixNormOverOtherDims) {
  const Tensor A = random({3, 2, 4}, 20);
  for (const double ord : {1.0, -2.0, infinity()}) {
    SCOPED_TRACE(ord);
    const Tensor n = linalg::matrix_norm(A, ord, {0, 2});
    ASSERT_EQ(n.sizes(), IntArrayRef({2}));
    for (int64_t k = 0; k < 2; ++k)
      EXPECT_NEAR(n[k].item<double>(), linalg::matrix_norm(A.select(1, k), ord).item<double>(), 1e-12);
    EXPECT_EQ(linalg::matrix_norm(A, ord, {0, 2}, true).sizes(), IntArrayRef({1, 2, 1}));
    // (columns, rows): the norm of the transposed matrices.
    EXPECT_TRUE(all_close(linalg::matrix_norm(A, ord, {2, 0}), linalg::matrix_norm(A.transpose(0, 2), ord, {0, 2}),
                          1e-12, 1e-12));
  }
  EXPECT_EQ(linalg::matrix_norm(A, "nuc", {-1, 0}, true).sizes(), IntArrayRef({1, 2, 1}));
}

TEST(Linalg, MatrixNormRefusesOtherOrdersAndBadDims) {
  const Tensor A = random({3, 3}, 21);
  EXPECT_EMBER_ERROR(linalg::matrix_norm(A, 3), "linalg.matrix_norm", "ord");
  EXPECT_EMBER_ERROR(linalg::matrix_norm(A, "spectral"), "linalg.matrix_norm", "'spectral'");
  EXPECT_EMBER_ERROR(linalg::matrix_norm(A, "fro", {1, 1}), "linalg.matrix_norm", "two different dims");
  EXPECT_EMBER_ERROR(linalg::matrix_norm(ones({3, 3}, kInt64)), "linalg.matrix_norm", "floating-point", "int64");
}

TEST(Linalg, VectorNormIsTheOrdNormOverDims) {
  const Tensor x = tensor({3.0, -4.0, 0.0, 1.0, -2.0, 2.0}).view({2, 3});
  EXPECT_NEAR(linalg::vector_norm(x).item<double>(), std::sqrt(34.0), 1e-12);
  EXPECT_NEAR(linalg::vector_norm(x, 1).item<double>(), 12.0, 1e-12);
  EXPECT_NEAR(linalg::vector_norm(x, infinity()).item<double>(), 4.0, 1e-12);
  EXPECT_NEAR(linalg::vector_norm(x, -infinity()).item<double>(), 0.0, 1e-12);
  EXPECT_NEAR(linalg::vector_norm(x, 0).item<double>(), 5.0, 1e-12);
  EXPECT_TRUE(all_close(linalg::vector_norm(x, 2, {1}), tensor({5.0, 3.0}), 1e-12, 1e-12));
  EXPECT_EQ(linalg::vector_norm(x, 2, {1}, true).sizes(), IntArrayRef({2, 1}));
  EXPECT_EQ(linalg::vector_norm(x.to(kFloat32), 2, {}, false, kFloat64).dtype(), kFloat64);
  EXPECT_NEAR(linalg::vector_norm(ones({4}, kInt64), 2, {}, false, kFloat32).item<double>(), 2.0, 1e-6);
  EXPECT_EMBER_ERROR(linalg::vector_norm(ones({4}, kInt64)), "linalg.vector_norm", "floating-point", "int64");
}

}  // namespace
}  // namespace ember::testing
