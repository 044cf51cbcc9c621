// addcmul, addcdiv and clamp with tensor bounds (composites in
// core/ops_ternary.cpp) against host references: broadcasting, type
// promotion, NaN bounds, min above max, the in-place forms and the errors.
// lerp is dispatched: its op-info row covers it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::all_close;
using ::ember::testing::values;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor from(const std::vector<double>& v, IntArrayRef shape, DType dtype = kFloat64) {
  Tensor t = empty({static_cast<int64_t>(v.size())}, kFloat64);
  for (size_t i = 0; i < v.size(); ++i) t.data_ptr<double>()[i] = v[i];
  return t.to(dtype).reshape(shape);
}

TEST(Addcmul, BroadcastsAndScalesByValue) {
  const Tensor s = from({1, 2, 3, 4, 5, 6}, {2, 3}), t1 = from({1, -1, 2}, {3}), t2 = from({2, 0.5}, {2, 1});
  // s[i][j] + 0.5 * t1[j] * t2[i]
  const Tensor expected = from({1 + 0.5 * 1 * 2, 2 + 0.5 * -1 * 2, 3 + 0.5 * 2 * 2, 4 + 0.5 * 1 * 0.5,
                                5 + 0.5 * -1 * 0.5, 6 + 0.5 * 2 * 0.5},
                               {2, 3});
  EXPECT_TRUE(all_close(addcmul(s, t1, t2, 0.5), expected, 0, 0));
  EXPECT_TRUE(all_close(s.addcmul(t1, t2, 0.5), expected, 0, 0));
  Tensor in_place = s.clone();
  EXPECT_TRUE(in_place.addcmul_(t1, t2, 0.5).is_same(in_place));
  EXPECT_TRUE(all_close(in_place, expected, 0, 0));
}

TEST(Addcmul, PromotesLikeItsProducts) {
  const Tensor si = from({1, 2}, {2}, kInt64), ti = from({3, 4}, {2}, kInt32);
  const Tensor ints = addcmul(si, ti, ti, 2);
  EXPECT_EQ(ints.dtype(), kInt64);
  EXPECT_EQ(values(ints), std::vector<double>({1 + 2 * 9, 2 + 2 * 16}));
  EXPECT_EQ(addcmul(si, from({0.5, 1}, {2}, kFloat32), ti).dtype(), kFloat32);
  EXPECT_EQ(addcmul(from({1, 2}, {2}, kFloat32), ti, ti).dtype(), kFloat32);
}

TEST(Addcdiv, DividesThenScales) {
  const Tensor s = from({1, 2, 3}, {3}), t1 = from({1, 4, 9}, {3}), t2 = from({2, 8, 3}, {3});
  const Tensor expected = from({1 - 2 * 0.5, 2 - 2 * 0.5, 3 - 2 * 3.0}, {3});
  EXPECT_TRUE(all_close(addcdiv(s, t1, t2, -2), expected, 0, 0));
  Tensor in_place = s.clone();
  in_place.addcdiv_(t1, t2, -2);
  EXPECT_TRUE(all_close(in_place, expected, 0, 0));
  // An integer numerator over a float denominator is fine.
  EXPECT_EQ(addcdiv(s.to(kFloat32), from({1, 2, 3}, {3}, kInt64), t2.to(kFloat32)).dtype(), kFloat32);
}

TEST(Addcdiv, RefusesIntegerDivision) {
  const Tensor i = from({1, 2}, {2}, kInt64);
  EXPECT_EMBER_ERROR(addcdiv(i.to(kFloat32), i, i), "addcdiv", "integer division", "int64");
  EXPECT_EMBER_ERROR(addcdiv(i, i, i.to(kBool)), "addcdiv", "integer division");
  Tensor f = i.to(kFloat32);
  EXPECT_EMBER_ERROR(f.addcdiv_(i, i), "addcdiv_", "integer division");
}

TEST(ClampTensor, AppliesEachBoundWhereGiven) {
  const Tensor x = from({-2, 0.5, 3, 1}, {4});
  const Tensor lo = from({-1, 1, 0, 0}, {4}), hi = from({0, 2, 2.5, 0.5}, {4});
  EXPECT_TRUE(all_close(clamp(x, lo, hi), from({-1, 1, 2.5, 0.5}, {4}), 0, 0));
  EXPECT_TRUE(all_close(clamp(x, lo), from({-1, 1, 3, 1}, {4}), 0, 0));
  EXPECT_TRUE(all_close(clamp(x, std::nullopt, hi), from({-2, 0.5, 2.5, 0.5}, {4}), 0, 0));
  EXPECT_TRUE(all_close(x.clamp(lo, hi), clamp(x, lo, hi), 0, 0));
}

TEST(ClampTensor, MinAboveMaxGivesMaxAndNaNPropagatesFromEveryArgument) {
  const Tensor x = from({1, kNaN, 3, 2}, {4});
  const Tensor lo = from({2, 0, kNaN, 2}, {4}), hi = from({3, 3, 3, kNaN}, {4});
  const std::vector<double> got = values(clamp(x, lo, hi));
  EXPECT_EQ(got[0], 2);
  for (size_t i = 1; i < 4; ++i) EXPECT_TRUE(std::isnan(got[i])) << i;
  EXPECT_TRUE(all_close(clamp(from({1, 3}, {2}), from({3}, {1}), from({1}, {1})), from({1, 1}, {2}), 0, 0));
}

TEST(ClampTensor, BroadcastsAndPromotes) {
  const Tensor x = from({1, 5}, {2});
  const Tensor grown = clamp(x, from({0, 2}, {2, 1}));
  EXPECT_EQ(grown.sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(values(grown), std::vector<double>({1, 5, 2, 5}));
  const Tensor promoted = clamp(from({1, 5}, {2}, kInt64), from({2.5}, {1}, kFloat32));
  EXPECT_EQ(promoted.dtype(), kFloat32);
  EXPECT_EQ(values(promoted), std::vector<double>({2.5, 5}));
}

TEST(ClampTensor, InPlaceKeepsSelfAndRefusesGrowingIt) {
  Tensor x = from({-3, 0, 3}, {3});
  EXPECT_TRUE(x.clamp_(from({-1}, {1}), from({1, 1, 2}, {3})).is_same(x));
  EXPECT_EQ(values(x), std::vector<double>({-1, 0, 2}));
  EXPECT_EMBER_ERROR(x.clamp_(from({0, 1}, {2, 1})), "clamp_", "[3]", "[2, 3]");
}

TEST(ClampTensor, NeedsABound) {
  EXPECT_EMBER_ERROR(clamp(from({1}, {1}), std::optional<Tensor>(), std::optional<Tensor>()), "clamp",
                     "at least one of min and max");
}

}  // namespace
}  // namespace ember
