// Derivative formulas of views, indexing, matrix products, joining/sorting
// and copies (autograd/formulas_{view,index,linalg,shape,copy}.cpp):
// hand-checked gradients per family, worked out in the comments. Losses are
// dot products with fixed uneven weights, so a gradient sent to the wrong
// element cannot hide behind symmetry. The op-info gradcheck
// (autograd_gradcheck.cpp) covers every sample numerically.
#include <gtest/gtest.h>

#include <vector>

#include "core/op_decls.h"
#include "ember/autograd.h"
#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::all_close;
using Values = std::vector<double>;

// A float64 (or `dtype`) tensor of `shape` holding v in row-major order.
Tensor from(const Values& v, IntArrayRef shape, DType dtype = kFloat64) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t.to(dtype).reshape(shape);
}

Tensor leaf(const Values& v, IntArrayRef shape, DType dtype = kFloat64) {
  return from(v, shape, dtype).requires_grad_();
}

// sum(t * w) as a dot product of the flattened tensors.
Tensor weighted(const Tensor& t, const Tensor& w) { return t.reshape({-1}).dot(w.reshape({-1})); }

// 1, 2, 3, ... shaped like `shape`.
Tensor ramp(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return arange(1, n + 1, 1, kFloat64).reshape(shape);
}

// ---- views ----

TEST(ViewFormulas, TransposeSendsTheGradientBackTransposed) {
  Tensor x = leaf(Values(6, 0.0), {2, 3});
  weighted(x.t(), ramp({3, 2})).backward();  // w = [[1,2],[3,4],[5,6]]
  EXPECT_TRUE(all_close(x.grad(), from({1, 3, 5, 2, 4, 6}, {2, 3})));
}

TEST(ViewFormulas, PermuteUsesTheInversePermutation) {
  Tensor x = leaf(Values(24, 0.0), {2, 3, 4});
  const Tensor w = ramp({3, 4, 2});  // x.permute({1, 2, 0})[j][k][i] = x[i][j][k]
  weighted(x.permute({1, 2, -3}), w).backward();
  Values expected(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) expected[(i * 3 + j) * 4 + k] = (j * 4 + k) * 2 + i + 1;
  EXPECT_TRUE(all_close(x.grad(), from(expected, {2, 3, 4})));
}

TEST(ViewFormulas, SelectFillsOneColumnOfZeros) {
  Tensor x = leaf(Values(12, 0.0), {3, 4});
  weighted(x.select(1, 2), from({1, 2, 3}, {3})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0}, {3, 4})));
  Tensor y = leaf(Values(6, 0.0), {3, 2});
  weighted(y.select(0, -1), from({5, 7}, {2})).backward();  // the last row
  EXPECT_TRUE(all_close(y.grad(), from({0, 0, 0, 0, 5, 7}, {3, 2})));
}

TEST(ViewFormulas, SliceWithAStepReachesEveryStepthElement) {
  Tensor x = leaf(Values(7, 0.0), {7});
  weighted(x.slice(0, 1, 6, 2), from({1, 2, 3}, {3})).backward();  // x[1], x[3], x[5]
  EXPECT_TRUE(all_close(x.grad(), from({0, 1, 0, 2, 0, 3, 0}, {7})));
  Tensor y = leaf(Values(10, 0.0), {2, 5});
  weighted(y.slice(-1, std::nullopt, std::nullopt, 3), ramp({2, 2})).backward();  // columns 0 and 3
  EXPECT_TRUE(all_close(y.grad(), from({1, 0, 0, 2, 0, 3, 0, 0, 4, 0}, {2, 5})));
}

TEST(ViewFormulas, ExpandSumsTheRepeats) {
  Tensor x = leaf({1, 2, 3}, {3, 1});
  x.expand({2, 3, 4}).sum().backward();  // each element is repeated 2 * 4 times
  EXPECT_TRUE(all_close(x.grad(), from({8, 8, 8}, {3, 1})));
}

TEST(ViewFormulas, DiagonalWithAnOffset) {
  Tensor x = leaf(Values(12, 0.0), {3, 4});
  weighted(x.diagonal(1), from({1, 2, 3}, {3})).backward();  // (0,1), (1,2), (2,3)
  EXPECT_TRUE(all_close(x.grad(), from({0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3}, {3, 4})));
  Tensor y = leaf(Values(12, 0.0), {3, 4});
  weighted(y.diagonal(-1, 0, 1), from({5, 7}, {2})).backward();  // (1,0), (2,1)
  EXPECT_TRUE(all_close(y.grad(), from({0, 0, 0, 0, 5, 0, 0, 0, 0, 7, 0, 0}, {3, 4})));
}

TEST(ViewFormulas, ReshapesKeepTheElementOrder) {
  Tensor x = leaf(Values(6, 0.0), {2, 1, 3});
  weighted(x.squeeze().unsqueeze(0).view({3, 2}).unsqueeze(-1).squeeze(2), ramp({3, 2})).backward();
  EXPECT_TRUE(all_close(x.grad(), ramp({2, 1, 3})));
}

TEST(ViewFormulas, OverlappingAsStridedAddsTheSharedElements) {
  // as_strided({3, 2}, {1, 1}) reads storage i + j at (i, j).
  Tensor x = leaf(Values(4, 0.0), {4});
  weighted(x.as_strided({3, 2}, {1, 1}), ramp({3, 2})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({1, 2 + 3, 4 + 5, 6}, {4})));
}

TEST(ViewFormulas, AsStridedOfAViewUsesAbsoluteStorageOffsets) {
  Tensor x = leaf(Values(4, 0.0), {4});
  Tensor y = x.slice(0, 1);  // storage 1..3
  weighted(y.as_strided({2}, {2}, 1), from({5, 7}, {2})).backward();  // storage 1 and 3
  EXPECT_TRUE(all_close(x.grad(), from({0, 5, 0, 7}, {4})));
}

// ---- indexing ----

TEST(IndexFormulas, RepeatedIndicesAccumulate) {
  Tensor x = leaf(Values(4, 0.0), {4});
  weighted(x.index({tensor({0, 2, 0, 0})}), from({1, 2, 3, 4}, {4})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({1 + 3 + 4, 0, 2, 0}, {4})));
}

TEST(IndexFormulas, BoolMaskAndUnindexedDims) {
  Tensor x = leaf(Values(6, 0.0), {2, 3});
  const Tensor mask = tensor({true, false, true, false, true, false}).reshape({2, 3});
  weighted(x.index({mask}), from({1, 2, 3}, {3})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({1, 0, 2, 0, 3, 0}, {2, 3})));

  // x[:, [2, 2]]: the first dim has no index tensor.
  Tensor y = leaf(Values(6, 0.0), {2, 3});
  weighted(y.index({Slice(), tensor({2, 2})}), ramp({2, 2})).backward();
  EXPECT_TRUE(all_close(y.grad(), from({0, 0, 1 + 2, 0, 0, 3 + 4}, {2, 3})));
}

TEST(IndexFormulas, IndexPutOverwriteZeroesTheOldGradient) {
  Tensor x = leaf({1, 2, 3, 4}, {4});
  Tensor v = leaf({9}, {1});  // broadcast to both positions
  Tensor y = x.clone();
  op::index_put_.call(y, TensorList{tensor({1, 3})}, v, false);
  weighted(y, from({1, 2, 3, 4}, {4})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({1, 0, 3, 0}, {4})));
  EXPECT_TRUE(all_close(v.grad(), from({2 + 4}, {1})));
}

TEST(IndexFormulas, IndexPutAccumulateKeepsTheOldGradient) {
  Tensor x = leaf({1, 2, 3, 4}, {4});
  Tensor v = leaf({5, 6}, {2});
  Tensor y = x.clone();
  op::index_put_.call(y, TensorList{tensor({1, 1})}, v, true);
  weighted(y, from({1, 2, 3, 4}, {4})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({1, 2, 3, 4}, {4})));
  EXPECT_TRUE(all_close(v.grad(), from({2, 2}, {2})));
}

TEST(IndexFormulas, NonzeroIsNotDifferentiable) {
  Tensor x = leaf({0, 2, 0, 4}, {4});
  EXPECT_FALSE(op::nonzero.call(x).requires_grad());
}

// ---- matrix products ----
// A = [[1,2,3],[4,5,6]], B = [[1,-1],[0,2],[3,1]], G = [[1,2],[3,4]] (the weights of A @ B):
//   dA = G B^T = [[-1,4,5],[-1,8,13]],  dB = A^T G = [[13,18],[17,24],[21,30]].
const Values kA = {1, 2, 3, 4, 5, 6}, kB = {1, -1, 0, 2, 3, 1}, kG = {1, 2, 3, 4};
const Values kGBt = {-1, 4, 5, -1, 8, 13}, kAtG = {13, 18, 17, 24, 21, 30};

TEST(LinalgFormulas, Mm) {
  Tensor a = leaf(kA, {2, 3}), b = leaf(kB, {3, 2});
  weighted(a.mm(b), from(kG, {2, 2})).backward();
  EXPECT_TRUE(all_close(a.grad(), from(kGBt, {2, 3})));
  EXPECT_TRUE(all_close(b.grad(), from(kAtG, {3, 2})));
}

TEST(LinalgFormulas, Bmm) {
  // Batch 0 is (A, B), batch 1 is (2A, B), both weighted by G:
  // dA is G B^T in both batches; dB is A^T G, then 2 A^T G.
  auto twice = [](const Values& first, const Values& second) {
    Values v = first;
    v.insert(v.end(), second.begin(), second.end());
    return v;
  };
  Values a2 = kA, at_g2 = kAtG;
  for (double& v : a2) v *= 2;
  for (double& v : at_g2) v *= 2;
  Tensor a = leaf(twice(kA, a2), {2, 2, 3}), b = leaf(twice(kB, kB), {2, 3, 2});
  weighted(a.bmm(b), from(twice(kG, kG), {2, 2, 2})).backward();
  EXPECT_TRUE(all_close(a.grad(), from(twice(kGBt, kGBt), {2, 2, 3})));
  EXPECT_TRUE(all_close(b.grad(), from(twice(kAtG, at_g2), {2, 3, 2})));
}

TEST(LinalgFormulas, AddmmScalesByBetaAndAlpha) {
  // 2 * bias + 3 * A @ B, the bias (2,) broadcast over rows: d bias = 2 * column sums of G.
  Tensor bias = leaf({0.5, -0.5}, {2}), a = leaf(kA, {2, 3}), b = leaf(kB, {3, 2});
  weighted(addmm(bias, a, b, 2, 3), from(kG, {2, 2})).backward();
  EXPECT_TRUE(all_close(bias.grad(), from({2 * (1 + 3), 2 * (2 + 4)}, {2})));
  Values da = kGBt, db = kAtG;
  for (double& v : da) v *= 3;
  for (double& v : db) v *= 3;
  EXPECT_TRUE(all_close(a.grad(), from(da, {2, 3})));
  EXPECT_TRUE(all_close(b.grad(), from(db, {3, 2})));
}

TEST(LinalgFormulas, DotScalesTheOtherInputByTheOutputGradient) {
  Tensor a = leaf({1, 2, 3}, {3}), b = leaf({4, 5, 6}, {3});
  const TensorList g = autograd::grad({a.dot(b)}, {a, b}, {scalar_tensor(2.0, kFloat64)});
  EXPECT_TRUE(all_close(g[0], from({8, 10, 12}, {3})));
  EXPECT_TRUE(all_close(g[1], from({2, 4, 6}, {3})));
}

TEST(LinalgFormulas, Mv) {
  // A v with v = [1, 0, -1], weights g = [1, 2]: dA = g v^T, dv = A^T g.
  Tensor a = leaf(kA, {2, 3}), v = leaf({1, 0, -1}, {3});
  weighted(a.mv(v), from({1, 2}, {2})).backward();
  EXPECT_TRUE(all_close(a.grad(), from({1, 0, -1, 2, 0, -2}, {2, 3})));
  EXPECT_TRUE(all_close(v.grad(), from({1 + 8, 2 + 10, 3 + 12}, {3})));
}

// ---- joining, triangles, sorting ----

TEST(ShapeFormulas, CatGivesEachInputItsSlice) {
  Tensor a = leaf({0, 0, 0, 0}, {2, 2}, kFloat32);
  Tensor skipped = leaf({}, {0});  // a legacy empty tensor: cat skips it
  Tensor b = leaf({0, 0}, {2, 1});
  weighted(cat({a, skipped, b}, -1), ramp({2, 3})).backward();  // float64 result
  EXPECT_EQ(a.grad().dtype(), kFloat32);
  EXPECT_TRUE(all_close(a.grad(), from({1, 2, 4, 5}, {2, 2})));
  EXPECT_TRUE(all_close(b.grad(), from({3, 6}, {2, 1})));
  EXPECT_TRUE(!skipped.grad().defined() || skipped.grad().numel() == 0);
}

TEST(ShapeFormulas, TrilAndTriuKeepTheirTriangle) {
  Tensor x = leaf(Values(9, 0.0), {3, 3});
  weighted(x.tril(), ramp({3, 3})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({1, 0, 0, 4, 5, 0, 7, 8, 9}, {3, 3})));
  Tensor y = leaf(Values(9, 0.0), {3, 3});
  weighted(y.triu(1), ramp({3, 3})).backward();
  EXPECT_TRUE(all_close(y.grad(), from({0, 2, 3, 0, 0, 6, 0, 0, 0}, {3, 3})));
}

TEST(ShapeFormulas, TopkSendsTheGradientToThePickedPositions) {
  Tensor x = leaf({3, 1, 4, 1, 5}, {5});
  auto [values, indices] = x.topk(2);  // 5 (at 4), 4 (at 2)
  EXPECT_FALSE(indices.requires_grad());
  weighted(values, from({1, 2}, {2})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({0, 0, 2, 0, 1}, {5})));
}

TEST(ShapeFormulas, SortAlongEitherDim) {
  // Along dim 0: values [[2,1],[3,4]] come from rows [[1,0],[0,1]].
  Tensor x = leaf({3, 1, 2, 4}, {2, 2});
  weighted(std::get<0>(x.sort(0)), ramp({2, 2})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({3, 2, 1, 4}, {2, 2})));
  // Descending along the last dim: values [[3,1],[4,2]] come from columns [[0,1],[1,0]].
  Tensor y = leaf({3, 1, 2, 4}, {2, 2});
  weighted(std::get<0>(y.sort(-1, true)), ramp({2, 2})).backward();
  EXPECT_TRUE(all_close(y.grad(), from({1, 2, 4, 3}, {2, 2})));
}

// ---- copies and fills ----

TEST(CopyFormulas, CopyIntoFloat32FromBroadcastFloat64) {
  Tensor src = leaf({2}, {1});
  Tensor dst = zeros({3}, kFloat32);
  dst.copy_(src);  // broadcast (1,) -> (3,), float64 -> float32
  ASSERT_TRUE(dst.requires_grad());
  weighted(dst, from({1, 2, 3}, {3}, kFloat32)).backward();
  EXPECT_EQ(src.grad().dtype(), kFloat64);
  EXPECT_TRUE(all_close(src.grad(), from({6}, {1})));
}

TEST(CopyFormulas, CopyIntoAViewOfZeros) {
  Tensor src = leaf({0, 0}, {2});
  Tensor z = zeros({4}, kFloat64);
  z.slice(0, 1, 3).copy_(src);
  weighted(z, from({1, 2, 3, 4}, {4})).backward();
  EXPECT_TRUE(all_close(src.grad(), from({2, 3}, {2})));
}

TEST(CopyFormulas, CloneAndToPassTheGradientThrough) {
  Tensor x = leaf({1, 2, 3}, {3}, kFloat32);
  weighted(x.clone().to(kFloat64), from({4, 5, 6}, {3})).backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_TRUE(all_close(x.grad(), from({4, 5, 6}, {3})));
}

TEST(CopyFormulas, FillsCutTheOverwrittenElementsOff) {
  Tensor x = leaf({1, 2, 3, 4}, {4});
  Tensor y = x.clone();
  y.slice(0, 0, 2).fill_(0);
  Tensor tail = y.slice(0, 3);
  uniform_(tail);
  weighted(y, from({1, 2, 3, 4}, {4})).backward();
  EXPECT_TRUE(all_close(x.grad(), from({0, 0, 3, 0}, {4})));
}

// ---- second derivatives through the formulas' own graphs ----

TEST(SecondDerivatives, ThroughSlice) {
  // f = x1^2 + x2^2 (a dot of x[1:] with itself): df = [0, 2 x1, 2 x2], d(sum df) = [0, 2, 2].
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor tail = x.slice(0, 1);
  Tensor g = autograd::grad({tail.dot(tail)}, {x}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(all_close(g, from({0, 4, 6}, {3})));
  g.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), from({0, 2, 2}, {3})));
}

TEST(SecondDerivatives, ThroughIndex) {
  // x[[0, 0, 2]] dotted with itself: f = 2 x0^2 + x2^2, df = [4 x0, 0, 2 x2], d(sum df) = [4, 0, 2].
  Tensor x = leaf({1, 2, 3}, {3});
  Tensor picked = x.index({tensor({0, 0, 2})});
  Tensor g = autograd::grad({picked.dot(picked)}, {x}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(all_close(g, from({4, 0, 6}, {3})));
  g.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), from({4, 0, 2}, {3})));
}

TEST(SecondDerivatives, ThroughMm) {
  // dA = G B^T; h = sum(dA) has dh/dB = 1^T G: every row of it is G's column sums [4, 6].
  Tensor a = leaf(kA, {2, 3}), b = leaf(kB, {3, 2});
  Tensor da = autograd::grad({weighted(a.mm(b), from(kG, {2, 2}))}, {a}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(all_close(da, from(kGBt, {2, 3})));
  da.sum().backward();
  EXPECT_TRUE(all_close(b.grad(), from({4, 6, 4, 6, 4, 6}, {3, 2})));
}

}  // namespace
}  // namespace ember
