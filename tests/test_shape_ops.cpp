// cat, stack, tril, triu, one_hot, sort and topk against references written
// here: shapes, dtypes (incl. promotion in cat), non-contiguous inputs, empty
// and 0-d tensors, negative dims, NaN ordering, ties, 1 vs 4 threads bitwise,
// and each bad input's error. Also the dims transpose and permute accept for
// a 0-d tensor (the views themselves are covered by the op-info rows).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ember::testing::ThreadCount;

using ::ember::testing::all_close;
using ::ember::testing::values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// A tensor of `shape` and `dtype` holding v[0], v[1], ... in row-major order.
Tensor from_values(const std::vector<double>& v, IntArrayRef shape, DType dtype = kFloat32) {
  Tensor host = empty({static_cast<int64_t>(v.size())}, kFloat64);
  std::copy(v.begin(), v.end(), host.data_ptr<double>());
  return host.to(dtype).reshape(shape);
}

// 0, 1, 2, ... (mod `wrap` when given, so small dtypes stay exact).
Tensor seq(IntArrayRef shape, DType dtype = kFloat32, int64_t wrap = 0) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(wrap > 0 ? i % wrap : i);
  return from_values(v, shape, dtype);
}

// A random permutation of n values start, start + step, ... (no ties).
std::vector<double> shuffled(int64_t n, uint32_t seed, double start = 0, double step = 1) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + step * static_cast<double>(i);
  std::mt19937 rng(seed);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

std::vector<int64_t> shape_of(const Tensor& t) { return t.sizes().vec(); }

// Bitwise equality of two tensors of the same dtype (contiguous copies compared).
bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// ---- transpose and permute of a 0-d tensor ----

// As in PyTorch, a 0-d tensor has the dims 0 and -1 only: transpose over them
// gives the tensor back (as a view), any other dim is an error.
// A transposed view copied into a contiguous tensor (the tiled path of
// copy_), with and without a dtype change, at sizes that are not a whole
// number of tiles, on 1 and 2 threads.
TEST(TransposeOp, ContiguousCopyOfATransposeMatchesElementByElement) {
  const Tensor x = arange(37 * 19, kFloat32).view({37, 19}) * 0.37;
  for (int threads : {1, 2}) {
    ThreadCount guard(threads);
    for (DType to : {kFloat32, kFloat64, kBFloat16, kInt32}) {
      Tensor y = empty({19, 37}, to);
      y.copy_(x.t());
      ASSERT_TRUE(y.is_contiguous());
      ASSERT_EQ(y.sizes(), (std::vector<int64_t>{19, 37}));
      for (int64_t r = 0; r < 19; ++r) {
        for (int64_t c = 0; c < 37; ++c) {
          ASSERT_EQ(y.index({r, c}).item<double>(), x.index({c, r}).to(to).item<double>())
              << to << " at (" << r << ", " << c << ")";
        }
      }
    }
  }
}

// As PyTorch's preserve_format: a dtype conversion keeps a permuted dense
// layout; a layout with gaps becomes contiguous.
TEST(TransposeOp, DtypeConversionKeepsADensePermutedLayout) {
  const Tensor x = arange(2 * 3 * 4, kFloat32).view({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1}).to(kFloat64);
  EXPECT_EQ(p.strides(), x.permute({2, 0, 1}).strides());
  EXPECT_EQ(values(p), values(x.permute({2, 0, 1})));
  const Tensor sliced = x.narrow(2, 0, 2).to(kFloat64);
  EXPECT_TRUE(sliced.is_contiguous());
  EXPECT_EQ(values(sliced), values(x.narrow(2, 0, 2)));
}

TEST(TransposeOp, ZeroDimAcceptsOnlyDimsZeroAndMinusOne) {
  const Tensor x = scalar_tensor(2.5);
  for (const auto& [d0, d1] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {-1, -1}, {0, -1}, {-1, 0}}) {
    SCOPED_TRACE(std::to_string(d0) + ", " + std::to_string(d1));
    const Tensor y = x.transpose(d0, d1);
    EXPECT_EQ(y.dim(), 0);
    EXPECT_EQ(y.item<double>(), 2.5);
    EXPECT_EQ(y.impl()->storage().get(), x.impl()->storage().get());
  }
  EXPECT_EQ(x.t().dim(), 0);
  EXPECT_EMBER_ERROR(x.transpose(0, 1), "transpose", "dim 1", "out of range", "[-1, 0]");
  EXPECT_EMBER_ERROR(x.transpose(1, 0), "transpose", "dim 1", "out of range");
  EXPECT_EMBER_ERROR(x.transpose(-2, 0), "transpose", "dim -2", "out of range");
}

TEST(TransposeOp, PermuteOfZeroDimTakesAnEmptyDimList) {
  const Tensor x = scalar_tensor(2.5);
  const Tensor y = x.permute({});
  EXPECT_EQ(y.dim(), 0);
  EXPECT_EQ(y.item<double>(), 2.5);
  EXPECT_EMBER_ERROR(x.permute({0}), "permute", "expected 0 dims");
  EXPECT_EMBER_ERROR(x.permute({-1}), "permute", "expected 0 dims");
  EXPECT_EMBER_ERROR(x.permute({0, 1}), "permute", "expected 0 dims");
}

// ---- reference cat: out[..., c, ...] from the input holding column c ----
std::vector<double> ref_cat(const std::vector<Tensor>& ts, int64_t d, const std::vector<int64_t>& out_shape) {
  int64_t outer = 1, inner = 1;
  for (int64_t j = 0; j < d; ++j) outer *= out_shape[j];
  for (size_t j = d + 1; j < out_shape.size(); ++j) inner *= out_shape[j];
  std::vector<double> out;
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor& t : ts) {
      if (t.dim() == 1 && t.size(0) == 0) continue;
      const std::vector<double> v = values(t);
      const int64_t block = t.size(d) * inner;
      out.insert(out.end(), v.begin() + o * block, v.begin() + (o + 1) * block);
    }
  }
  return out;
}

TEST(CatOp, JoinsAlongEachDimIncludingNegative) {
  const Tensor a = seq({2, 3, 4}), b = seq({2, 3, 4}).add(100);
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    const int64_t d = dim < 0 ? dim + 3 : dim;
    std::vector<int64_t> shape = {2, 3, 4};
    shape[d] *= 2;
    const Tensor out = cat({a, b}, dim);
    EXPECT_EQ(shape_of(out), shape) << "dim " << dim;
    EXPECT_EQ(values(out), ref_cat({a, b}, d, shape)) << "dim " << dim;
  }
}

TEST(CatOp, UnequalSizesAlongDim) {
  const Tensor a = seq({2, 3}), b = seq({1, 3}).add(10), c = seq({3, 3}).add(20);
  const Tensor out = cat({a, b, c}, 0);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{6, 3}));
  EXPECT_EQ(values(out), ref_cat({a, b, c}, 0, {6, 3}));
  const Tensor x = seq({2, 1, 2}), y = seq({2, 3, 2}).add(50);
  EXPECT_EQ(values(cat({x, y}, 1)), ref_cat({x, y}, 1, {2, 4, 2}));
}

TEST(CatOp, NonContiguousInputsMixWithContiguousOnes) {
  const Tensor t = seq({3, 4}).t();                               // (4, 3), transposed
  const Tensor s = seq({4, 6}).add(100).slice(1, 0, 6, 2);        // (4, 3), strided
  const Tensor c = seq({4, 3}).add(200);                          // contiguous
  const Tensor e = seq({4, 5}).add(300).slice(1, 1, 3);           // (4, 2), offset rows
  const Tensor out = cat({t, c, s, e}, 1);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{4, 11}));
  EXPECT_EQ(values(out), ref_cat({t.contiguous(), c, s.contiguous(), e.contiguous()}, 1, {4, 11}));
  const Tensor out0 = cat({t, c}, 0);
  EXPECT_EQ(values(out0), ref_cat({t.contiguous(), c}, 0, {8, 3}));
}

TEST(CatOp, PromotesMixedDtypes) {
  struct Case {
    DType a, b, want;
  };
  for (const Case& k : {Case{kInt32, kFloat32, kFloat32}, Case{kBool, kInt64, kInt64}, Case{kUInt8, kInt32, kInt32},
                        Case{kFloat16, kBFloat16, kFloat32}, Case{kInt64, kFloat64, kFloat64},
                        Case{kBool, kUInt8, kUInt8}, Case{kFloat16, kInt64, kFloat16}}) {
    const Tensor a = seq({2, 2}, k.a, 2), b = seq({1, 2}, k.b, 2);
    const Tensor out = cat({a, b}, 0);
    EXPECT_EQ(out.dtype(), k.want) << k.a << " + " << k.b;
    EXPECT_EQ(values(out), (std::vector<double>{0, 1, 0, 1, 0, 1})) << k.a << " + " << k.b;
  }
  // int32 [1, 2] and float [2.5] along dim 0: converted while copied.
  const Tensor out = cat({tensor({1, 2}, kInt32), tensor({2.5f})});
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_EQ(values(out), (std::vector<double>{1, 2, 2.5}));
}

TEST(CatOp, EveryDtype) {
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool}) {
    const int64_t wrap = dt == kBool ? 2 : 100;
    const Tensor a = seq({2, 3}, dt, wrap), b = seq({2, 2}, dt, wrap).t().contiguous();
    const Tensor out = cat({a, b, a.t().contiguous().t()}, 1);
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_EQ(values(out), ref_cat({a, b, a}, 1, {2, 8})) << dt;
  }
}

TEST(CatOp, SkipsLegacyEmptyTensors) {
  const Tensor a = seq({2, 3});
  const Tensor e = empty({0}, kFloat64);
  Tensor out = cat({e, a, e}, 1);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out.dtype(), kFloat64);  // the empty tensor still takes part in promotion, as in torch
  EXPECT_EQ(values(out), values(a));
  out = cat({empty({0}, kInt32), empty({0}, kInt64)}, 0);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0}));
  EXPECT_EQ(out.dtype(), kInt64);
  // An empty tensor with 2 dims is not skipped: it must match.
  out = cat({seq({2, 2}), zeros({2, 0}), seq({2, 1})}, 1);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(out), (std::vector<double>{0, 1, 0, 2, 3, 1}));
  out = cat({zeros({0, 3}), zeros({0, 3})}, 0);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0, 3}));
}

TEST(CatOp, LargeInputsAreBitwiseEqualAcrossThreadCounts) {
  const Tensor a = randn({3, 700, 257}), b = randn({3, 300, 257}), c = randn({3, 257, 300}).transpose(1, 2);
  Tensor one, four;
  {
    ThreadCount tc(1);
    one = cat({a, b, c}, 1);
  }
  {
    ThreadCount tc(4);
    four = cat({a, b, c}, 1);
  }
  EXPECT_TRUE(same_bits(one, four));
  EXPECT_EQ(values(one), ref_cat({a, b, c.contiguous()}, 1, {3, 1300, 257}));
  const Tensor big = cat({a.reshape({-1}), b.reshape({-1})}, 0);
  EXPECT_TRUE(same_bits(big.slice(0, 0, a.numel()), a.reshape({-1})));
  EXPECT_TRUE(same_bits(big.slice(0, a.numel()), b.reshape({-1})));
}

TEST(CatOp, RejectsBadInputs) {
  EXPECT_EMBER_ERROR(cat({}, 0), "cat", "non-empty");
  EXPECT_EMBER_ERROR(cat({scalar_tensor(1.0), scalar_tensor(2.0)}), "cat", "zero-dimensional", "position 0");
  EXPECT_EMBER_ERROR(cat({seq({2, 3}), seq({2, 4})}, 0), "cat", "except in dim 0", "[2, 3]", "[2, 4]", "dim 1");
  EXPECT_EMBER_ERROR(cat({seq({2, 3}), seq({3})}, 0), "cat", "same number of dims", "[2, 3]", "[3]");
  EXPECT_EMBER_ERROR(cat({seq({2, 3}), seq({2, 3})}, 2), "cat", "dim 2", "out of range");
  EXPECT_EMBER_ERROR(cat({seq({2, 3}), seq({2, 3})}, -3), "cat", "dim -3");
}

TEST(StackOp, InsertsANewDim) {
  const Tensor a = seq({2, 3}), b = seq({2, 3}).add(10), c = seq({2, 3}).add(20);
  const std::vector<double> va = values(a), vb = values(b), vc = values(c);
  // dim 0: [a, b, c]
  Tensor out = stack({a, b, c}, 0);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{3, 2, 3}));
  std::vector<double> want = va;
  want.insert(want.end(), vb.begin(), vb.end());
  want.insert(want.end(), vc.begin(), vc.end());
  EXPECT_EQ(values(out), want);
  // dim 2 and -1: out[i][j][k] = inputs[k][i][j]
  for (int64_t dim : {2, -1}) {
    out = stack({a, b, c}, dim);
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3, 3}));
    want.clear();
    for (int i = 0; i < 6; ++i) want.insert(want.end(), {va[i], vb[i], vc[i]});
    EXPECT_EQ(values(out), want);
  }
  // dim 1: out[i][k][j] = inputs[k][i][j]
  out = stack({a, b, c}, 1);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3, 3}));
  EXPECT_EQ(values(out.select(0, 1)), (std::vector<double>{3, 4, 5, 13, 14, 15, 23, 24, 25}));
}

TEST(StackOp, ZeroDimNonContiguousAndMixedDtypes) {
  Tensor out = stack({scalar_tensor(1.5), scalar_tensor(-2.0)});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2}));
  EXPECT_EQ(values(out), (std::vector<double>{1.5, -2.0}));
  const Tensor t = seq({3, 2}).t();
  out = stack({t, t}, 1);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(values(out), (std::vector<double>{0, 2, 4, 0, 2, 4, 1, 3, 5, 1, 3, 5}));
  out = stack({tensor({1, 2}, kInt32), tensor({0.5f, 1.5f})});
  EXPECT_EQ(out.dtype(), kFloat32);
  EXPECT_EQ(values(out), (std::vector<double>{1, 2, 0.5, 1.5}));
}

TEST(StackOp, RejectsBadInputs) {
  EXPECT_EMBER_ERROR(stack({}, 0), "stack", "non-empty");
  EXPECT_EMBER_ERROR(stack({seq({2}), seq({3})}), "stack", "equal size", "[2]", "[3]", "entry 1");
  EXPECT_EMBER_ERROR(stack({seq({2}), seq({2})}, 2), "stack", "dim 2");
}

// ---- tril / triu ----

std::vector<double> ref_triangle(const Tensor& x, int64_t diagonal, bool lower) {
  std::vector<double> v = values(x);
  const int64_t m = x.size(-2), n = x.size(-1);
  for (size_t p = 0; p < v.size(); ++p) {
    const int64_t i = static_cast<int64_t>(p) / n % m, j = static_cast<int64_t>(p) % n;
    const bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
    if (!keep) v[p] = 0;
  }
  return v;
}

TEST(TriangleOps, DiagonalOffsets) {
  const Tensor x = seq({4, 5}).add(1);
  for (int64_t d : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{2}, int64_t{-3}, int64_t{7}, int64_t{-100},
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    EXPECT_EQ(values(tril(x, d)), ref_triangle(x, d, true)) << "tril diagonal " << d;
    EXPECT_EQ(values(triu(x, d)), ref_triangle(x, d, false)) << "triu diagonal " << d;
  }
  EXPECT_EQ(values(x.tril()), (std::vector<double>{1, 0, 0, 0, 0, 6, 7, 0, 0, 0, 11, 12, 13, 0, 0, 16, 17, 18, 19, 0}));
  EXPECT_EQ(values(x.triu(1)), (std::vector<double>{0, 2, 3, 4, 5, 0, 0, 8, 9, 10, 0, 0, 0, 14, 15, 0, 0, 0, 0, 20}));
}

TEST(TriangleOps, BatchedNonContiguousAndEveryDtype) {
  const Tensor xb = seq({2, 3, 4, 5}, kFloat64).add(1).transpose(2, 3);  // (2, 3, 5, 4), strided
  for (int64_t d : {-2, 0, 1}) {
    EXPECT_EQ(values(tril(xb, d)), ref_triangle(xb.contiguous(), d, true));
    EXPECT_EQ(values(triu(xb, d)), ref_triangle(xb.contiguous(), d, false));
  }
  const Tensor xp = seq({3, 4, 5}).add(1).permute({1, 0, 2});  // batch dim strided
  EXPECT_EQ(values(tril(xp, 1)), ref_triangle(xp.contiguous(), 1, true));
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool}) {
    const Tensor x = seq({3, 3}, dt, dt == kBool ? 2 : 50).add(dt == kBool ? 0 : 1).to(dt);
    const Tensor l = tril(x), u = triu(x, 1);
    EXPECT_EQ(l.dtype(), dt);
    EXPECT_EQ(values(l), ref_triangle(x, 0, true)) << dt;
    EXPECT_EQ(values(u), ref_triangle(x, 1, false)) << dt;
  }
}

TEST(TriangleOps, EmptyShapes) {
  EXPECT_EQ(shape_of(tril(zeros({0, 3}))), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(shape_of(triu(zeros({2, 4, 0}))), (std::vector<int64_t>{2, 4, 0}));
  EXPECT_EQ(shape_of(triu(zeros({0, 4, 5}))), (std::vector<int64_t>{0, 4, 5}));
}

TEST(TriangleOps, RejectsLessThanTwoDims) {
  EXPECT_EMBER_ERROR(tril(zeros({3})), "tril", "at least 2 dims", "[3]");
  EXPECT_EMBER_ERROR(triu(scalar_tensor(1.0)), "triu", "at least 2 dims", "[]");
}

// ---- one_hot ----

TEST(OneHotOp, ExplicitAndInferredClasses) {
  const Tensor idx = tensor({0, 3, 1, 5, 2});
  Tensor out = one_hot(idx, 6);
  EXPECT_EQ(out.dtype(), kInt64);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{5, 6}));
  std::vector<double> want(30, 0);
  for (int i : {0, 1 * 6 + 3, 2 * 6 + 1, 3 * 6 + 5, 4 * 6 + 2}) want[i] = 1;
  EXPECT_EQ(values(out), want);
  EXPECT_EQ(values(one_hot(idx)), want);          // max 5 -> 6 classes
  EXPECT_EQ(shape_of(one_hot(idx, 8)), (std::vector<int64_t>{5, 8}));
  out = one_hot(tensor({0, 0}));
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 1}));
}

TEST(OneHotOp, TwoDimsZeroDimEmptyAndStrided) {
  const Tensor idx2 = tensor({0, 2, 1, 1, 2, 0}).reshape({3, 2});
  Tensor out = one_hot(idx2, 4);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{3, 2, 4}));
  EXPECT_EQ(values(out.select(0, 0)), (std::vector<double>{1, 0, 0, 0, 0, 0, 1, 0}));
  EXPECT_EQ(values(out.select(0, 2)), (std::vector<double>{0, 0, 1, 0, 1, 0, 0, 0}));
  out = one_hot(idx2.t(), 3);  // (2, 3) strided: [[0, 1, 2], [2, 1, 0]]
  EXPECT_EQ(values(out.select(0, 1)), (std::vector<double>{0, 0, 1, 0, 1, 0, 1, 0, 0}));
  out = one_hot(scalar_tensor(2, kInt64), 3);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{3}));
  EXPECT_EQ(values(out), (std::vector<double>{0, 0, 1}));
  out = one_hot(empty({0}, kInt64), 3);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0, 3}));
  out = one_hot(empty({2, 0}, kInt64), 0);
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 0, 0}));
}

TEST(OneHotOp, RejectsBadInputs) {
  EXPECT_EMBER_ERROR(one_hot(tensor({1.0f}), 3), "one_hot", "int64", "float32");
  EXPECT_EMBER_ERROR(one_hot(tensor({1, 2}, kInt32), 3), "one_hot", "int64", "int32");
  EXPECT_EMBER_ERROR(one_hot(tensor({1, -1})), "one_hot", "non-negative", "-1");
  EXPECT_EMBER_ERROR(one_hot(tensor({1, 3}), 3), "one_hot", "class value 3", "num_classes 3");
  EXPECT_EMBER_ERROR(one_hot(tensor({1, 2}), 0), "one_hot", "class value 2", "num_classes 0");
  EXPECT_EMBER_ERROR(one_hot(empty({0}, kInt64)), "one_hot", "empty");
  EXPECT_EMBER_ERROR(one_hot(tensor({1}), -2), "one_hot", "num_classes", "-2");
}

// ---- sort ----

// Reference: each row along `dim` sorted by value (NaN largest), ties by index.
struct SortRef {
  std::vector<double> values;
  std::vector<double> indices;
};

SortRef ref_sort(const Tensor& x, int64_t dim, bool descending, int64_t k = -1, bool smallest = false) {
  const Tensor c = x.dim() == 0 ? x.reshape({1}) : x.transpose(dim, -1).contiguous();
  const std::vector<double> v = values(c);
  const int64_t n = c.size(-1);
  if (k < 0) k = n;
  SortRef r;
  for (int64_t row = 0; row * n < static_cast<int64_t>(v.size()); ++row) {
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int64_t i) { return v[row * n + i]; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double x1 = key(a), x2 = key(b);
      const bool n1 = std::isnan(x1), n2 = std::isnan(x2);
      const bool desc = descending && !smallest;
      if (n1 || n2) return desc ? (n1 && !n2) : (!n1 && n2);
      return desc ? x1 > x2 : x1 < x2;
    });
    for (int64_t i = 0; i < k; ++i) {
      r.values.push_back(key(order[i]));
      r.indices.push_back(static_cast<double>(order[i]));
    }
  }
  // Back to the layout of the op's output (dim in place).
  if (x.dim() > 0 && dim != x.dim() - 1 && dim != -1) {
    std::vector<int64_t> shape = c.sizes().vec();
    shape.back() = k;
    const Tensor rv = from_values(r.values, shape, kFloat64).transpose(dim, -1);
    const Tensor ri = from_values(r.indices, shape, kFloat64).transpose(dim, -1);
    r.values = values(rv);
    r.indices = values(ri);
  }
  return r;
}

void expect_sorted_like_ref(const Tensor& x, int64_t dim, bool descending) {
  const auto [v, i] = sort(x, dim, descending, /*stable=*/true);
  EXPECT_EQ(v.dtype(), x.dtype());
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(v.sizes(), x.sizes());
  const SortRef r = ref_sort(x, dim, descending);
  const std::vector<double> got = values(v);
  ASSERT_EQ(got.size(), r.values.size());
  for (size_t p = 0; p < got.size(); ++p) {
    EXPECT_TRUE(got[p] == r.values[p] || (std::isnan(got[p]) && std::isnan(r.values[p])))
        << "value " << p << ": " << got[p] << " vs " << r.values[p];
  }
  EXPECT_EQ(values(i), r.indices);
}

TEST(SortOp, PermutationsAlongEachDim) {
  const Tensor x = from_values(shuffled(18, 1, -4, 0.5), {3, 6});
  for (int64_t dim : {-1, 0, 1, -2}) {
    for (bool desc : {false, true}) expect_sorted_like_ref(x, dim, desc);
  }
  const Tensor x3 = from_values(shuffled(60, 2), {3, 4, 5});
  for (int64_t dim : {0, 1, 2}) expect_sorted_like_ref(x3, dim, true);
  const auto [v, i] = x.sort();  // the method: dim -1, ascending
  EXPECT_EQ(values(v), ref_sort(x, -1, false).values);
  EXPECT_EQ(values(i), ref_sort(x, -1, false).indices);
}

TEST(SortOp, StableTiesKeepIndexOrderBothDirections) {
  const Tensor x = from_values({3, 1, 2, 1, 3, 0, 1, 2, 2, -1, 2, 5, -1, 0}, {2, 7});
  auto [v, i] = sort(x, -1, false, true);
  EXPECT_EQ(values(v), (std::vector<double>{0, 1, 1, 1, 2, 3, 3, -1, -1, 0, 2, 2, 2, 5}));
  EXPECT_EQ(values(i), (std::vector<double>{5, 1, 3, 6, 2, 0, 4, 2, 5, 6, 0, 1, 3, 4}));
  std::tie(v, i) = sort(x, -1, true, true);
  EXPECT_EQ(values(v), (std::vector<double>{3, 3, 2, 1, 1, 1, 0, 5, 2, 2, 2, 0, -1, -1}));
  EXPECT_EQ(values(i), (std::vector<double>{0, 4, 2, 1, 3, 6, 5, 4, 0, 1, 3, 6, 2, 5}));
  // stable=false gives an order too (the same one here: ties break by index).
  const auto [v2, i2] = sort(x, -1, true, false);
  EXPECT_EQ(values(v2), values(v));
  EXPECT_EQ(values(i2), values(i));
}

TEST(SortOp, NaNIsLargestAndInfinitiesInPlace) {
  const Tensor x = from_values({2, kNaN, -1, kInf, -kInf, 0.5, kNaN, -0.0}, {8});
  auto [v, i] = sort(x);
  EXPECT_TRUE(all_close(v, from_values({-kInf, -1, -0.0, 0.5, 2, kInf, kNaN, kNaN}, {8}), 0, 0));
  EXPECT_EQ(values(i), (std::vector<double>{4, 2, 7, 5, 0, 3, 1, 6}));
  std::tie(v, i) = sort(x, 0, true);
  EXPECT_TRUE(all_close(v, from_values({kNaN, kNaN, kInf, 2, 0.5, -0.0, -1, -kInf}, {8}), 0, 0));
  EXPECT_EQ(values(i), (std::vector<double>{1, 6, 3, 0, 5, 7, 2, 4}));
  for (DType dt : {kFloat64, kFloat16, kBFloat16}) {
    const Tensor xd = x.to(dt);
    std::tie(v, i) = sort(xd, 0, true);
    EXPECT_EQ(v.dtype(), dt);
    EXPECT_EQ(values(i), (std::vector<double>{1, 6, 3, 0, 5, 7, 2, 4})) << dt;
  }
}

TEST(SortOp, EveryDtypeAndNonContiguous) {
  const std::vector<double> perm = shuffled(24, 3);
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8}) {
    const Tensor x = from_values(perm, {4, 6}, dt);
    expect_sorted_like_ref(x, 1, false);
    expect_sorted_like_ref(x, 0, true);
    expect_sorted_like_ref(x.t(), 1, false);  // rows strided in memory
  }
  const Tensor neg = from_values({-3, 7, -100, 0, 2}, {5}, kInt32);
  expect_sorted_like_ref(neg, 0, false);
  const Tensor b = tensor({true, false, true, false});
  auto [v, i] = sort(b);
  EXPECT_EQ(values(v), (std::vector<double>{0, 0, 1, 1}));
  EXPECT_EQ(values(i), (std::vector<double>{1, 3, 0, 2}));
  std::tie(v, i) = sort(b, 0, true);
  EXPECT_EQ(values(i), (std::vector<double>{0, 2, 1, 3}));
  // A slice with an offset and a step.
  const Tensor s = from_values(shuffled(40, 4), {5, 8}).slice(1, 1, 8, 3);
  expect_sorted_like_ref(s, 1, true);
}

TEST(SortOp, ZeroDimEmptyAndSizeOne) {
  auto [v, i] = sort(scalar_tensor(3.0));
  EXPECT_EQ(v.dim(), 0);
  EXPECT_EQ(v.item<double>(), 3.0);
  EXPECT_EQ(i.item<int64_t>(), 0);
  std::tie(v, i) = sort(zeros({0, 3}), 0);
  EXPECT_EQ(shape_of(v), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(shape_of(i), (std::vector<int64_t>{0, 3}));
  std::tie(v, i) = sort(seq({3, 1}), 1);
  EXPECT_EQ(values(v), (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(values(i), (std::vector<double>{0, 0, 0}));
}

TEST(SortOp, ManyRowsBitwiseEqualAcrossThreadCounts) {
  // Quarter steps in [-4, 4] (many ties) and a NaN in every 7th row.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> q(-16, 16);
  std::vector<double> v(2000 * 300);
  for (size_t p = 0; p < v.size(); ++p) v[p] = (p / 300) % 7 == 0 && p % 300 == 3 ? kNaN : q(rng) / 4.0;
  const Tensor x = from_values(v, {2000, 300});
  std::tuple<Tensor, Tensor> one, four;
  {
    ThreadCount tc(1);
    one = sort(x, 1, true);
  }
  {
    ThreadCount tc(4);
    four = sort(x, 1, true);
  }
  EXPECT_TRUE(same_bits(std::get<0>(one), std::get<0>(four)));
  EXPECT_TRUE(same_bits(std::get<1>(one), std::get<1>(four)));
  const SortRef r = ref_sort(x.slice(0, 0, 50), 1, true);
  EXPECT_EQ(values(std::get<1>(one).slice(0, 0, 50)), r.indices);
  // Along dim 0 too (rows strided).
  {
    ThreadCount tc(4);
    const auto [v, i] = sort(x.slice(1, 0, 20), 0);
    const SortRef r0 = ref_sort(x.slice(1, 0, 20), 0, false);
    EXPECT_EQ(values(i), r0.indices);
  }
}

TEST(SortOp, RejectsBadDims) {
  EXPECT_EMBER_ERROR(sort(zeros({2, 3}), 2), "sort", "dim 2", "out of range");
  EXPECT_EMBER_ERROR(sort(scalar_tensor(1.0), 1), "sort", "dim 1");
}

// ---- topk ----

void expect_topk_like_ref(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  const auto [v, i] = topk(x, k, dim, largest, true);
  const SortRef r = ref_sort(x, dim, largest, k, !largest);
  std::vector<int64_t> shape = x.sizes().vec();
  if (x.dim() > 0) shape[dim < 0 ? dim + x.dim() : dim] = k;
  EXPECT_EQ(shape_of(v), shape);
  EXPECT_EQ(v.dtype(), x.dtype());
  EXPECT_EQ(i.dtype(), kInt64);
  const std::vector<double> got = values(v);
  ASSERT_EQ(got.size(), r.values.size());
  for (size_t p = 0; p < got.size(); ++p) {
    EXPECT_TRUE(got[p] == r.values[p] || (std::isnan(got[p]) && std::isnan(r.values[p])))
        << "k " << k << " dim " << dim << " largest " << largest << " value " << p;
  }
  EXPECT_EQ(values(i), r.indices) << "k " << k << " dim " << dim << " largest " << largest;
}

TEST(TopkOp, LargestAndSmallestAlongEachDim) {
  const Tensor x = from_values(shuffled(32, 5, -3, 0.25), {4, 8});
  for (int64_t k : {0, 1, 3, 8}) {
    for (bool largest : {true, false}) expect_topk_like_ref(x, k, -1, largest);
  }
  expect_topk_like_ref(x, 2, 0, true);
  expect_topk_like_ref(x, 4, -2, false);
  expect_topk_like_ref(x.t(), 3, 1, true);
  // A long row takes the nth_element path (k > 64).
  const Tensor long_row = from_values(shuffled(500, 6), {2, 250});
  expect_topk_like_ref(long_row, 100, 1, true);
  expect_topk_like_ref(long_row, 100, 1, false);
  const auto [v, i] = x.topk(2);
  EXPECT_EQ(shape_of(v), (std::vector<int64_t>{4, 2}));
}

TEST(TopkOp, UnsortedReturnsTheSameSet) {
  const Tensor x = from_values(shuffled(200, 7), {2, 100});
  for (int64_t k : {5, 80}) {
    const auto [v, i] = topk(x, k, 1, true, false);
    const auto [vs, is] = topk(x, k, 1, true, true);
    for (int64_t r = 0; r < 2; ++r) {
      std::vector<double> a = values(v.select(0, r)), b = values(vs.select(0, r));
      std::vector<double> ia = values(i.select(0, r)), ib = values(is.select(0, r));
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      std::sort(ia.begin(), ia.end());
      std::sort(ib.begin(), ib.end());
      EXPECT_EQ(a, b);
      EXPECT_EQ(ia, ib);
    }
    // Values and indices agree.
    const std::vector<double> xv = values(x), vv = values(v), iv = values(i);
    for (size_t p = 0; p < vv.size(); ++p) EXPECT_EQ(vv[p], xv[(p / k) * 100 + static_cast<size_t>(iv[p])]);
  }
}

TEST(TopkOp, NaNCountsAsLargestAndTiesByIndex) {
  const Tensor x = from_values({2, kNaN, -1, kNaN, 0.5, 2}, {6});
  auto [v, i] = topk(x, 3);
  EXPECT_EQ(values(i), (std::vector<double>{1, 3, 0}));
  std::tie(v, i) = topk(x, 3, 0, false);
  EXPECT_EQ(values(v), (std::vector<double>{-1, 0.5, 2}));
  EXPECT_EQ(values(i), (std::vector<double>{2, 4, 0}));
}

TEST(TopkOp, EveryDtypeZeroDimAndEmpty) {
  const std::vector<double> perm = shuffled(9, 8, -20, 5);
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64}) {
    expect_topk_like_ref(from_values(perm, {9}, dt), 4, 0, true);
    expect_topk_like_ref(from_values(perm, {9}, dt), 4, 0, false);
  }
  expect_topk_like_ref(from_values(shuffled(9, 9), {9}, kUInt8), 4, 0, true);
  auto [v, i] = topk(tensor({true, false, true}), 2);
  EXPECT_EQ(values(v), (std::vector<double>{1, 1}));
  EXPECT_EQ(values(i), (std::vector<double>{0, 2}));
  for (int64_t k : {0, 1}) {  // torch returns the 0-d tensor for k 0 and 1
    std::tie(v, i) = topk(scalar_tensor(3.0), k);
    EXPECT_EQ(v.dim(), 0);
    EXPECT_EQ(v.item<double>(), 3.0);
    EXPECT_EQ(i.item<int64_t>(), 0);
  }
  std::tie(v, i) = topk(zeros({2, 0}), 0);
  EXPECT_EQ(shape_of(v), (std::vector<int64_t>{2, 0}));
  std::tie(v, i) = topk(zeros({0, 4}), 2);
  EXPECT_EQ(shape_of(i), (std::vector<int64_t>{0, 2}));
}

TEST(TopkOp, ManyRowsBitwiseEqualAcrossThreadCounts) {
  const Tensor x = randn({3000, 128}).mul(2).round();  // many ties
  std::tuple<Tensor, Tensor> one, four;
  {
    ThreadCount tc(1);
    one = topk(x, 10, 1, false);
  }
  {
    ThreadCount tc(4);
    four = topk(x, 10, 1, false);
  }
  EXPECT_TRUE(same_bits(std::get<0>(one), std::get<0>(four)));
  EXPECT_TRUE(same_bits(std::get<1>(one), std::get<1>(four)));
  EXPECT_EQ(values(std::get<1>(one).slice(0, 0, 40)), ref_sort(x.slice(0, 0, 40), 1, false, 10, true).indices);
}

TEST(TopkOp, RejectsBadK) {
  EXPECT_EMBER_ERROR(topk(zeros({3}), 4), "topk", "k (4)", "dim 0 of size 3");
  EXPECT_EMBER_ERROR(topk(zeros({3}), -1), "topk", "k (-1)");
  EXPECT_EMBER_ERROR(topk(scalar_tensor(1.0), 2), "topk", "k (2)");
  EXPECT_EMBER_ERROR(topk(zeros({2, 3}), 1, 2), "topk", "dim 2", "out of range");
}

}  // namespace
}  // namespace ember
