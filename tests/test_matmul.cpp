// The matmul family (mm, bmm, addmm, dot, mv, matmul, linear, outer) against
// a naive reference written here in double precision.
//
// Tolerance: ember adds the k products of an element in some order in its
// accumulation type (float32 for f32/f16/bf16, float64 for f64), and each
// order is off from the exact sum by at most about k * eps/2 * sum_p |a_p b_p|.
// We allow (k + 4) * eps * sum_p |a_p b_p| (plus |beta * self| for addmm),
// and for f16/bf16 one more rounding of the result to the output dtype.
// Integer results are exact (uint8 modulo 256, as the dtype wraps).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ember/ember.h"
#include "ember/parallel.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::values;

const DType kAllMatmulDTypes[] = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8};

// A tensor of `shape` holding the row-major `vals`, converted to `dtype`.
Tensor from_values(IntArrayRef shape, const std::vector<double>& vals, DType dtype) {
  Tensor t = empty(shape, kFloat64);
  EXPECT_EQ(static_cast<size_t>(t.numel()), vals.size());
  if (!vals.empty()) std::memcpy(t.data_ptr<double>(), vals.data(), vals.size() * sizeof(double));
  return t.to(dtype);
}

// Random values for `dtype`: uniform in [-1, 1] for floating types, small
// integers for integer types (uint8: 0..2, so that sums stay small).
Tensor random_tensor(IntArrayRef shape, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> vals(static_cast<size_t>(n));
  if (is_floating_point(dtype)) {
    std::uniform_real_distribution<double> dist(-1, 1);
    for (double& v : vals) v = dist(rng);
  } else {
    std::uniform_int_distribution<int> dist(dtype == kUInt8 ? 0 : -4, dtype == kUInt8 ? 2 : 4);
    for (double& v : vals) v = dist(rng);
  }
  return from_values(shape, vals, dtype);
}

// The exact result of a product and, per element, the sum of the absolute
// values of its terms (what the rounding error scales with).
struct Expected {
  std::vector<int64_t> shape;
  std::vector<double> value, magnitude;
  int64_t k = 0;  // products per element
};

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t s : v) p *= s;
  return p;
}

// torch.matmul semantics, written out plainly: a 1-D left operand is a row
// vector and a 1-D right operand a column vector (their dim is dropped from
// the result); leading dims broadcast.
Expected naive_matmul(const Tensor& a, const Tensor& b) {
  const std::vector<double> va = values(a), vb = values(b);
  std::vector<int64_t> sa = a.sizes().vec(), sb = b.sizes().vec();
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  const int64_t n = sa[sa.size() - 2], k = sa.back(), m = sb.back();
  const size_t nd = std::max(sa.size(), sb.size()) - 2;
  std::vector<int64_t> ba(nd, 1), bb(nd, 1), batch(nd);
  std::copy(sa.begin(), sa.end() - 2, ba.begin() + static_cast<std::ptrdiff_t>(nd - (sa.size() - 2)));
  std::copy(sb.begin(), sb.end() - 2, bb.begin() + static_cast<std::ptrdiff_t>(nd - (sb.size() - 2)));
  for (size_t d = 0; d < nd; ++d) batch[d] = ba[d] == 1 ? bb[d] : ba[d];

  Expected e;
  e.k = k;
  e.shape = batch;
  if (!a_vec) e.shape.push_back(n);
  if (!b_vec) e.shape.push_back(m);
  const int64_t count = product(batch);
  e.value.assign(static_cast<size_t>(count * n * m), 0.0);
  e.magnitude.assign(e.value.size(), 0.0);
  for (int64_t t = 0; t < count; ++t) {
    int64_t rest = t, off_a = 0, off_b = 0, stride_a = 1, stride_b = 1;
    for (size_t d = nd; d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      if (ba[d] != 1) off_a += idx * stride_a;
      if (bb[d] != 1) off_b += idx * stride_b;
      stride_a *= ba[d];
      stride_b *= bb[d];
    }
    const double* pa = va.data() + off_a * n * k;
    const double* pb = vb.data() + off_b * k * m;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          sum += pa[i * k + p] * pb[p * m + j];
          mag += std::fabs(pa[i * k + p] * pb[p * m + j]);
        }
        e.value[static_cast<size_t>((t * n + i) * m + j)] = sum;
        e.magnitude[static_cast<size_t>((t * n + i) * m + j)] = mag;
      }
    }
  }
  return e;
}

// beta * self + alpha * (m1 @ m2), with self broadcast to (n, m).
Expected naive_addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, double beta, double alpha) {
  Expected e = naive_matmul(m1, m2);
  const std::vector<double> vs = values(self);
  const int64_t n = e.shape[0], m = e.shape[1];
  const int64_t rows = self.dim() == 2 ? self.size(0) : 1, cols = self.dim() >= 1 ? self.size(-1) : 1;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      const size_t o = static_cast<size_t>(i * m + j);
      const double s = vs[static_cast<size_t>((rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j))];
      const double bs = beta == 0 ? 0.0 : beta * s;
      e.value[o] = alpha * e.value[o] + bs;
      e.magnitude[o] = std::fabs(alpha) * e.magnitude[o] + std::fabs(bs);
    }
  }
  return e;
}

// Checks dtype, shape and every value against `e` within the bound in the file comment.
void expect_matches(const Tensor& got, const Expected& e, DType dtype) {
  ASSERT_EQ(got.dtype(), dtype);
  ASSERT_EQ(got.sizes().vec(), e.shape);
  const std::vector<double> g = values(got);
  ASSERT_EQ(g.size(), e.value.size());
  const double acc_eps = dtype == kFloat64 ? 0x1p-53 : 0x1p-24;
  const double out_eps = dtype == kFloat16 ? 0x1p-11 : dtype == kBFloat16 ? 0x1p-8 : 0.0;
  const double out_atol = dtype == kFloat16 ? 0x1p-24 : 0.0;  // f16 subnormal spacing
  for (size_t i = 0; i < g.size(); ++i) {
    if (!is_floating_point(dtype)) {
      const double want = dtype == kUInt8 ? std::fmod(e.value[i], 256.0) : e.value[i];
      ASSERT_EQ(g[i], want) << "element " << i;
      continue;
    }
    const double acc_err = static_cast<double>(e.k + 4) * acc_eps * e.magnitude[i];
    const double tol = acc_err + out_eps * (std::fabs(e.value[i]) + acc_err) + out_atol;
    ASSERT_LE(std::fabs(g[i] - e.value[i]), tol)
        << "element " << i << ": " << g[i] << " vs " << e.value[i] << " (" << dtype << ", k " << e.k << ")";
  }
}

// Runs f on 1 and on 2 threads and expects the same bytes.
template <class F>
void expect_same_bits_on_1_and_2_threads(F f) {
  const int saved = get_num_threads();
  set_num_threads(1);
  const Tensor one = f().contiguous();
  set_num_threads(2);
  const Tensor two = f().contiguous();
  set_num_threads(saved);
  ASSERT_EQ(one.sizes(), two.sizes());
  ASSERT_EQ(one.dtype(), two.dtype());
  EXPECT_EQ(std::memcmp(one.data_ptr(), two.data_ptr(), one.nbytes()), 0);
}

struct MmShape {
  int64_t n, k, m;
};

// ---- mm ----

TEST(MatmulMm, MatchesNaiveReferenceForEveryDtypeAndShape) {
  const MmShape shapes[] = {{1, 1, 1}, {2, 3, 4}, {7, 13, 5}, {17, 33, 9}, {31, 37, 41},
                            {64, 1, 64}, {1, 64, 1}, {100, 70, 130}, {3, 300, 2}};
  uint32_t seed = 1;
  for (DType dt : kAllMatmulDTypes) {
    for (const MmShape& s : shapes) {
      SCOPED_TRACE(::testing::Message() << dt << " " << s.n << "x" << s.k << "x" << s.m);
      const Tensor a = random_tensor({s.n, s.k}, dt, seed++), b = random_tensor({s.k, s.m}, dt, seed++);
      expect_matches(mm(a, b), naive_matmul(a, b), dt);
    }
  }
}

TEST(MatmulMm, TransposedAndSlicedInputsNeedNoCopyAndMatch) {
  for (DType dt : kAllMatmulDTypes) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor at = random_tensor({19, 11}, dt, 10).t();        // (11, 19), column-major
    const Tensor bt = random_tensor({23, 19}, dt, 11).t();        // (19, 23)
    const Tensor as = random_tensor({11, 40}, dt, 12).slice(1, 1, 39, 2);  // (11, 19), column stride 2
    const Tensor bs = random_tensor({40, 30}, dt, 13).slice(0, 2, 40, 2).narrow(1, 3, 23);  // (19, 23)
    ASSERT_FALSE(at.is_contiguous());
    ASSERT_FALSE(bs.is_contiguous());
    expect_matches(mm(at, bt), naive_matmul(at, bt), dt);
    expect_matches(mm(as, bs), naive_matmul(as, bs), dt);
    expect_matches(mm(at, bs), naive_matmul(at, bs), dt);
    expect_matches(mm(as, bt), naive_matmul(as, bt), dt);
  }
}

TEST(MatmulMm, EmptyInnerDimGivesZerosAndEmptyOuterDimsGiveEmptyResults) {
  for (DType dt : kAllMatmulDTypes) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor k0 = mm(empty({3, 0}, dt), empty({0, 4}, dt));
    EXPECT_EQ(k0.sizes().vec(), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(k0.dtype(), dt);
    EXPECT_EQ(values(k0), std::vector<double>(12, 0.0));
    EXPECT_EQ(mm(empty({0, 5}, dt), random_tensor({5, 4}, dt, 1)).sizes().vec(), (std::vector<int64_t>{0, 4}));
    EXPECT_EQ(mm(random_tensor({3, 5}, dt, 2), empty({5, 0}, dt)).sizes().vec(), (std::vector<int64_t>{3, 0}));
    EXPECT_EQ(mm(empty({0, 0}, dt), empty({0, 0}, dt)).sizes().vec(), (std::vector<int64_t>{0, 0}));
  }
}

TEST(MatmulMm, IntegerProductsWrapAroundLikeTheDtype) {
  // uint8: 200 * 2 + 100 * 1 = 500 = 244 (mod 256). int32: 2^30 * 4 = 2^32 = 0 (mod 2^32).
  EXPECT_EQ(values(mm(from_values({1, 2}, {200, 100}, kUInt8), from_values({2, 1}, {2, 1}, kUInt8))),
            std::vector<double>{244});
  EXPECT_EQ(values(mm(from_values({1, 1}, {1073741824.0}, kInt32), from_values({1, 1}, {4}, kInt32))),
            std::vector<double>{0});
  EXPECT_EQ(values(mm(from_values({1, 2}, {-3, 5}, kInt64), from_values({2, 1}, {7, -2}, kInt64))),
            std::vector<double>{-31});
}

TEST(MatmulMm, HandComputedValues) {
  const Tensor a = tensor({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).view({2, 3});
  const Tensor b = tensor({7.f, 8.f, 9.f, 10.f, 11.f, 12.f}).view({3, 2});
  EXPECT_EQ(values(mm(a, b)), (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(values(a.mm(b)), (std::vector<double>{58, 64, 139, 154}));
}

// ---- addmm ----

TEST(MatmulAddmm, AlphaBetaAndBroadcastSelfMatchReference) {
  const int64_t n = 9, k = 14, m = 11;
  const std::vector<std::vector<int64_t>> self_shapes = {{n, m}, {m}, {1, m}, {n, 1}, {1, 1}, {}};
  uint32_t seed = 100;
  for (DType dt : kAllMatmulDTypes) {
    for (const auto& ss : self_shapes) {
      SCOPED_TRACE(::testing::Message() << dt << " self " << IntArrayRef(ss));
      const Tensor self = random_tensor(ss, dt, seed++);
      const Tensor m1 = random_tensor({n, k}, dt, seed++), m2 = random_tensor({k, m}, dt, seed++);
      expect_matches(addmm(self, m1, m2), naive_addmm(self, m1, m2, 1, 1), dt);
      if (is_floating_point(dt)) {
        expect_matches(addmm(self, m1, m2, 0.5, -2.0), naive_addmm(self, m1, m2, 0.5, -2.0), dt);
      } else {
        expect_matches(addmm(self, m1, m2, 3, 2), naive_addmm(self, m1, m2, 3, 2), dt);
      }
    }
  }
}

TEST(MatmulAddmm, NonContiguousOperands) {
  for (DType dt : {kFloat32, kFloat64, kBFloat16, kInt64}) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor self = random_tensor({13, 6}, dt, 1).t();  // (6, 13)
    const Tensor m1 = random_tensor({20, 6}, dt, 2).t();    // (6, 20)
    const Tensor m2 = random_tensor({20, 26}, dt, 3).slice(1, 0, 26, 2);  // (20, 13)
    expect_matches(addmm(self, m1, m2, 2, 3), naive_addmm(self, m1, m2, 2, 3), dt);
  }
}

TEST(MatmulAddmm, BetaZeroIgnoresSelfEvenNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor self = full({4, 5}, nan, dt);
    const Tensor m1 = random_tensor({4, 3}, dt, 7), m2 = random_tensor({3, 5}, dt, 8);
    const Tensor out = addmm(self, m1, m2, 0, 1.5);
    expect_matches(out, naive_addmm(self, m1, m2, 0, 1.5), dt);
    for (double v : values(out)) EXPECT_FALSE(std::isnan(v));
    // k == 0 as well: the product is zero and self is still ignored.
    EXPECT_EQ(values(addmm(self, empty({4, 0}, dt), empty({0, 5}, dt), 0, 1)), std::vector<double>(20, 0.0));
  }
  // beta == 1 keeps a NaN in self.
  const Tensor out = addmm(full({2, 2}, nan), ones({2, 3}), ones({3, 2}));
  for (double v : values(out)) EXPECT_TRUE(std::isnan(v));
}

TEST(MatmulAddmm, EmptyInnerDimGivesBetaTimesSelf) {
  for (DType dt : kAllMatmulDTypes) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor self = random_tensor({3}, dt, 5);
    const Tensor out = addmm(self, empty({2, 0}, dt), empty({0, 3}, dt), 2, 7);
    expect_matches(out, naive_addmm(self, empty({2, 0}, dt), empty({0, 3}, dt), 2, 7), dt);
  }
}

// ---- bmm ----

TEST(MatmulBmm, MatchesReferenceForSmallAndLargeMatrices) {
  struct Case {
    int64_t batch, n, k, m;
  };
  const Case cases[] = {{1, 1, 1, 1}, {3, 2, 5, 4}, {7, 13, 3, 11}, {64, 4, 4, 4}, {2, 70, 80, 90}, {5, 1, 17, 1}};
  uint32_t seed = 200;
  for (DType dt : kAllMatmulDTypes) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << dt << " " << c.batch << "x" << c.n << "x" << c.k << "x" << c.m);
      const Tensor a = random_tensor({c.batch, c.n, c.k}, dt, seed++);
      const Tensor b = random_tensor({c.batch, c.k, c.m}, dt, seed++);
      expect_matches(bmm(a, b), naive_matmul(a, b), dt);
    }
  }
}

TEST(MatmulBmm, NonContiguousAndBroadcastBatchInputs) {
  for (DType dt : {kFloat32, kFloat64, kFloat16, kInt32}) {
    SCOPED_TRACE(::testing::Message() << dt);
    const Tensor a = random_tensor({4, 7, 5}, dt, 1).transpose(1, 2);   // (4, 5, 7)
    const Tensor b = random_tensor({7, 4, 6}, dt, 2).transpose(0, 1);   // (4, 7, 6), batch not outermost
    const Tensor shared = random_tensor({1, 7, 6}, dt, 3).expand({4, 7, 6});  // batch stride 0
    expect_matches(bmm(a, b), naive_matmul(a, b), dt);
    expect_matches(bmm(a, shared), naive_matmul(a, shared), dt);
  }
}

TEST(MatmulBmm, EmptyBatchAndEmptyInnerDim) {
  EXPECT_EQ(bmm(empty({0, 2, 3}), empty({0, 3, 4})).sizes().vec(), (std::vector<int64_t>{0, 2, 4}));
  const Tensor k0 = bmm(empty({2, 2, 0}), empty({2, 0, 3}));
  EXPECT_EQ(k0.sizes().vec(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(values(k0), std::vector<double>(12, 0.0));
}

// ---- dot, mv ----

TEST(MatmulDot, MatchesReferenceForLengthsStridesAndDtypes) {
  uint32_t seed = 300;
  for (DType dt : kAllMatmulDTypes) {
    for (int64_t n : {0, 1, 5, 33, 1000, 100003}) {
      SCOPED_TRACE(::testing::Message() << dt << " n " << n);
      const Tensor a = random_tensor({n}, dt, seed++), b = random_tensor({n}, dt, seed++);
      const Tensor out = dot(a, b);
      EXPECT_EQ(out.dim(), 0);
      expect_matches(out, naive_matmul(a, b), dt);
      // Strided views of the same length.
      const Tensor as = random_tensor({2 * n}, dt, seed++).slice(0, 0, 2 * n, 2);
      const Tensor bs = random_tensor({n, 3}, dt, seed++).select(1, 1);
      expect_matches(as.dot(bs), naive_matmul(as, bs), dt);
    }
  }
}

TEST(MatmulMv, RowMajorColumnMajorAndStridedMatrices) {
  uint32_t seed = 400;
  for (DType dt : kAllMatmulDTypes) {
    for (const MmShape& s : {MmShape{1, 1, 1}, MmShape{7, 5, 1}, MmShape{33, 70, 1}, MmShape{1100, 3, 1},
                             MmShape{5, 2000, 1}}) {
      SCOPED_TRACE(::testing::Message() << dt << " " << s.n << "x" << s.k);
      const Tensor v = random_tensor({s.k}, dt, seed++);
      const Tensor rows = random_tensor({s.n, s.k}, dt, seed++);
      const Tensor cols = random_tensor({s.k, s.n}, dt, seed++).t();  // column-major
      const Tensor strided = random_tensor({s.n, 2 * s.k}, dt, seed++).slice(1, 1, 2 * s.k, 2);
      const Tensor vs = random_tensor({3 * s.k}, dt, seed++).slice(0, 0, 3 * s.k, 3);
      expect_matches(mv(rows, v), naive_matmul(rows, v), dt);
      expect_matches(cols.mv(v), naive_matmul(cols, v), dt);
      expect_matches(mv(strided, vs), naive_matmul(strided, vs), dt);
    }
  }
}

TEST(MatmulMv, EmptyShapes) {
  EXPECT_EQ(values(mv(empty({3, 0}), empty({0}))), std::vector<double>(3, 0.0));
  EXPECT_EQ(mv(empty({0, 4}), ones({4})).sizes().vec(), std::vector<int64_t>{0});
}

// ---- matmul ----

TEST(MatmulMatmul, EveryRankCombinationMatchesTorchShapes) {
  struct Case {
    std::vector<int64_t> a, b, out;
  };
  const std::vector<Case> cases = {
      {{6}, {6}, {}},
      {{3, 4}, {4}, {3}},
      {{4}, {4, 3}, {3}},
      {{3, 4}, {4, 2}, {3, 2}},
      {{4}, {2, 4, 5}, {2, 5}},
      {{2, 3, 4}, {4}, {2, 3}},
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},
      {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},
      {{1, 3, 2, 4}, {2, 1, 4, 3}, {2, 3, 2, 3}},
      {{2, 2, 3, 4}, {4}, {2, 2, 3}},
      {{4}, {3, 1, 4, 2}, {3, 1, 2}},
      {{2, 0, 4}, {4, 3}, {2, 0, 3}},
      {{2, 3, 0}, {0, 5}, {2, 3, 5}},
      {{0, 3, 4}, {1, 4, 2}, {0, 3, 2}},
  };
  uint32_t seed = 500;
  for (DType dt : {kFloat32, kFloat64, kBFloat16, kInt64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::Message() << dt << " " << IntArrayRef(c.a) << " @ " << IntArrayRef(c.b));
      const Tensor a = random_tensor(c.a, dt, seed++), b = random_tensor(c.b, dt, seed++);
      const Tensor out = matmul(a, b);
      EXPECT_EQ(out.sizes().vec(), c.out);
      expect_matches(out, naive_matmul(a, b), dt);
      expect_matches(a.matmul(b), naive_matmul(a, b), dt);
    }
  }
}

TEST(MatmulMatmul, NonContiguousBatchedOperands) {
  const Tensor a = random_tensor({3, 4, 2, 5}, kFloat32, 1).permute({2, 0, 3, 1});  // (2, 3, 5, 4)
  const Tensor b = random_tensor({4, 6}, kFloat32, 2).t().t();                         // (4, 6)
  const Tensor c = random_tensor({6, 3, 4}, kFloat32, 3).permute({1, 2, 0});          // (3, 4, 6)
  expect_matches(matmul(a, b), naive_matmul(a, b), kFloat32);
  expect_matches(matmul(a, c), naive_matmul(a, c), kFloat32);
  expect_matches(matmul(a.select(0, 1), c), naive_matmul(a.select(0, 1), c), kFloat32);
}

// ---- linear ----

TEST(MatmulLinear, WithAndWithoutBiasFor1d2d3dInputs) {
  const int64_t in = 6, out = 5;
  uint32_t seed = 600;
  for (DType dt : {kFloat32, kFloat64, kBFloat16}) {
    const Tensor w = random_tensor({out, in}, dt, seed++), bias = random_tensor({out}, dt, seed++);
    const Tensor x3_noncontig = random_tensor({in, 3, 2}, dt, seed++).permute({2, 1, 0});  // (2, 3, in)
    for (const Tensor& x : {random_tensor({in}, dt, seed++), random_tensor({4, in}, dt, seed++),
                            random_tensor({2, 3, in}, dt, seed++), x3_noncontig}) {
      SCOPED_TRACE(::testing::Message() << dt << " input " << x.sizes());
      Expected e = naive_matmul(x, w.t());
      expect_matches(linear(x, w), e, dt);
      const std::vector<double> vb = values(bias);
      for (size_t i = 0; i < e.value.size(); ++i) {
        e.value[i] += vb[i % static_cast<size_t>(out)];
        e.magnitude[i] += std::fabs(vb[i % static_cast<size_t>(out)]);
      }
      expect_matches(linear(x, w, bias), e, dt);
    }
  }
}

TEST(MatmulLinear, HandComputed) {
  const Tensor x = tensor({1.f, 2.f});
  const Tensor w = tensor({1.f, 0.f, 0.f, 1.f, 1.f, 1.f}).view({3, 2});
  const Tensor b = tensor({10.f, 20.f, 30.f});
  EXPECT_EQ(values(linear(x, w, b)), (std::vector<double>{11, 22, 33}));
  EXPECT_EQ(linear(x.view({1, 1, 2}), w).sizes().vec(), (std::vector<int64_t>{1, 1, 3}));
}

// ---- outer ----

TEST(MatmulOuter, ValuesAndTypePromotion) {
  const Tensor a = tensor({1.f, -2.f, 3.f});
  const Tensor b = tensor({2.0, 0.5});
  const Tensor out = outer(a, b);
  EXPECT_EQ(out.dtype(), kFloat64);
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(out), (std::vector<double>{2, 0.5, -4, -1, 6, 1.5}));
  const Tensor ai = tensor({1, 2, 3}, kInt64), bi = tensor({4, 5}, kInt64);
  EXPECT_EQ(ai.outer(bi).dtype(), kInt64);
  EXPECT_EQ(values(outer(ai, bi)), (std::vector<double>{4, 5, 8, 10, 12, 15}));
  const Tensor strided = tensor({1.f, 9.f, 2.f, 9.f}).slice(0, 0, 4, 2);  // [1, 2]
  EXPECT_EQ(values(outer(strided, a)), (std::vector<double>{1, -2, 3, 2, -4, 6}));
  EXPECT_EQ(outer(empty({0}), a).sizes().vec(), (std::vector<int64_t>{0, 3}));
}

// ---- determinism ----

TEST(MatmulThreads, OneAndTwoThreadsGiveTheSameBits) {
  const Tensor a = random_tensor({150, 170}, kFloat32, 1), b = random_tensor({170, 190}, kFloat32, 2);
  expect_same_bits_on_1_and_2_threads([&] { return mm(a, b); });
  expect_same_bits_on_1_and_2_threads([&] { return mm(b.t(), a.t()); });
  expect_same_bits_on_1_and_2_threads([&] { return mm(a.to(kFloat64), b.to(kFloat64)); });
  expect_same_bits_on_1_and_2_threads([&] { return mm(a.to(kBFloat16), b.to(kBFloat16)); });
  expect_same_bits_on_1_and_2_threads([&] { return addmm(ones({190}), a, b, 0.5, 2); });
  const Tensor ai = random_tensor({150, 170}, kInt32, 3), bi = random_tensor({170, 190}, kInt32, 4);
  expect_same_bits_on_1_and_2_threads([&] { return mm(ai, bi); });
  const Tensor small_a = random_tensor({200, 8, 9}, kFloat32, 5), small_b = random_tensor({200, 9, 7}, kFloat32, 6);
  expect_same_bits_on_1_and_2_threads([&] { return bmm(small_a, small_b); });
  const Tensor big_a = random_tensor({3, 90, 80}, kFloat32, 7), big_b = random_tensor({3, 80, 100}, kFloat32, 8);
  expect_same_bits_on_1_and_2_threads([&] { return bmm(big_a, big_b); });
  const Tensor x = random_tensor({300000}, kFloat32, 9), y = random_tensor({300000}, kFloat32, 10);
  expect_same_bits_on_1_and_2_threads([&] { return dot(x, y); });
  const Tensor m = random_tensor({3000, 500}, kFloat32, 11), v = random_tensor({500}, kFloat32, 12);
  expect_same_bits_on_1_and_2_threads([&] { return mv(m, v); });
  const Tensor mt = random_tensor({500, 3000}, kFloat32, 13).t();
  expect_same_bits_on_1_and_2_threads([&] { return mv(mt, v); });
  const Tensor x4 = random_tensor({4, 1, 30, 40}, kFloat32, 14), y3 = random_tensor({5, 40, 20}, kFloat32, 15);
  expect_same_bits_on_1_and_2_threads([&] { return matmul(x4, y3); });
}

// ---- bad input ----

TEST(MatmulErrors, MmShapesDtypesAndBool) {
  EXPECT_EMBER_ERROR(mm(ones({2, 3}), ones({4, 5})), "mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EMBER_ERROR(mm(ones({2, 3, 4}), ones({4, 5})), "mm", "2-D", "[2, 3, 4]", "[4, 5]");
  EXPECT_EMBER_ERROR(mm(ones({2, 3}), ones({3})), "mm", "2-D", "[2, 3]", "[3]");
  EXPECT_EMBER_ERROR(mm(ones({2, 3}), ones({3, 4}, kFloat64)),
                     "mm: expected m1 and m2 to have the same dtype, but got: float32 != float64", "[2, 3]", "[3, 4]");
  EXPECT_EMBER_ERROR(mm(ones({2, 3}, kBool), ones({3, 4}, kBool)), "mm", "bool", "[2, 3]", "[3, 4]");
  EXPECT_EMBER_ERROR(mm(ones({2, 3}, kInt32), ones({3, 4}, kInt64)), "mm", "same dtype", "int32 != int64");
}

TEST(MatmulErrors, BmmShapes) {
  EXPECT_EMBER_ERROR(bmm(ones({3, 4}), ones({2, 4, 5})), "bmm", "3-D", "[3, 4]", "[2, 4, 5]");
  EXPECT_EMBER_ERROR(bmm(ones({2, 3, 4}), ones({3, 4, 5})), "bmm", "batch", "[2, 3, 4]", "[3, 4, 5]");
  EXPECT_EMBER_ERROR(bmm(ones({2, 3, 4}), ones({2, 5, 5})), "bmm", "cannot be multiplied", "2x3x4 and 2x5x5");
  EXPECT_EMBER_ERROR(bmm(ones({2, 3, 4}), ones({2, 4, 5}, kFloat64)), "bmm", "same dtype", "float32 != float64");
}

TEST(MatmulErrors, AddmmShapesAndDtypes) {
  EXPECT_EMBER_ERROR(addmm(ones({3, 4}), ones({2, 3}), ones({3, 4})), "addmm", "self", "[3, 4]", "[2, 4]");
  EXPECT_EMBER_ERROR(addmm(ones({1, 2, 4}), ones({2, 3}), ones({3, 4})), "addmm", "self", "[1, 2, 4]");
  EXPECT_EMBER_ERROR(addmm(ones({4}), ones({2, 3}), ones({5, 4})), "addmm", "2x3 and 5x4");
  EXPECT_EMBER_ERROR(addmm(ones({4}, kFloat64), ones({2, 3}), ones({3, 4})), "addmm", "self", "same dtype",
                     "float64 != float32");
  EXPECT_EMBER_ERROR(addmm(ones({4}, kBool), ones({2, 3}, kBool), ones({3, 4}, kBool), 0.5), "addmm", "bool");
  EXPECT_EMBER_ERROR(addmm(ones({4}, kInt64), ones({2, 3}, kInt64), ones({3, 4}, kInt64), 0.5), "addmm", "int64",
                     "beta and alpha must be integers", "0.5");
  EXPECT_EMBER_ERROR(addmm(ones({4}, kInt32), ones({2, 3}, kInt32), ones({3, 4}, kInt32), 1, 2.5), "addmm",
                     "must be integers", "2.5");
}

TEST(MatmulErrors, DotAndMvShapes) {
  EXPECT_EMBER_ERROR(dot(ones({3}), ones({4})), "dot", "different lengths", "[3]", "[4]");
  EXPECT_EMBER_ERROR(dot(ones({3, 1}), ones({3})), "dot", "1-D", "[3, 1]", "[3]");
  EXPECT_EMBER_ERROR(dot(ones({3}), ones({3}, kFloat64)), "dot", "same dtype", "float32 != float64");
  EXPECT_EMBER_ERROR(mv(ones({2, 3}), ones({4})), "mv", "cannot be multiplied", "2x3 and 4");
  EXPECT_EMBER_ERROR(mv(ones({2, 3}), ones({3, 1})), "mv", "[2, 3]", "[3, 1]");
  EXPECT_EMBER_ERROR(mv(ones({3}), ones({3})), "mv", "[3]");
  EXPECT_EMBER_ERROR(mv(ones({2, 3}), ones({3}, kInt64)), "mv", "same dtype", "float32 != int64");
}

TEST(MatmulErrors, MatmulLinearOuter) {
  EXPECT_EMBER_ERROR(matmul(scalar_tensor(1.0), ones({2, 2})), "matmul", "at least 1 dim", "[]", "[2, 2]");
  EXPECT_EMBER_ERROR(matmul(ones({2, 3, 4}), ones({5})), "matmul", "[2, 3, 4]", "[5]", "cannot be multiplied");
  EXPECT_EMBER_ERROR(matmul(ones({2, 3, 4}), ones({3, 4, 5})), "matmul");
  // Mixed dtypes are reported by the primitive a composite reaches (as in PyTorch).
  EXPECT_EMBER_ERROR(matmul(ones({3}), ones({3}, kFloat64)), "dot", "same dtype", "float32 != float64");
  EXPECT_EMBER_ERROR(linear(ones({2, 3}), ones({5, 3}, kFloat64)), "mm", "same dtype", "float32 != float64");
  EXPECT_EMBER_ERROR(linear(ones({2, 3}), ones({5, 4})), "linear", "[2, 3]", "[5, 4]");
  EXPECT_EMBER_ERROR(linear(scalar_tensor(1.0), ones({5, 4})), "linear", "at least 1 dim");
  EXPECT_EMBER_ERROR(outer(ones({3, 1}), ones({4})), "outer", "1-D", "[3, 1]", "[4]");
}

TEST(MatmulErrors, OperandsOnDifferentDevices) {
  // A tensor that claims to live on a GPU: the check fires before anything reads it.
  float fake[16] = {};
  const Tensor gpu2 = from_blob(fake, {2, 2}, Device::cuda()), gpu1 = from_blob(fake, {2}, Device::cuda());
  const Tensor gpu3 = from_blob(fake, {1, 2, 2}, Device::cuda());
  EXPECT_EMBER_ERROR(mm(ones({2, 2}), gpu2), "mm", "same device", "cpu", "cuda");
  EXPECT_EMBER_ERROR(bmm(ones({1, 2, 2}), gpu3), "bmm", "same device");
  EXPECT_EMBER_ERROR(addmm(gpu2, ones({2, 2}), ones({2, 2})), "addmm", "same device");
  EXPECT_EMBER_ERROR(dot(ones({2}), gpu1), "dot", "same device");
  EXPECT_EMBER_ERROR(mv(gpu2, ones({2})), "mv", "same device");
  EXPECT_EMBER_ERROR(matmul(ones({2, 2}), gpu2), "matmul", "same device");
  EXPECT_EMBER_ERROR(linear(ones({2, 2}), gpu2), "linear", "same device");
  EXPECT_EMBER_ERROR(linear(ones({2, 2}), ones({2, 2}), gpu1), "linear", "same device");
  EXPECT_EMBER_ERROR(outer(ones({2}), gpu1), "outer", "same device");
}

}  // namespace
}  // namespace ember
