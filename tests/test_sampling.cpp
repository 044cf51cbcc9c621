// bernoulli, bernoulli_ and multinomial through the public API
// (core/ops_random.cpp): the same seed gives the same draws, the generator
// advances, and the draws have the right statistics (means and frequencies
// within five standard deviations of what the probabilities say).
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::values;

double mean_of(const Tensor& t) { return t.to(kFloat64).mean().item<double>(); }

TEST(Bernoulli, DrawsZerosAndOnesWithMeanP) {
  Generator g(11);
  const Tensor draws = bernoulli(full({200, 100}, 0.3), &g);
  EXPECT_EQ(draws.dtype(), kFloat32);
  for (double v : values(draws)) ASSERT_TRUE(v == 0 || v == 1) << v;
  const double sd = std::sqrt(0.3 * 0.7 / 20000);
  EXPECT_NEAR(mean_of(draws), 0.3, 5 * sd);
}

TEST(Bernoulli, FollowsEachElementsProbability) {
  Generator g(12);
  const Tensor p = linspace(0, 1, 11, kFloat64).unsqueeze(1).expand({11, 4000});
  const Tensor row_means = bernoulli(p, &g).mean({1});
  const std::vector<double> got = values(row_means);
  for (int i = 0; i <= 10; ++i) {
    const double q = i / 10.0, sd = std::sqrt(q * (1 - q) / 4000);
    EXPECT_NEAR(got[i], q, 5 * sd + 1e-12) << "p = " << q;
  }
}

TEST(Bernoulli, SameSeedSameDrawsAndTheGeneratorAdvances) {
  Generator a(7), b(7);
  const Tensor x = bernoulli(full({1000}, 0.5, kFloat64), &a);
  EXPECT_EQ(values(x), values(bernoulli(full({1000}, 0.5, kFloat64), &b)));
  EXPECT_NE(values(x), values(bernoulli(full({1000}, 0.5, kFloat64), &a)));
  manual_seed(5);
  const Tensor d1 = bernoulli(full({64}, 0.5));
  manual_seed(5);
  EXPECT_EQ(values(d1), values(bernoulli(full({64}, 0.5))));
}

TEST(Bernoulli, InPlaceKeepsTheDtypeAndTakesAScalarOrATensorP) {
  Generator g(13);
  Tensor ints = zeros({3000}, kInt64);
  EXPECT_TRUE(ints.bernoulli_(0.25, &g).is_same(ints));
  EXPECT_EQ(ints.dtype(), kInt64);
  EXPECT_NEAR(mean_of(ints), 0.25, 5 * std::sqrt(0.25 * 0.75 / 3000));
  Tensor flags = zeros({2, 3}, kBool);
  flags.bernoulli_(ember::tensor({0.0, 1.0, 1.0}), &g);  // broadcast over the rows
  EXPECT_EQ(values(flags), std::vector<double>({0, 1, 1, 0, 1, 1}));
  const Tensor same_shape = full({5}, 2.0).bernoulli(1.0, &g);
  EXPECT_EQ(values(same_shape), std::vector<double>(5, 1.0));
}

TEST(Bernoulli, DrawsDoNotDependOnTheLayout) {
  Generator a(21), b(21);
  Tensor contiguous = zeros({6, 5}), transposed = zeros({5, 6}).t();
  contiguous.bernoulli_(0.5, &a);
  transposed.bernoulli_(0.5, &b);
  EXPECT_EQ(values(contiguous), values(transposed));
}

TEST(Bernoulli, RefusesProbabilitiesOutsideTheUnitInterval) {
  Tensor t = zeros({3});
  EXPECT_EMBER_ERROR(t.bernoulli_(1.5), "bernoulli_", "[0, 1]", "1.5");
  EXPECT_EMBER_ERROR(bernoulli(ember::tensor({0.5f, -0.1f})), "bernoulli_", "[0, 1]");
  EXPECT_EMBER_ERROR(bernoulli(ember::tensor({1, 0})), "bernoulli", "floating");
  EXPECT_EMBER_ERROR(t.bernoulli_(ember::tensor({0.5f, 0.5f})), "bernoulli_", "broadcast");
}

TEST(Multinomial, WithReplacementFollowsTheWeights) {
  Generator g(31);
  const Tensor w = ember::tensor({1.0f, 0.0f, 3.0f, 6.0f});  // not normalised
  const int64_t n = 20000;
  const Tensor draws = multinomial(w, n, true, &g);
  EXPECT_EQ(draws.dtype(), kInt64);
  EXPECT_EQ(draws.sizes(), IntArrayRef({n}));
  std::vector<double> hits(4, 0);
  for (double c : values(draws)) hits[static_cast<size_t>(c)] += 1;
  EXPECT_EQ(hits[1], 0);  // weight 0 is never drawn
  for (int j : {0, 2, 3}) {
    const double q = values(w)[j] / 10.0;
    EXPECT_NEAR(hits[j], n * q, 5 * std::sqrt(n * q * (1 - q))) << "category " << j;
  }
}

TEST(Multinomial, WithoutReplacementDrawsDistinctCategoriesHeavyFirst) {
  Generator g(32);
  const Tensor w = ember::tensor({1.0, 2.0, 4.0, 8.0, 0.0}).unsqueeze(0).expand({4000, 5}).contiguous();
  const Tensor draws = w.multinomial(4, false, &g);
  EXPECT_EQ(draws.sizes(), IntArrayRef({4000, 4}));
  const std::vector<double> v = values(draws);
  std::vector<double> first(5, 0);
  for (int64_t r = 0; r < 4000; ++r) {
    std::set<double> row(v.begin() + r * 4, v.begin() + r * 4 + 4);
    ASSERT_EQ(row.size(), 4u) << "row " << r;
    ASSERT_EQ(row.count(4.0), 0u) << "row " << r << " drew the zero weight";
    first[static_cast<size_t>(v[r * 4])] += 1;
  }
  // The first draw of each row is category j with probability w_j / 15.
  for (int j = 0; j < 4; ++j) {
    const double q = std::pow(2.0, j) / 15.0;
    EXPECT_NEAR(first[j], 4000 * q, 5 * std::sqrt(4000 * q * (1 - q))) << "category " << j;
  }
}

TEST(Multinomial, SameSeedSameDraws) {
  const Tensor w = ember::tensor({0.2, 0.5, 0.3});
  Generator a(3), b(3);
  const Tensor x = multinomial(w, 50, true, &a);
  EXPECT_EQ(values(x), values(multinomial(w, 50, true, &b)));
  EXPECT_NE(values(x), values(multinomial(w, 50, true, &a)));
}

TEST(Multinomial, Errors) {
  EXPECT_EMBER_ERROR(multinomial(ember::tensor({1.0f, -1.0f}), 1), "multinomial", "non-negative");
  EXPECT_EMBER_ERROR(multinomial(ember::tensor({0.0f, 0.0f}), 1), "multinomial", "sum to 0");
  EXPECT_EMBER_ERROR(multinomial(ember::tensor({1.0f, 1.0f}), 3, false), "multinomial", "without replacement");
  EXPECT_EMBER_ERROR(multinomial(ember::tensor({1.0f}), 0), "multinomial", "num_samples");
  EXPECT_EMBER_ERROR(multinomial(ones({2, 2, 2}), 1), "multinomial", "1 or 2 dims");
}

}  // namespace
}  // namespace ember
