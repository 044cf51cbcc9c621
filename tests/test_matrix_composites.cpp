// The matrix and shape composites against host references written here:
// baddbmm, kron, diag, trace, cdist (core/ops_matrix.cpp), split, chunk and
// meshgrid (core/ops_split.cpp), F::cosine_similarity and
// F::pairwise_distance (nn/functional_distance.cpp): values, shapes, dtypes,
// views, and each bad input's error.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

namespace F = nn::functional;
using ::ember::testing::all_close;
using ::ember::testing::values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor random(IntArrayRef shape, uint64_t seed, DType dtype = kFloat64) {
  Generator g(seed);
  return randn(shape, dtype, &g);
}

Tensor from(const std::vector<double>& v, IntArrayRef shape, DType dtype = kFloat64) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t.to(dtype).reshape(shape);
}

// ---- baddbmm ----

TEST(Baddbmm, IsBetaSelfPlusAlphaProduct) {
  const Tensor self = random({3, 1}, 1), b1 = random({2, 3, 4}, 2), b2 = random({2, 4, 5}, 3);
  const std::vector<double> s = values(self), x = values(b1), y = values(b2);
  std::vector<double> want(2 * 3 * 5);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int k = 0; k < 4; ++k) acc += x[(b * 3 + i) * 4 + k] * y[(b * 4 + k) * 5 + j];
        want[(b * 3 + i) * 5 + j] = 0.5 * s[i] - 2 * acc;
      }
  EXPECT_TRUE(all_close(baddbmm(self, b1, b2, 0.5, -2), from(want, {2, 3, 5}), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(self.baddbmm(b1, b2), self + b1.bmm(b2), 1e-12, 1e-12));
}

TEST(Baddbmm, BetaZeroIgnoresSelf) {
  const Tensor b1 = random({2, 3, 4}, 4), b2 = random({2, 4, 5}, 5);
  const Tensor out = baddbmm(full({2, 3, 5}, kNaN, kFloat64), b1, b2, 0, 1.5);
  EXPECT_TRUE(all_close(out, b1.bmm(b2) * 1.5, 1e-12, 1e-12));
}

TEST(Baddbmm, Errors) {
  const Tensor b1 = random({2, 3, 4}, 6), b2 = random({2, 4, 5}, 7);
  EXPECT_EMBER_ERROR(baddbmm(zeros({3}), b1, random({2, 5, 3}, 8)), "baddbmm", "[2, 3, 4]", "[2, 5, 3]");
  EXPECT_EMBER_ERROR(baddbmm(zeros({3}), b1.select(0, 0), b2), "baddbmm", "(b, n, k)");
  EXPECT_EMBER_ERROR(baddbmm(zeros({2, 2, 3, 5}), b1, b2), "baddbmm", "[2, 2, 3, 5]", "[2, 3, 5]");
}

// ---- kron ----

TEST(Kron, PlacesEveryProductBlockByBlock) {
  const Tensor a = from({1, 2, 3, 4}, {2, 2}, kInt64), b = from({0, 1, 1, 0}, {2, 2}, kInt64);
  const Tensor k = kron(a, b);
  EXPECT_EQ(k.dtype(), kInt64);
  EXPECT_EQ(values(k), std::vector<double>({0, 1, 0, 2, 1, 0, 2, 0, 0, 3, 0, 4, 3, 0, 4, 0}));
  // Fewer dims are padded with 1: (2, 3) x (3) -> (2, 9).
  const Tensor x = random({2, 3}, 9), v = random({3}, 10);
  const Tensor kv = x.kron(v);
  EXPECT_EQ(kv.sizes(), IntArrayRef({2, 9}));
  const std::vector<double> xs = values(x), vs = values(v), got = values(kv);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 9; ++j) EXPECT_EQ(got[i * 9 + j], xs[i * 3 + j / 3] * vs[j % 3]);
  EXPECT_EQ(kron(from({1, 2}, {2}, kInt32), from({0.5}, {1}, kFloat32)).dtype(), kFloat32);
  EXPECT_EQ(values(kron(full({}, 2.0), from({1, 3}, {2}))), std::vector<double>({2, 6}));
}

// ---- diag, trace ----

TEST(Diag, VectorToMatrixOnAnyDiagonal) {
  const Tensor v = from({1, 2}, {2});
  EXPECT_EQ(values(diag(v)), std::vector<double>({1, 0, 0, 2}));
  EXPECT_EQ(values(v.diag(1)), std::vector<double>({0, 1, 0, 0, 0, 2, 0, 0, 0}));
  EXPECT_EQ(values(diag(v, -1)), std::vector<double>({0, 0, 0, 1, 0, 0, 0, 2, 0}));
  EXPECT_EQ(diag(from({}, {0})).sizes(), IntArrayRef({0, 0}));
}

TEST(Diag, MatrixToACopyOfItsDiagonal) {
  const Tensor m = arange(6, kFloat64).reshape({2, 3});
  EXPECT_EQ(values(diag(m)), std::vector<double>({0, 4}));
  EXPECT_EQ(values(diag(m, 1)), std::vector<double>({1, 5}));
  EXPECT_EQ(values(diag(m, -1)), std::vector<double>({3}));
  EXPECT_EQ(diag(m, 5).numel(), 0);
  Tensor d = diag(m.t());
  d.fill_(9);  // a copy, not a view
  EXPECT_EQ(values(m)[0], 0);
  EXPECT_EMBER_ERROR(diag(zeros({1, 2, 3})), "diag", "vector or a matrix", "[1, 2, 3]");
  EXPECT_EMBER_ERROR(diag(full({}, 1.0)), "diag", "vector or a matrix");
}

TEST(Trace, SumsTheMainDiagonal) {
  EXPECT_EQ(trace(arange(6, kFloat64).reshape({2, 3})).item<double>(), 4);
  const Tensor ints = arange(9, kInt32).reshape({3, 3});
  EXPECT_EQ(ints.trace().dtype(), kInt64);
  EXPECT_EQ(ints.trace().item<int64_t>(), 12);
  EXPECT_EMBER_ERROR(trace(zeros({2, 3, 1})), "trace", "matrix", "[2, 3, 1]");
  EXPECT_EMBER_ERROR(trace(ones({2, 2}, kBool)), "trace", "bool");
}

// ---- split, chunk, meshgrid ----

TEST(SplitChunk, FreeFunctionsReturnViews) {
  const Tensor x = arange(10, kFloat64).reshape({5, 2});
  const TensorList parts = split(x, 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[2].sizes(), IntArrayRef({1, 2}));
  EXPECT_EQ(parts[1].data_ptr(), x[2].data_ptr());
  const TensorList sized = split(x, {1, 4});
  ASSERT_EQ(sized.size(), 2u);
  EXPECT_EQ(sized[1].sizes(), IntArrayRef({4, 2}));
  EXPECT_EQ(values(split_with_sizes(x, {1, 1}, 1)[1]), std::vector<double>({1, 3, 5, 7, 9}));
  EXPECT_EQ(x.split({3, 2}).size(), 2u);
  const TensorList chunks = chunk(x, 2, -1);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(values(chunks[0]), std::vector<double>({0, 2, 4, 6, 8}));
  EXPECT_EMBER_ERROR(split(x, {1, 1}), "split_with_sizes", "sum to 2");
  EXPECT_EMBER_ERROR(chunk(x, 0), "chunk", "positive");
}

TEST(Meshgrid, IjAndXyIndexing) {
  const Tensor a = from({1, 2}, {2}), b = from({10, 20, 30}, {3});
  const TensorList ij = meshgrid({a, b});
  ASSERT_EQ(ij.size(), 2u);
  EXPECT_EQ(ij[0].sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(values(ij[0]), std::vector<double>({1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(values(ij[1]), std::vector<double>({10, 20, 30, 10, 20, 30}));
  const TensorList xy = meshgrid({a, b, from({7, 8, 9, 6}, {4})}, "xy");
  EXPECT_EQ(xy[0].sizes(), IntArrayRef({3, 2, 4}));
  EXPECT_EQ(values(xy[0].select(2, 0)), std::vector<double>({1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(values(xy[1].select(2, 0)), std::vector<double>({10, 10, 20, 20, 30, 30}));
  EXPECT_EQ(values(xy[2][0][0]), std::vector<double>({7, 8, 9, 6}));
  EXPECT_EQ(meshgrid({full({}, 5.0, kFloat64), b})[0].sizes(), IntArrayRef({1, 3}));
  EXPECT_EQ(meshgrid({a}, "xy")[0].sizes(), IntArrayRef({2}));
  EXPECT_EQ(ij[0].data_ptr(), a.data_ptr());  // expanded views
}

TEST(Meshgrid, Errors) {
  const Tensor a = from({1, 2}, {2});
  EXPECT_EMBER_ERROR(meshgrid({}), "meshgrid", "non-empty");
  EXPECT_EMBER_ERROR(meshgrid({a}, "yx"), "meshgrid", "'ij' or 'xy'", "yx");
  EXPECT_EMBER_ERROR(meshgrid({a, zeros({2, 2})}), "meshgrid", "0-d or 1-d", "[2, 2]");
  EXPECT_EMBER_ERROR(meshgrid({a, a.to(kFloat32)}), "meshgrid", "one dtype", "float32");
}

// ---- cdist, cosine_similarity, pairwise_distance ----

double p_norm(const std::vector<double>& d, double p) {
  if (std::isinf(p)) {
    double m = 0;
    for (double x : d) m = std::max(m, std::fabs(x));
    return m;
  }
  double s = 0;
  for (double x : d) s += p == 0 ? (x != 0) : std::pow(std::fabs(x), p);
  return p == 0 ? s : std::pow(s, 1 / p);
}

TEST(Cdist, EveryPairOfRowsForEveryP) {
  const Tensor x1 = random({4, 3}, 11), x2 = random({5, 3}, 12);
  x2[1].copy_(x1[2]);
  const std::vector<double> a = values(x1), b = values(x2);
  for (double p : {2.0, 1.0, 0.5, 3.0, 0.0, kInf}) {
    SCOPED_TRACE(p);
    std::vector<double> want;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) {
        std::vector<double> d;
        for (int k = 0; k < 3; ++k) d.push_back(a[i * 3 + k] - b[j * 3 + k]);
        want.push_back(p_norm(d, p));
      }
    EXPECT_TRUE(all_close(cdist(x1, x2, p), from(want, {4, 5}), 1e-12, 1e-12));
  }
  EXPECT_EQ(values(cdist(x1, x2))[2 * 5 + 1], 0.0);  // equal rows: exactly 0
}

TEST(Cdist, BroadcastsBatchDims) {
  const Tensor x1 = random({2, 1, 3, 4}, 13), x2 = random({3, 2, 4}, 14);
  const Tensor d = cdist(x1, x2);
  EXPECT_EQ(d.sizes(), IntArrayRef({2, 3, 3, 2}));
  EXPECT_TRUE(all_close(d[1][2], cdist(x1[1][0], x2[2]), 1e-12, 1e-12));
  EXPECT_EQ(cdist(zeros({2, 0}), zeros({3, 0})).sizes(), IntArrayRef({2, 3}));
}

TEST(Cdist, Errors) {
  EXPECT_EMBER_ERROR(cdist(zeros({3}), zeros({4, 3})), "cdist", "at least 2 dims");
  EXPECT_EMBER_ERROR(cdist(zeros({2, 3}), zeros({4, 2})), "cdist", "same number of columns");
  EXPECT_EMBER_ERROR(cdist(zeros({2, 3}), zeros({4, 3}, kFloat64)), "cdist", "one dtype");
  EXPECT_EMBER_ERROR(cdist(zeros({2, 3}, kInt64), zeros({4, 3}, kInt64)), "cdist", "floating");
  EXPECT_EMBER_ERROR(cdist(zeros({2, 3}), zeros({4, 3}), -1), "cdist", "non-negative");
}

TEST(CosineSimilarity, DotOverClampedNorms) {
  const Tensor a = random({4, 5}, 15), b = random({4, 5}, 16);
  const std::vector<double> x = values(a), y = values(b);
  std::vector<double> want;
  for (int i = 0; i < 4; ++i) {
    double xy = 0, xx = 0, yy = 0;
    for (int k = 0; k < 5; ++k) {
      xy += x[i * 5 + k] * y[i * 5 + k];
      xx += x[i * 5 + k] * x[i * 5 + k];
      yy += y[i * 5 + k] * y[i * 5 + k];
    }
    want.push_back(xy / std::sqrt(xx * yy));
  }
  EXPECT_TRUE(all_close(F::cosine_similarity(a, b), from(want, {4}), 1e-12, 1e-12));
  // Tiny vectors: each squared norm is clamped to eps^2 on its own.
  const Tensor t1 = from({1e-5, 0, 3, 4}, {2, 2}), t2 = from({1e-5, 0, 1, 1e-9}, {2, 2});
  EXPECT_TRUE(all_close(F::cosine_similarity(t1, t2, 1, 1e-4), from({1e-10 / 1e-8, (3 + 4e-9) / 5}, {2}), 1e-12, 1e-15));
}

TEST(CosineSimilarity, BroadcastsPromotesAndRefusesIntegers) {
  const Tensor a = random({3, 4}, 17, kFloat32), v = random({4}, 18);
  const Tensor s = F::cosine_similarity(a, v, 1);
  EXPECT_EQ(s.dtype(), kFloat64);
  EXPECT_TRUE(all_close(s, F::cosine_similarity(a.to(kFloat64), v.expand({3, 4}), 1), 1e-12, 1e-12));
  EXPECT_EQ(F::cosine_similarity(a, v.to(kFloat32), -1).sizes(), IntArrayRef({3}));
  EXPECT_EMBER_ERROR(F::cosine_similarity(ones({3}, kInt64), ones({3}, kInt64), 0), "cosine_similarity", "floating");
  EXPECT_EMBER_ERROR(F::cosine_similarity(a, zeros({5, 4}), 1), "cosine_similarity", "broadcast");
  EXPECT_EMBER_ERROR(F::cosine_similarity(a, a, 2), "cosine_similarity", "dim 2");
}

TEST(PairwiseDistance, NormOfTheDifferencePlusEpsOverTheLastDim) {
  const Tensor a = random({3, 4}, 19), b = random({4}, 20);
  const std::vector<double> x = values(a), y = values(b);
  std::vector<double> want;
  for (int i = 0; i < 3; ++i) {
    std::vector<double> d;
    for (int k = 0; k < 4; ++k) d.push_back(x[i * 4 + k] - y[k] + 1e-6);
    want.push_back(p_norm(d, 1.5));
  }
  EXPECT_TRUE(all_close(F::pairwise_distance(a, b, 1.5), from(want, {3}), 1e-12, 1e-12));
  EXPECT_EQ(F::pairwise_distance(a, b, 2, 1e-6, true).sizes(), IntArrayRef({3, 1}));
  EXPECT_EQ(F::pairwise_distance(b, b).dim(), 0);
  EXPECT_NEAR(F::pairwise_distance(full({}, 1.0), full({}, 3.0)).item<double>(), 2 - 1e-6, 1e-7);
}

}  // namespace
}  // namespace ember
