// gather, scatter, scatter_add, index_select, index_add, masked_select,
// repeat, flip, roll: the public functions (include/ember/ops.h), each bad
// input's error, and the promises the op-info table cannot state (values
// worked out by hand, thread-count determinism of the adding ops).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ember::testing::ThreadCount;

using ::ember::testing::all_close;
using ::ember::testing::values;
using Values = std::vector<double>;

Tensor from(const Values& v, IntArrayRef shape, DType dtype = kFloat32) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t.to(dtype).reshape(shape);
}
Tensor ids(const Values& v, IntArrayRef shape) { return from(v, shape, kInt64); }

bool same_bits(const Tensor& a, const Tensor& b) {
  const Tensor x = a.contiguous(), y = b.contiguous();
  return x.sizes() == y.sizes() && x.dtype() == y.dtype() &&
         std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

// ---- values ----

TEST(IndexingOps, GatherPicksAlongDim) {
  const Tensor x = from({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(all_close(gather(x, 1, ids({2, 0, 1, 1}, {2, 2})), from({3, 1, 5, 5}, {2, 2})));
  EXPECT_TRUE(all_close(gather(x, 0, ids({1, 0, 1}, {1, 3})), from({4, 2, 6}, {1, 3})));
}

TEST(IndexingOps, ScatterWritesAndScatterAddAccumulatesInIndexOrder) {
  const Tensor base = zeros({2, 3});
  const Tensor src = from({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(all_close(scatter(base, 1, ids({2, 0, 1, 0}, {2, 2}), src),
                        from({2, 0, 1, 5, 4, 0}, {2, 3})));  // src is larger than index: its [:, :2] is used
  EXPECT_TRUE(all_close(scatter(base, 0, ids({1, 1, 0}, {1, 3}), 7.5), from({0, 0, 7.5, 7.5, 7.5, 0}, {2, 3})));
  EXPECT_TRUE(all_close(scatter_add(base, 1, ids({0, 0, 0, 2, 2, 1}, {2, 3}), src), from({6, 0, 0, 0, 6, 9}, {2, 3})));
}

TEST(IndexingOps, IndexSelectAndIndexAdd) {
  const Tensor x = from({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_TRUE(all_close(index_select(x, 0, ids({2, 2, 0}, {3})), from({5, 6, 5, 6, 1, 2}, {3, 2})));
  EXPECT_TRUE(all_close(index_select(x, 1, ids({1}, {1}).to(kInt32)), from({2, 4, 6}, {3, 1})));
  const Tensor src = from({1, 1, 10, 10}, {2, 2});
  EXPECT_TRUE(all_close(index_add(x, 0, ids({2, 2}, {2}), src, 2), from({1, 2, 3, 4, 27, 28}, {3, 2})));
}

TEST(IndexingOps, MaskedSelectBroadcastsTheMask) {
  const Tensor x = from({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor mask = tensor({true, false, true}).reshape({1, 3});
  EXPECT_TRUE(all_close(masked_select(x, mask), from({1, 3, 4, 6}, {4})));
  // self broadcasts too: the result follows the broadcast shape.
  EXPECT_TRUE(all_close(masked_select(from({7}, {1}), tensor({true, true})), from({7, 7}, {2})));
}

TEST(IndexingOps, RepeatFlipRoll) {
  const Tensor x = from({1, 2, 3}, {3});
  EXPECT_TRUE(all_close(repeat(x, {2, 2}), from({1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}, {2, 6})));
  const Tensor m = from({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(all_close(flip(m, {0, 1}), from({6, 5, 4, 3, 2, 1}, {2, 3})));
  EXPECT_TRUE(all_close(roll(m, {1}), from({6, 1, 2, 3, 4, 5}, {2, 3})));  // flattened, shape kept
  EXPECT_TRUE(all_close(roll(m, {-1, 4}, {0, 1}), from({6, 4, 5, 3, 1, 2}, {2, 3})));
  // A dim named twice rolls by the sum of its shifts (as torch.roll).
  EXPECT_TRUE(all_close(roll(x, {1, 1}, {0, 0}), roll(x, {2}, {0})));
}

TEST(IndexingOps, IntegerAndBoolDtypesMoveExactly) {
  const Tensor big = full({3}, Scalar(int64_t{1} << 60), kInt64);
  EXPECT_EQ(values(flip(big, {0}))[0], static_cast<double>(int64_t{1} << 60));
  const Tensor b = tensor({true, false, false});
  EXPECT_TRUE(all_close(scatter_add(b, 0, ids({1, 1}, {2}), tensor({true, true})).to(kFloat32), from({1, 1, 0}, {3})));
}

// ---- errors: each names the op, what was given and what was expected ----

TEST(IndexingOpsErrors, OutOfRangeIdsNameTheOpTheIdAndTheSize) {
  const Tensor x = zeros({4, 3});
  EXPECT_EMBER_ERROR(gather(x, 0, ids({0, 4, 1}, {1, 3})), "gather", "index 4", "size 4");
  EXPECT_EMBER_ERROR(gather(x, 1, ids({-1}, {1, 1})), "gather", "index -1", "size 3");
  EXPECT_EMBER_ERROR(scatter(x, 0, ids({9}, {1, 1}), zeros({1, 1})), "scatter", "index 9");
  EXPECT_EMBER_ERROR(scatter(x, 0, ids({9}, {1, 1}), 1.0), "scatter", "index 9");
  EXPECT_EMBER_ERROR(scatter_add(x, 1, ids({3}, {1, 1}), zeros({1, 1})), "scatter_add", "index 3", "size 3");
  EXPECT_EMBER_ERROR(index_select(x, 0, ids({5}, {1})), "index_select", "index 5", "size 4");
  EXPECT_EMBER_ERROR(index_add(x, 0, ids({-2}, {1}), zeros({1, 3})), "index_add", "index -2", "size 4");
}

TEST(IndexingOpsErrors, IndexDtypeMustBeInt64) {
  const Tensor x = zeros({4, 3});
  const Tensor i32 = ids({0}, {1, 1}).to(kInt32);
  EXPECT_EMBER_ERROR(gather(x, 0, i32), "gather", "int64", "int32");
  EXPECT_EMBER_ERROR(scatter(x, 0, i32, zeros({1, 1})), "scatter", "int64");
  EXPECT_EMBER_ERROR(scatter_add(x, 0, i32, zeros({1, 1})), "scatter_add", "int64");
  // index_select and index_add take int32 too (as PyTorch), but not floats.
  EXPECT_EMBER_ERROR(index_select(x, 0, from({0}, {1})), "index_select", "int64 or int32", "float32");
  EXPECT_EMBER_ERROR(index_add(x, 0, from({0}, {1}), zeros({1, 3})), "index_add", "int64 or int32");
}

TEST(IndexingOpsErrors, IndexRankAndSizeFollowTorchsRule) {
  const Tensor x = zeros({4, 3});
  EXPECT_EMBER_ERROR(gather(x, 1, ids({0}, {1})), "gather", "as many dims", "[4, 3]");
  EXPECT_EMBER_ERROR(scatter(x, 1, ids({0}, {1}), zeros({1})), "scatter", "as many dims");
  // Larger than self in a dim other than `dim`.
  EXPECT_EMBER_ERROR(gather(x, 1, zeros({5, 1}, kInt64)), "gather", "must not be larger", "but dim 1");
  EXPECT_EMBER_ERROR(scatter_add(x, 0, zeros({1, 4}, kInt64), zeros({1, 4})), "scatter_add", "must not be larger");
  // Larger than src in any dim.
  EXPECT_EMBER_ERROR(scatter(x, 0, ids({0, 0}, {2, 1}), zeros({1, 1})), "scatter", "larger than src");
  EXPECT_EMBER_ERROR(scatter(x, 0, ids({0}, {1, 1}), zeros({1, 1}, kFloat64)), "scatter", "same dtype");
  EXPECT_EMBER_ERROR(index_select(x, 0, ids({0, 1}, {1, 2})), "index_select", "vector");
  EXPECT_EMBER_ERROR(index_add(x, 0, ids({0, 1}, {2}), zeros({3, 3})), "index_add", "number of indices (2)");
  EXPECT_EMBER_ERROR(index_add(x, 0, ids({0}, {1}), zeros({1, 2})), "index_add", "must match self");
  EXPECT_EMBER_ERROR(gather(x, 2, ids({0}, {1, 1})), "gather", "dim 2", "out of range");
}

TEST(IndexingOpsErrors, MaskedSelectNeedsABoolBroadcastableMask) {
  const Tensor x = zeros({2, 3});
  EXPECT_EMBER_ERROR(masked_select(x, ones({2, 3}, kInt64)), "masked_select", "bool mask", "int64");
  EXPECT_EMBER_ERROR(masked_select(x, ones({2, 3}, kUInt8)), "masked_select", "bool mask");
  EXPECT_EMBER_ERROR(masked_select(x, ones({4, 1}, kBool)), "masked_select", "cannot be broadcast");
}

TEST(IndexingOpsErrors, RepeatFlipRollArguments) {
  const Tensor x = zeros({2, 3});
  EXPECT_EMBER_ERROR(repeat(x, {2}), "repeat", "number of repeats (1)", "dims of self (2)");
  EXPECT_EMBER_ERROR(repeat(x, {1, -1}), "repeat", "negative");
  EXPECT_EMBER_ERROR(flip(x, {2}), "flip", "dim 2", "out of range");
  EXPECT_EMBER_ERROR(flip(x, {1, -1}), "flip", "more than once");
  EXPECT_EMBER_ERROR(roll(x, {1}, {-3}), "roll", "dim -3", "out of range");
  EXPECT_EMBER_ERROR(roll(x, {1, 2}, {0}), "roll", "same length");
  EXPECT_EMBER_ERROR(roll(x, {1, 2}), "roll", "one value");
  EXPECT_EMBER_ERROR(roll(x, {}), "roll", "must not be empty");
}

// ---- determinism: the adding ops and gather's backward, 1 vs 2 threads ----

TEST(IndexingOpsDeterminism, ScatterAddAndIndexAddAreBitwiseTheSameOnOneAndTwoThreads) {
  manual_seed(3);
  const Tensor self = randn({64, 512});
  const Tensor src = randn({4096, 512});
  const Tensor index = randint(0, 64, {4096, 512});
  const Tensor rows = randint(0, 64, {4096});
  Tensor a, b, c, d;
  {
    ThreadCount one(1);
    a = scatter_add(self, 0, index, src);
    c = index_add(self, 0, rows, src, 0.5);
  }
  {
    ThreadCount two(2);
    b = scatter_add(self, 0, index, src);
    d = index_add(self, 0, rows, src, 0.5);
  }
  EXPECT_TRUE(same_bits(a, b));
  EXPECT_TRUE(same_bits(c, d));
}

TEST(IndexingOpsDeterminism, GatherAndIndexSelectGradientsAreBitwiseTheSameOnOneAndTwoThreads) {
  manual_seed(4);
  const Tensor x0 = randn({300, 400});
  const Tensor index = randint(0, 300, {2000, 400});
  const Tensor rows = randint(0, 300, {2000});
  auto grads = [&](int threads) {
    ThreadCount n(threads);
    Tensor x = x0.detach().requires_grad_();
    Tensor loss = (gather(x, 0, index) * 0.37).sum() + (index_select(x, 0, rows) * 1.3).sum();
    return autograd::grad({loss}, {x})[0];
  };
  EXPECT_TRUE(same_bits(grads(1), grads(2)));
}

}  // namespace
}  // namespace ember
