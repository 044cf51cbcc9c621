// The public sorting and searching functions (core/ops_sort.cpp): argsort,
// unique's flags and its refused dim, searchsorted's side/right and Scalar
// forms, bucketize. The kernels of unique and searchsorted have op-info rows;
// these pin what the public functions add on top.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::values;

Tensor from(const std::vector<double>& v, IntArrayRef shape, DType dtype = kFloat32) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t.to(dtype).reshape(shape);
}

TEST(Argsort, IsSortsIndicesWithTiesInIndexOrder) {
  const Tensor x = from({3, 1, 2, 1, 3, 0}, {2, 3});
  const Tensor rows = argsort(x);
  EXPECT_EQ(rows.dtype(), kInt64);
  EXPECT_EQ(values(rows), std::vector<double>({1, 2, 0, 2, 0, 1}));
  EXPECT_EQ(values(x.argsort(0, true)), std::vector<double>({0, 1, 0, 1, 0, 1}));
  const Tensor stable = from({2, 1, 2, 1}, {4}).argsort(-1, true, true);
  EXPECT_EQ(values(stable), std::vector<double>({0, 2, 1, 3}));
  EXPECT_EMBER_ERROR(argsort(x, 2), "sort", "dim 2");
}

TEST(Unique, ReturnsOnlyWhatIsAskedFor) {
  const Tensor x = from({3, 1, -0.0, 1, 0}, {5});
  auto [v, inverse, counts] = unique(x);
  EXPECT_EQ(values(v), std::vector<double>({0, 1, 3}));
  EXPECT_TRUE(std::signbit(values(v)[0]));  // -0 came first
  EXPECT_EQ(inverse.numel(), 0);
  EXPECT_EQ(counts.numel(), 0);
  auto [v2, inverse2, counts2] = x.reshape({5, 1}).unique(true, true, true);
  EXPECT_EQ(inverse2.sizes(), IntArrayRef({5, 1}));
  EXPECT_EQ(values(inverse2), std::vector<double>({2, 1, 0, 1, 0}));
  EXPECT_EQ(values(counts2), std::vector<double>({2, 2, 1}));
  EXPECT_EQ(values(std::get<0>(unique(x, false))), values(v));  // sorted=false: ascending as well
}

TEST(Unique, RefusesADim) {
  EXPECT_EMBER_ERROR(unique(from({1, 2}, {2}), true, false, false, 0), "unique", "flattened", "dim=0");
}

TEST(Searchsorted, SideAndRightAgree) {
  const Tensor seq = from({1, 2, 2, 3}, {4}), v = from({2, 0, 5}, {3});
  EXPECT_EQ(values(searchsorted(seq, v)), std::vector<double>({1, 0, 4}));
  EXPECT_EQ(values(searchsorted(seq, v, false, true)), std::vector<double>({3, 0, 4}));
  EXPECT_EQ(values(searchsorted(seq, v, false, false, "right")), std::vector<double>({3, 0, 4}));
  EXPECT_EQ(values(searchsorted(seq, v, false, false, "left")), std::vector<double>({1, 0, 4}));
  EXPECT_EQ(values(searchsorted(seq, v, false, true, "right")), std::vector<double>({3, 0, 4}));
  EXPECT_EQ(searchsorted(seq, v, true).dtype(), kInt32);
  EXPECT_EMBER_ERROR(searchsorted(seq, v, false, true, "left"), "searchsorted", "contradicts");
  EXPECT_EMBER_ERROR(searchsorted(seq, v, false, false, "middle"), "searchsorted", "'left' or 'right'", "middle");
}

TEST(Searchsorted, TakesAScalarAndPromotes) {
  const Tensor seq = from({1, 2, 3}, {3}, kInt64);
  const Tensor at = searchsorted(seq, Scalar(2.5));
  EXPECT_EQ(at.dim(), 0);
  EXPECT_EQ(at.item<int64_t>(), 2);
  EXPECT_EQ(values(searchsorted(seq, from({1.5, 3}, {2}, kFloat64), false, true)), std::vector<double>({1, 3}));
}

TEST(Bucketize, IsSearchsortedWithTheArgumentsSwapped) {
  const Tensor bounds = from({1, 3, 5, 7}, {4}), x = from({1, 5, 6, 3, 9, -1}, {2, 3});
  EXPECT_EQ(values(bucketize(x, bounds)), std::vector<double>({0, 2, 3, 1, 4, 0}));
  EXPECT_EQ(values(bucketize(x, bounds, false, true)), std::vector<double>({1, 3, 3, 2, 4, 0}));
  EXPECT_EQ(bucketize(x, bounds).sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(bucketize(Scalar(4), bounds).item<int64_t>(), 2);
  EXPECT_EQ(bucketize(x, bounds, true).dtype(), kInt32);
  EXPECT_EMBER_ERROR(bucketize(x, bounds.reshape({2, 2})), "bucketize", "1-D", "[2, 2]");
}

}  // namespace
}  // namespace ember
