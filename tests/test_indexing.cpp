// Advanced indexing: op::index, op::index_put_ and op::nonzero, directly and
// through Tensor::index / Tensor::index_put_ (basic views combined with index
// tensors and masks). Values are checked against a naive reference that maps
// every result element to its source coordinates, and against results
// printed by PyTorch 1.13 for the layout rules (adjacent vs separated indices).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "core/op_decls.h"
#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ember::testing::ThreadCount;

using ::ember::testing::all_close;
using ::ember::testing::values;

Tensor from_values(const std::vector<double>& v, IntArrayRef shape, DType dtype = kFloat32) {
  Tensor host = empty({static_cast<int64_t>(v.size())}, kFloat64);
  std::copy(v.begin(), v.end(), host.data_ptr<double>());
  return host.to(dtype).reshape(shape);
}

Tensor seq(IntArrayRef shape, DType dtype = kFloat32) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return arange(n).to(dtype).reshape(shape);
}

Tensor longs(std::initializer_list<int64_t> v, IntArrayRef shape = {}) {
  Tensor t = tensor(v);
  return shape.empty() ? t : t.reshape(shape);
}

std::vector<int64_t> shape_of(const Tensor& t) { return t.sizes().vec(); }

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// ---- naive reference for op::index / op::index_put_ (integer index tensors only) ----

struct RefIndex {
  std::vector<int64_t> result_shape;
  // For each result element (row-major): its flat row-major position in self.
  std::vector<int64_t> source;
};

RefIndex ref_plan(IntArrayRef self_shape, const TensorList& idx) {
  const int64_t nd = static_cast<int64_t>(self_shape.size());
  std::vector<int64_t> b_shape;
  std::vector<int64_t> indexed;
  for (size_t d = 0; d < idx.size(); ++d) {
    if (!idx[d].defined()) continue;
    indexed.push_back(static_cast<int64_t>(d));
    const std::vector<int64_t> s = idx[d].sizes().vec();
    std::vector<int64_t> out(std::max(s.size(), b_shape.size()), 1);
    for (size_t k = 0; k < out.size(); ++k) {
      const int64_t a = k < b_shape.size() ? b_shape[b_shape.size() - 1 - k] : 1;
      const int64_t b = k < s.size() ? s[s.size() - 1 - k] : 1;
      out[out.size() - 1 - k] = std::max(a, b);
    }
    b_shape = out;
  }
  const bool adjacent = indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
  // Result dims: -1 - k for dim k of B, else the self dim.
  std::vector<int64_t> layout;
  auto add_b = [&] {
    for (size_t k = 0; k < b_shape.size(); ++k) layout.push_back(-1 - static_cast<int64_t>(k));
  };
  if (!adjacent) add_b();
  for (int64_t d = 0; d < nd; ++d) {
    const bool is_idx = d < static_cast<int64_t>(idx.size()) && idx[d].defined();
    if (adjacent && d == indexed.front()) add_b();
    if (!is_idx) layout.push_back(d);
  }
  RefIndex r;
  for (int64_t l : layout) r.result_shape.push_back(l < 0 ? b_shape[-1 - l] : self_shape[l]);
  int64_t total = 1;
  for (int64_t s : r.result_shape) total *= s;
  std::vector<std::vector<double>> idx_values(idx.size());
  for (size_t d = 0; d < idx.size(); ++d) {
    if (idx[d].defined()) idx_values[d] = values(idx[d]);
  }
  for (int64_t p = 0; p < total; ++p) {
    std::vector<int64_t> coord(layout.size());
    for (int64_t rest = p, k = static_cast<int64_t>(layout.size()) - 1; k >= 0; --k) {
      coord[k] = rest % r.result_shape[k];
      rest /= r.result_shape[k];
    }
    std::vector<int64_t> bcoord(b_shape.size()), src(static_cast<size_t>(nd));
    for (size_t k = 0; k < layout.size(); ++k) {
      if (layout[k] < 0) bcoord[-1 - layout[k]] = coord[k];
      else src[layout[k]] = coord[k];
    }
    for (int64_t d : indexed) {
      const std::vector<int64_t> s = idx[d].sizes().vec();
      int64_t flat = 0;
      for (size_t k = 0; k < s.size(); ++k) {
        const int64_t bc = bcoord[b_shape.size() - s.size() + k];
        flat = flat * s[k] + (s[k] == 1 ? 0 : bc);
      }
      int64_t v = static_cast<int64_t>(idx_values[d][flat]);
      if (v < 0) v += self_shape[d];
      src[d] = v;
    }
    int64_t flat = 0;
    for (int64_t d = 0; d < nd; ++d) flat = flat * self_shape[d] + src[d];
    r.source.push_back(flat);
  }
  return r;
}

void expect_index_like_ref(const Tensor& self, const TensorList& idx) {
  const RefIndex r = ref_plan(self.sizes(), idx);
  const Tensor out = op::index.call(self, idx);
  EXPECT_EQ(shape_of(out), r.result_shape);
  EXPECT_EQ(out.dtype(), self.dtype());
  const std::vector<double> sv = values(self), ov = values(out);
  ASSERT_EQ(ov.size(), r.source.size());
  for (size_t p = 0; p < ov.size(); ++p) EXPECT_EQ(ov[p], sv[r.source[p]]) << "element " << p;
}

// ---- op::index ----

TEST(IndexOp, OneIndexTensorPerDimPosition) {
  const Tensor x = seq({5, 3});
  expect_index_like_ref(x, {longs({3, 0, -1, 3})});
  expect_index_like_ref(x, {Tensor(), longs({2, -3, 1})});
  expect_index_like_ref(x, {longs({1, 0, 4, 2}, {2, 2})});  // 2-D index: result (2, 2, 3)
  expect_index_like_ref(x, {tensor({4, 1}, kInt32)});
  EXPECT_EQ(values(op::index.call(x, {longs({4, 0})})), (std::vector<double>{12, 13, 14, 0, 1, 2}));
}

TEST(IndexOp, AdjacentIndicesStayInPlaceSeparatedOnesGoFirst) {
  const Tensor x = seq({2, 3, 4}, kInt64);
  // x[:, [2, 0], [1, 3]] -> (2, 2)
  Tensor out = op::index.call(x, {Tensor(), longs({2, 0}), longs({1, 3})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values(out), (std::vector<double>{9, 3, 21, 15}));
  // x[[1, 0], :, [3, 1]] -> (2, 3): the separated indices' dim goes first.
  out = op::index.call(x, {longs({1, 0}), Tensor(), longs({3, 1})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values(out), (std::vector<double>{15, 19, 23, 1, 5, 9}));
  // x[[[0], [1]], :, [1, 2, 3]] -> B (2, 3) first, then the slice: (2, 3, 3).
  out = op::index.call(x, {longs({0, 1}, {2, 1}), Tensor(), longs({1, 2, 3})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3, 3}));
  EXPECT_EQ(values(out.select(0, 1).select(0, 2)), (std::vector<double>{15, 19, 23}));
  // All dims indexed -> B only.
  out = op::index.call(x, {longs({0, 1}), longs({1, 2}), longs({2, 3})});
  EXPECT_EQ(values(out), (std::vector<double>{6, 23}));
  for (const TensorList& idx :
       {TensorList{Tensor(), longs({2, 0}), longs({1, 3})}, TensorList{longs({1, 0}), Tensor(), longs({3, 1})},
        TensorList{longs({0, 1}, {2, 1}), Tensor(), longs({1, 2, 3})}, TensorList{longs({1}), longs({0, 2, 1})},
        TensorList{Tensor(), Tensor(), longs({-1, 0, 1, 0, 0}, {5, 1})}}) {
    expect_index_like_ref(x, idx);
  }
  const Tensor x4 = seq({2, 3, 4, 5});
  expect_index_like_ref(x4, {Tensor(), longs({0, 2}), Tensor(), longs({1, 4})});  // (2, 2, 4)
  expect_index_like_ref(x4, {Tensor(), longs({0, 2}), longs({1, 3}), Tensor()});  // (2, 2, 5)
}

TEST(IndexOp, MasksBecomeIndicesOfTheirDims) {
  const Tensor x = seq({2, 3, 4});
  // x[:, [True, False, True]] -> (2, 2, 4)
  Tensor out = op::index.call(x, {Tensor(), tensor({true, false, true})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_EQ(values(out.select(0, 1)), (std::vector<double>{12, 13, 14, 15, 20, 21, 22, 23}));
  // A 2-D mask over dims 0 and 1, then an index for dim 2.
  const Tensor m = tensor({true, false, false, false, true, true}).reshape({2, 3});
  out = op::index.call(x, {m, longs({3})});
  EXPECT_EQ(values(out), (std::vector<double>{3, 19, 23}));
  // uint8 masks too.
  out = op::index.call(x, {tensor({0, 1}, kUInt8)});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(values(out), values(x.select(0, 1).reshape({1, 3, 4})));
  // A 0-d mask adds a dim it keeps (true) or empties (false).
  out = op::index.call(x, {tensor({true}).reshape({})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(values(out), values(x));
  out = op::index.call(x, {tensor({false}).reshape({})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0, 2, 3, 4}));
}

TEST(IndexOp, NonContiguousSelfAndIndexTensors) {
  const Tensor x = seq({4, 6}).t();  // (6, 4) strided
  expect_index_like_ref(x, {longs({5, 0, 2})});
  expect_index_like_ref(x, {Tensor(), longs({3, 1})});
  const Tensor idx = longs({0, 9, 1, 9, 2, 9, 3}).slice(0, 0, 7, 2);  // [0, 1, 2, 3] with stride 2
  expect_index_like_ref(x, {idx, longs({3, 2, 1, 0})});
  expect_index_like_ref(x.slice(0, 1, 6, 2), {Tensor(), idx.slice(0, 1, 3)});
  const Tensor x3 = seq({3, 4, 5}).permute({2, 0, 1});  // (5, 3, 4)
  expect_index_like_ref(x3, {longs({4, 0}), Tensor(), longs({1, 3})});
  expect_index_like_ref(x3, {Tensor(), longs({2, 1}), longs({0, 3})});
}

TEST(IndexOp, EveryDtype) {
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool}) {
    const Tensor x = seq({4, 3}, kInt64).remainder(dt == kBool ? 2 : 100).to(dt);
    const Tensor out = op::index.call(x, {longs({3, 1, 3})});
    EXPECT_EQ(out.dtype(), dt);
    expect_index_like_ref(x, {longs({3, 1, 3})});
    expect_index_like_ref(x, {Tensor(), longs({2, 0})});
  }
}

TEST(IndexOp, EmptyIndicesAndEmptyDims) {
  const Tensor x = seq({3, 4});
  Tensor out = op::index.call(x, {empty({0}, kInt64)});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0, 4}));
  out = op::index.call(x, {Tensor(), empty({2, 0}, kInt64)});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{3, 2, 0}));
  out = op::index.call(zeros({0, 4}), {Tensor(), longs({1, 2})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0, 2}));
  out = op::index.call(x, {tensor({false, false, false})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{0, 4}));
}

TEST(IndexOp, LargeGatherBitwiseEqualAcrossThreadCounts) {
  const Tensor x = randn({300, 257});
  const Tensor idx = randint(-300, 300, {4000});
  const Tensor col = randint(0, 257, {50});
  Tensor one, four, one_t, four_t;
  {
    ThreadCount tc(1);
    one = op::index.call(x, {idx});
    one_t = op::index.call(x, {Tensor(), col});
  }
  {
    ThreadCount tc(4);
    four = op::index.call(x, {idx});
    four_t = op::index.call(x, {Tensor(), col});
  }
  EXPECT_TRUE(same_bits(one, four));
  EXPECT_TRUE(same_bits(one_t, four_t));
  expect_index_like_ref(x, {idx.slice(0, 0, 100)});
  expect_index_like_ref(x, {Tensor(), col});
}

TEST(IndexOp, RejectsBadIndices) {
  const Tensor x = seq({3, 4});
  EXPECT_EMBER_ERROR(op::index.call(x, {longs({0, 5})}), "index: index 5 is out of bounds for dim 0 with size 3");
  EXPECT_EMBER_ERROR(op::index.call(x, {longs({-4})}), "index: index -4 is out of bounds for dim 0 with size 3");
  EXPECT_EMBER_ERROR(op::index.call(x, {Tensor(), longs({1, 4})}), "index 4 is out of bounds for dim 1 with size 4");
  EXPECT_EMBER_ERROR(op::index.call(x, {tensor({1.0f})}), "index", "int64, int32, uint8 or bool", "float32");
  EXPECT_EMBER_ERROR(op::index.call(x, {longs({0}), longs({0}), longs({0})}), "index", "too many indices",
                     "dimension 2");
  EXPECT_EMBER_ERROR(op::index.call(x, {longs({0, 1}), longs({0, 1, 2})}), "index", "shape mismatch", "[2], [3]");
  EXPECT_EMBER_ERROR(op::index.call(x, {tensor({true, false})}), "index", "mask of shape [2]", "[3, 4]", "dim 0");
  EXPECT_EMBER_ERROR(op::index.call(x, {Tensor(), Tensor(), tensor({true})}), "index", "too many indices");
}

// ---- op::index_put_ ----

// The reference writes result element p's value at its source, in row-major
// order: the last write wins, or all are added.
std::vector<double> ref_put(const Tensor& self, const TensorList& idx, const Tensor& vals, bool accumulate) {
  const RefIndex r = ref_plan(self.sizes(), idx);
  std::vector<double> out = values(self);
  const std::vector<double> v = values(vals.expand(r.result_shape));
  for (size_t p = 0; p < r.source.size(); ++p) {
    if (accumulate) out[r.source[p]] += v[p];
    else out[r.source[p]] = v[p];
  }
  return out;
}

void expect_put_like_ref(const Tensor& self, const TensorList& idx, const Tensor& vals, bool accumulate) {
  const std::vector<double> want = ref_put(self, idx, vals, accumulate);
  Tensor t = self.clone();
  op::index_put_.call(t, idx, vals, accumulate);
  EXPECT_EQ(values(t), want);
}

TEST(IndexPutOp, WritesAndBroadcastsValues) {
  const Tensor x = seq({4, 3});
  expect_put_like_ref(x, {longs({2, 0})}, from_values({-1, -2, -3}, {3}), false);             // rows, value row broadcast
  expect_put_like_ref(x, {longs({2, 0})}, from_values({-1, -2}, {2, 1}), false);              // one value per row
  expect_put_like_ref(x, {longs({2, 0})}, from_values({-7}, {}), false);                      // one value
  expect_put_like_ref(x, {Tensor(), longs({1, -1})}, from_values({10, 20}, {2}), false);      // columns
  expect_put_like_ref(x, {longs({0, 3}), longs({2, 0})}, from_values({5, 6}, {2}), false);    // points
  expect_put_like_ref(x.t(), {longs({2}), longs({0, 3})}, from_values({5, 6}, {2}), true);    // strided self
  const Tensor x3 = seq({2, 3, 4});
  expect_put_like_ref(x3, {longs({1, 0}), Tensor(), longs({3, 1})}, seq({2, 3}).neg(), false);  // separated
  expect_put_like_ref(x3, {Tensor(), longs({2, 0}), longs({1, 3})}, seq({2, 1}).neg(), true);   // adjacent
  // Values of another dtype are converted.
  Tensor t = seq({3}, kInt64);
  op::index_put_.call(t, {longs({1})}, tensor({7.9f}), false);
  EXPECT_EQ(values(t), (std::vector<double>{0, 7, 2}));
}

TEST(IndexPutOp, AccumulateAddsRepeatedIndicesInOrder) {
  Tensor y = zeros({4});
  op::index_put_.call(y, {longs({0, 1, 0, 3, 0})}, from_values({1, 2, 3, 4, 5}, {5}), true);
  EXPECT_EQ(values(y), (std::vector<double>{9, 2, 0, 4}));
  Tensor z = zeros({3, 4});
  op::index_put_.call(z, {longs({0, 0, 2})}, from_values({1, 2, 3, 4}, {4}), true);
  EXPECT_EQ(values(z), (std::vector<double>{2, 4, 6, 8, 0, 0, 0, 0, 1, 2, 3, 4}));
  // Repeated points with the indexed dim innermost, and with it outermost.
  expect_put_like_ref(seq({3, 4}), {Tensor(), longs({1, 1, 3, 1})}, seq({3, 4}), true);
  expect_put_like_ref(seq({3, 4}), {longs({2, 0, 2}), Tensor()}, seq({3, 4}), true);
  expect_put_like_ref(seq({2, 3, 4}), {longs({1, 0, 1}), Tensor(), longs({3, 3, 3})}, seq({3, 3}), true);
  // Integer and bool accumulate.
  Tensor i = zeros({3}, kInt32);
  op::index_put_.call(i, {longs({2, 2, 0})}, tensor({5, 6, 7}, kInt32), true);
  EXPECT_EQ(values(i), (std::vector<double>{7, 0, 11}));
  Tensor b = tensor({false, false, true});
  op::index_put_.call(b, {longs({0, 0})}, tensor({false, true}), true);
  EXPECT_EQ(values(b), (std::vector<double>{1, 0, 1}));
}

TEST(IndexPutOp, RepeatedIndicesWithoutAccumulateKeepTheLastValue) {
  Tensor y = zeros({4});
  op::index_put_.call(y, {longs({3, 1, 3, 1, 3})}, from_values({1, 2, 3, 4, 5}, {5}), false);
  EXPECT_EQ(values(y), (std::vector<double>{0, 4, 0, 5}));
  expect_put_like_ref(seq({3, 4}), {Tensor(), longs({2, 0, 2})}, seq({3, 3}).add(100), false);
}

TEST(IndexPutOp, HalfPrecisionAccumulatesInFloatAndRoundsOnce) {
  // 256 + 256 * 1 in bfloat16: adding one at a time would stay at 256 (257 rounds to 256).
  Tensor t = full({1}, 256.0, kBFloat16);
  op::index_put_.call(t, {zeros({256}, kInt64)}, ones({256}, kBFloat16), true);
  EXPECT_EQ(values(t), (std::vector<double>{512}));
  Tensor h = full({2}, 2048.0, kFloat16);
  op::index_put_.call(h, {longs({1, 1, 1, 1})}, ones({4}, kFloat16), true);
  EXPECT_EQ(values(h), (std::vector<double>{2048, 2052}));
}

TEST(IndexPutOp, MasksEmptyIndicesAndNoIndex) {
  Tensor w = seq({3, 4});
  op::index_put_.call(w, {w.gt(5)}, from_values({0}, {}), false);
  EXPECT_EQ(values(w), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0}));
  Tensor v = seq({3, 4});
  op::index_put_.call(v, {Tensor(), tensor({true, false, false, true})}, from_values({-1, -2}, {2}), true);
  EXPECT_EQ(values(v), (std::vector<double>{-1, 1, 2, 1, 3, 5, 6, 5, 7, 9, 10, 9}));
  Tensor e = seq({3});
  op::index_put_.call(e, {empty({0}, kInt64)}, from_values({1}, {}), false);
  EXPECT_EQ(values(e), (std::vector<double>{0, 1, 2}));
  op::index_put_.call(e, {Tensor()}, from_values({4}, {}), true);  // nothing indexed: all of self
  EXPECT_EQ(values(e), (std::vector<double>{4, 5, 6}));
}

TEST(IndexPutOp, ValuesThatAliasSelfAreReadBeforeWriting) {
  Tensor x = seq({2, 3});
  op::index_put_.call(x, {longs({1, 0})}, x, false);  // swap the rows
  EXPECT_EQ(values(x), (std::vector<double>{3, 4, 5, 0, 1, 2}));
  Tensor y = seq({4});
  op::index_put_.call(y, {longs({1, 2, 3})}, y.slice(0, 0, 3), false);  // shift right
  EXPECT_EQ(values(y), (std::vector<double>{0, 0, 1, 2}));
}

TEST(IndexPutOp, BumpsTheVersionSharedWithViews) {
  Tensor x = seq({3, 4});
  const Tensor view = x.select(0, 1);
  const uint32_t v0 = x._version();
  op::index_put_.call(x, {longs({0})}, from_values({1}, {}), false);
  EXPECT_GT(x._version(), v0);
  EXPECT_EQ(view._version(), x._version());
  const uint32_t v1 = x._version();
  op::index_put_.call(x, {empty({0}, kInt64)}, from_values({1}, {}), true);  // even when nothing is written
  EXPECT_GT(x._version(), v1);
}

TEST(IndexPutOp, LargeAccumulateBitwiseEqualAcrossThreadCounts) {
  const Tensor base = randn({500, 64});
  const Tensor idx = randint(0, 50, {20000});  // many repeats
  const Tensor vals = randn({20000, 64});
  Tensor one = base.clone(), four = base.clone();
  {
    ThreadCount tc(1);
    op::index_put_.call(one, {idx}, vals, true);
  }
  {
    ThreadCount tc(4);
    op::index_put_.call(four, {idx}, vals, true);
  }
  EXPECT_TRUE(same_bits(one, four));
  // Same sums as adding in index order, in float.
  EXPECT_TRUE(all_close(one, from_values(ref_put(base, {idx}, vals, true), {500, 64}), 1e-5, 1e-4));
  Tensor col_one = base.clone(), col_four = base.clone();
  const Tensor cidx = randint(0, 64, {100});
  const Tensor cvals = randn({500, 100});
  {
    ThreadCount tc(1);
    op::index_put_.call(col_one, {Tensor(), cidx}, cvals, false);
  }
  {
    ThreadCount tc(4);
    op::index_put_.call(col_four, {Tensor(), cidx}, cvals, false);
  }
  EXPECT_TRUE(same_bits(col_one, col_four));
  EXPECT_EQ(values(col_one), ref_put(base, {Tensor(), cidx}, cvals, false));
}

TEST(IndexPutOp, RejectsBadInputs) {
  Tensor x = seq({3, 4});
  EXPECT_EMBER_ERROR(op::index_put_.call(x, {longs({3})}, from_values({1}, {}), false),
                     "index_put_: index 3 is out of bounds for dim 0 with size 3");
  EXPECT_EMBER_ERROR(op::index_put_.call(x, {Tensor(), longs({-5})}, from_values({1}, {}), true),
                     "index_put_: index -5 is out of bounds for dim 1 with size 4");
  EXPECT_EMBER_ERROR(op::index_put_.call(x, {longs({0, 1})}, seq({2}), false), "index_put_", "shape mismatch",
                     "value tensor of shape [2]", "indexing result of shape [2, 4]");
  EXPECT_EMBER_ERROR(op::index_put_.call(x, {longs({0, 1})}, seq({1, 2, 4}), false), "index_put_", "shape mismatch");
  EXPECT_EMBER_ERROR(op::index_put_.call(x, {tensor({0.5})}, seq({1}), false), "index_put_", "float64");
  EXPECT_EQ(values(x), values(seq({3, 4})));  // nothing written by the failed calls
}

// ---- op::nonzero ----

std::vector<double> ref_nonzero(const Tensor& t) {
  const std::vector<double> v = values(t);
  const std::vector<int64_t> shape = t.sizes().vec();
  std::vector<double> out;
  for (size_t p = 0; p < v.size(); ++p) {
    if (v[p] == 0) continue;
    std::vector<double> coord(shape.size());
    for (int64_t rest = static_cast<int64_t>(p), j = static_cast<int64_t>(shape.size()) - 1; j >= 0; --j) {
      coord[j] = static_cast<double>(rest % shape[j]);
      rest /= shape[j];
    }
    out.insert(out.end(), coord.begin(), coord.end());
  }
  return out;
}

TEST(NonzeroOp, CoordinatesInRowMajorOrder) {
  const Tensor x = from_values({0, 1.5, 0, -2, 0, std::numeric_limits<double>::quiet_NaN(), -0.0, 3}, {2, 4});
  const Tensor nz = op::nonzero.call(x);
  EXPECT_EQ(nz.dtype(), kInt64);
  EXPECT_EQ(shape_of(nz), (std::vector<int64_t>{4, 2}));  // NaN counts, -0 does not
  EXPECT_EQ(values(nz), (std::vector<double>{0, 1, 0, 3, 1, 1, 1, 3}));
  const Tensor t = x.t();  // strided
  EXPECT_EQ(values(op::nonzero.call(t)), ref_nonzero(t));
  const Tensor x3 = seq({3, 4, 5}, kInt64).remainder(3).permute({2, 0, 1}).slice(0, 1, 5, 2);
  EXPECT_EQ(values(op::nonzero.call(x3)), ref_nonzero(x3));
}

TEST(NonzeroOp, EveryDtypeZeroDimAndEmpty) {
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool}) {
    const Tensor x = from_values({0, 1, 1, 0, 0, 1}, {3, 2}, dt);
    EXPECT_EQ(values(op::nonzero.call(x)), (std::vector<double>{0, 1, 1, 0, 2, 1})) << dt;
  }
  Tensor nz = op::nonzero.call(scalar_tensor(2.0));
  EXPECT_EQ(shape_of(nz), (std::vector<int64_t>{1, 0}));
  nz = op::nonzero.call(scalar_tensor(0.0));
  EXPECT_EQ(shape_of(nz), (std::vector<int64_t>{0, 0}));
  nz = op::nonzero.call(zeros({0, 3}));
  EXPECT_EQ(shape_of(nz), (std::vector<int64_t>{0, 2}));
  nz = op::nonzero.call(zeros({2, 3}));
  EXPECT_EQ(shape_of(nz), (std::vector<int64_t>{0, 2}));
}

TEST(NonzeroOp, LargeInputBitwiseEqualAcrossThreadCounts) {
  const Tensor x = randint(0, 3, {300, 1001}).transpose(0, 1);  // ~200k elements, strided
  Tensor one, four;
  {
    ThreadCount tc(1);
    one = op::nonzero.call(x);
  }
  {
    ThreadCount tc(4);
    four = op::nonzero.call(x);
  }
  EXPECT_TRUE(same_bits(one, four));
  EXPECT_EQ(values(one), ref_nonzero(x));
}

// ---- Tensor::index / Tensor::index_put_ (views + advanced parts) ----

TEST(TensorIndex, BasicIndicesAreViews) {
  const Tensor x = seq({2, 3, 4}, kInt64);
  Tensor out = x.index({Slice(0, 2), 1});  // x[0:2, 1]
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(values(out), (std::vector<double>{4, 5, 6, 7, 16, 17, 18, 19}));
  EXPECT_EQ(out.data_ptr(), x.select(1, 1).data_ptr());  // no copy
  out = x.index({Ellipsis, None});  // x[..., None]
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3, 4, 1}));
  out = x.index({None, Ellipsis, 1});  // x[None, ..., 1]
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(values(out), (std::vector<double>{1, 5, 9, 13, 17, 21}));
  out = x.index({-1, Slice(None, None, 2), Slice(1, None)});
  EXPECT_EQ(values(out), (std::vector<double>{13, 14, 15, 21, 22, 23}));
}

TEST(TensorIndex, TensorIndicesCombinedWithViews) {
  const Tensor x = seq({2, 3, 4}, kInt64);
  // x[[0, 1], 1] -> (2, 4)
  Tensor out = x.index({longs({0, 1}), 1});
  EXPECT_EQ(values(out), (std::vector<double>{4, 5, 6, 7, 16, 17, 18, 19}));
  // x[0, :, [1, 2]] -> (3, 2): the integer selects first, as in PyTorch.
  out = x.index({0, Slice(), longs({1, 2})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(out), (std::vector<double>{1, 2, 5, 6, 9, 10}));
  // x[[1, 0], :, [3, 1]] -> (2, 3)
  out = x.index({longs({1, 0}), Slice(), longs({3, 1})});
  EXPECT_EQ(values(out), (std::vector<double>{15, 19, 23, 1, 5, 9}));
  // x[:, [2, 0], [1, 3]] -> (2, 2)
  out = x.index({Slice(), longs({2, 0}), longs({1, 3})});
  EXPECT_EQ(values(out), (std::vector<double>{9, 3, 21, 15}));
  // x[..., [3, 0]] -> (2, 3, 2)
  out = x.index({Ellipsis, longs({3, 0})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(values(out.select(0, 1).select(0, 2)), (std::vector<double>{23, 20}));
  // x[:, None, [0, 2]] -> (2, 1, 2, 4); x[:, [0, 2], None] -> (2, 2, 1, 4)
  EXPECT_EQ(shape_of(x.index({Slice(), None, longs({0, 2})})), (std::vector<int64_t>{2, 1, 2, 4}));
  out = x.index({Slice(), longs({0, 2}), None});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 2, 1, 4}));
  EXPECT_EQ(values(out.select(0, 1).select(0, 1)), (std::vector<double>{20, 21, 22, 23}));
  // x[1:, [2, -3]] on a sliced view
  out = x.index({Slice(1, None), longs({2, -3})});
  EXPECT_EQ(values(out), (std::vector<double>{20, 21, 22, 23, 12, 13, 14, 15}));
}

TEST(TensorIndex, BoolMasks) {
  const Tensor x = seq({2, 3, 4}, kInt64);
  // x[x % 5 == 0]
  Tensor out = x.index({x.remainder(5).eq(0)});
  EXPECT_EQ(values(out), (std::vector<double>{0, 5, 10, 15, 20}));
  // x[:, [True, False, True]]
  out = x.index({Slice(), tensor({true, false, true})});
  EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_EQ(values(out.select(0, 1)), (std::vector<double>{12, 13, 14, 15, 20, 21, 22, 23}));
  // A mask over the last two dims after an integer.
  const Tensor m = tensor({true, false, false, false, false, true, false, false, false, false, false, true}).reshape({3, 4});
  out = x.index({1, m});
  EXPECT_EQ(values(out), (std::vector<double>{12, 17, 23}));
  EXPECT_EMBER_ERROR(x.index({tensor({true, false, true})}), "index", "mask", "[3]", "[2, 3, 4]");
}

TEST(TensorIndex, IndexPutBasicOnlyCopiesIntoTheView) {
  // t[:, 0] = 1.0: no tensor index, a (broadcasting) copy into the view.
  Tensor w = seq({3, 4});
  const uint32_t v0 = w._version();
  w.index_put_({Slice(), 0}, 1.0);
  EXPECT_EQ(values(w), (std::vector<double>{1, 1, 2, 3, 1, 5, 6, 7, 1, 9, 10, 11}));
  EXPECT_GT(w._version(), v0);
  w.index_put_({Ellipsis, Slice(2, None)}, from_values({-1, -2}, {2}));
  EXPECT_EQ(values(w), (std::vector<double>{1, 1, -1, -2, 1, 5, -1, -2, 1, 9, -1, -2}));
}

TEST(TensorIndex, IndexPutThroughViews) {
  // t[t > 5] = 0
  Tensor w = seq({3, 4});
  w.index_put_({w.gt(5)}, 0.0);
  EXPECT_EQ(values(w), (std::vector<double>{0, 1, 2, 3, 4, 5, 0, 0, 0, 0, 0, 0}));
  // t[[0, 2], 1:3] = [[-1, -2]] (values broadcast)
  w = seq({3, 4});
  w.index_put_({longs({0, 2}), Slice(1, 3)}, from_values({-1, -2}, {1, 2}));
  EXPECT_EQ(values(w), (std::vector<double>{0, -1, -2, 3, 4, 5, 6, 7, 8, -1, -2, 11}));
  // t[1, [3, 0]] = 9 on an int tensor, Scalar converted to the tensor's dtype
  Tensor i = seq({2, 4}, kInt32);
  i.index_put_({1, longs({3, 0})}, 9);
  EXPECT_EQ(values(i), (std::vector<double>{0, 1, 2, 3, 9, 5, 6, 9}));
  EXPECT_EQ(i.dtype(), kInt32);
  // The version moves, also seen through a view.
  Tensor v = seq({3, 4});
  const Tensor row = v.select(0, 2);
  const uint32_t v1 = v._version();
  v.index_put_({longs({0})}, 2.0);
  EXPECT_GT(v._version(), v1);
  EXPECT_EQ(row._version(), v._version());
  EXPECT_EMBER_ERROR(v.index_put_({longs({7})}, 2.0), "index_put_: index 7 is out of bounds for dim 0 with size 3");
}

}  // namespace
}  // namespace ember
