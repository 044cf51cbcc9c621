// Philox4x32-10, the Generator and the CPU random fills: what they promise.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

#include "core/philox.h"
#include "core/random_fill.h"
#include "ember/error.h"
#include "ember/generator.h"
#include "ember/parallel.h"
#include "tests/test_util.h"

namespace ember {
namespace {

using ember::testing::ThreadCount;

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
std::vector<T> uniform(int64_t n, uint64_t seed, uint64_t offset, double low = 0.0, double high = 1.0) {
  std::vector<T> out(static_cast<size_t>(n));
  cpu::fill_uniform(out.data(), n, seed, offset, low, high);
  return out;
}

template <class T>
std::vector<T> normal(int64_t n, uint64_t seed, uint64_t offset, double mean = 0.0, double std = 1.0) {
  std::vector<T> out(static_cast<size_t>(n));
  cpu::fill_normal(out.data(), n, seed, offset, mean, std);
  return out;
}

std::vector<int64_t> randint(int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  cpu::fill_randint(out.data(), n, seed, offset, low, high);
  return out;
}

template <class T>
std::pair<double, double> mean_and_variance(const std::vector<T>& v) {
  double sum = 0.0, sum_sq = 0.0;
  for (T x : v) sum += static_cast<double>(x);
  const double mean = sum / static_cast<double>(v.size());
  for (T x : v) sum_sq += (static_cast<double>(x) - mean) * (static_cast<double>(x) - mean);
  return {mean, sum_sq / static_cast<double>(v.size() - 1)};
}

// ---- the bijection -------------------------------------------------------------------------

// Random123's published known-answer vectors for Philox4x32-10 (its tests/kat_vectors).
TEST(Philox, MatchesKnownAnswerVectors) {
  struct Case {
    uint32_t counter[4];
    uint32_t key[2];
    std::array<uint32_t, 4> expected;
  };
  const Case cases[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Case& c : cases) {
    const Philox4x32 out = philox4x32_10(c.counter, c.key);
    EXPECT_EQ((std::array<uint32_t, 4>{out.c[0], out.c[1], out.c[2], out.c[3]}), c.expected);
  }
}

TEST(Philox, BlockUsesOffsetAsCounterAndSeedAsKey) {
  const uint64_t seed = 0x299f31d0a4093822ULL, block = 0x85a308d3243f6a88ULL;
  const uint32_t counter[4] = {0x243f6a88, 0x85a308d3, 0, 0};
  const uint32_t key[2] = {0xa4093822, 0x299f31d0};
  const Philox4x32 a = philox_block(seed, block), b = philox4x32_10(counter, key);
  EXPECT_EQ(std::memcmp(a.c, b.c, sizeof a.c), 0);
}

// ---- conversions ---------------------------------------------------------------------------

TEST(PhiloxConversions, UniformsCoverZeroToJustBelowOne) {
  EXPECT_EQ(uniform_float(0u), 0.0f);
  EXPECT_EQ(uniform_float(0xffffffffu), 1.0f - 0x1p-24f);
  EXPECT_EQ(uniform_float(0x80000000u), 0.5f);
  EXPECT_EQ(uniform_double(0u, 0u), 0.0);
  EXPECT_EQ(uniform_double(0xffffffffu, 0xffffffffu), 1.0 - 0x1p-53);
  EXPECT_EQ(uniform_double(0u, 0x80000000u), 0.5);
}

TEST(PhiloxConversions, BoxMullerIsFiniteAtTheExtremes) {
  float f0, f1;
  box_muller(0.0f, 0.0f, f0, f1);  // 1 - u1 = 1: r = 0
  EXPECT_EQ(f0, 0.0f);
  box_muller(uniform_float(0xffffffffu), 0.0f, f0, f1);  // 1 - u1 = 2^-24: the largest radius
  EXPECT_TRUE(std::isfinite(f0));
  EXPECT_NEAR(f0, std::sqrt(48.0 * std::log(2.0)), 1e-5);
  double d0, d1;
  box_muller(uniform_double(0xffffffffu, 0xffffffffu), 0.25, d0, d1);
  EXPECT_TRUE(std::isfinite(d1));
  EXPECT_NEAR(d1, std::sqrt(106.0 * std::log(2.0)), 1e-12);
}

TEST(PhiloxConversions, ScaledUniformStaysBelowHigh) {
  // 1 + (1 - 2^-24) rounds to 2.0f; the result must stay in [1, 2).
  const UniformScale<float> one_two = uniform_scale(1.0f, 2.0f);
  EXPECT_EQ(scale_uniform(1.0f - 0x1p-24f, one_two), std::nextafter(2.0f, 1.0f));
  EXPECT_EQ(scale_uniform(0.25f, one_two), 1.25f);
  EXPECT_EQ(scale_uniform(0.5, uniform_scale(3.0, 3.0)), 3.0);  // low == high
}

// ---- statistics (fixed seeds, so these are exact regressions with 5-sigma bounds) ----------

TEST(RandomFill, UniformFloatMomentsMatchU01) {
  const auto v = uniform<float>(1 << 20, 42, 0);
  for (float x : v) ASSERT_TRUE(x >= 0.0f && x < 1.0f);
  const auto [mean, var] = mean_and_variance(v);
  EXPECT_NEAR(mean, 0.5, 1.5e-3);
  EXPECT_NEAR(var, 1.0 / 12.0, 4e-4);
}

TEST(RandomFill, UniformDoubleMomentsAndRange) {
  const auto v = uniform<double>(1 << 20, 7, 3, -2.0, 6.0);
  for (double x : v) ASSERT_TRUE(x >= -2.0 && x < 6.0);
  const auto [mean, var] = mean_and_variance(v);
  EXPECT_NEAR(mean, 2.0, 8 * 1.5e-3);
  EXPECT_NEAR(var, 64.0 / 12.0, 64 * 4e-4);
}

TEST(RandomFill, UniformHistogramIsFlat) {
  const auto v = uniform<float>(1 << 20, 5, 0);
  constexpr int kBins = 64;
  std::vector<double> counts(kBins, 0.0);
  for (float x : v) counts[static_cast<int>(x * kBins)] += 1.0;
  const double expected = static_cast<double>(v.size()) / kBins;
  double chi2 = 0.0;
  for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 120.0);  // 63 degrees of freedom: the 99.999th percentile is about 115
}

TEST(RandomFill, NormalFloatMomentsMatchStandardNormal) {
  const auto v = normal<float>(1 << 20, 123, 0);
  const auto [mean, var] = mean_and_variance(v);
  EXPECT_NEAR(mean, 0.0, 5e-3);
  EXPECT_NEAR(var, 1.0, 7e-3);
  double m3 = 0.0, m4 = 0.0;
  for (float x : v) {
    m3 += std::pow(x, 3);
    m4 += std::pow(x, 4);
  }
  EXPECT_NEAR(m3 / v.size(), 0.0, 0.02);  // skewness 0, sd ~ sqrt(15/n)
  EXPECT_NEAR(m4 / v.size(), 3.0, 0.05);  // kurtosis 3, sd ~ sqrt(96/n)
  // The cos and sin halves of each Box-Muller pair are uncorrelated.
  double cross = 0.0;
  for (size_t i = 0; i + 1 < v.size(); i += 2) cross += static_cast<double>(v[i]) * v[i + 1];
  EXPECT_NEAR(cross / (v.size() / 2), 0.0, 7e-3);
}

TEST(RandomFill, NormalDoubleHonoursMeanAndStd) {
  const auto v = normal<double>(1 << 20, 9, 11, 3.0, 2.0);
  const auto [mean, var] = mean_and_variance(v);
  EXPECT_NEAR(mean, 3.0, 2 * 5e-3);
  EXPECT_NEAR(var, 4.0, 4 * 7e-3);
  int64_t beyond_two_sigma = 0;
  for (double x : v) beyond_two_sigma += std::abs(x - 3.0) > 4.0;
  EXPECT_NEAR(static_cast<double>(beyond_two_sigma) / v.size(), 0.0455, 2e-3);
}

TEST(RandomFill, RandintStaysInRangeAndIsRoughlyUniform) {
  const auto v = randint(1 << 20, 77, 0, -3, 7);
  std::vector<int64_t> counts(10, 0);
  for (int64_t x : v) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 7);
    ++counts[static_cast<size_t>(x + 3)];
  }
  const double expected = static_cast<double>(v.size()) / 10;
  for (int64_t c : counts) EXPECT_NEAR(static_cast<double>(c), expected, 5 * std::sqrt(expected));
}

TEST(RandomFill, RandintHandlesTheFullInt64Span) {
  const int64_t lo = INT64_MIN, hi = INT64_MAX;
  const auto v = randint(4096, 1, 0, lo, hi);
  int64_t negative = 0;
  for (int64_t x : v) {
    ASSERT_LT(x, hi);
    negative += x < 0;
  }
  EXPECT_NEAR(static_cast<double>(negative), 2048.0, 5 * 32.0);
  EXPECT_EQ(randint(100, 1, 0, 5, 6), std::vector<int64_t>(100, 5));
}

TEST(RandomFill, RejectsInvalidArguments) {
  float f = 0.0f;
  int64_t i = 0;
  EXPECT_THROW(cpu::fill_uniform(&f, 1, 0, 0, 1.0, 0.0), Error);
  EXPECT_THROW(cpu::fill_uniform(&f, 1, 0, 0, -3e38, 3e38), Error);  // high - low overflows float
  EXPECT_THROW(cpu::fill_normal(&f, 1, 0, 0, 0.0, -1.0), Error);
  EXPECT_THROW(cpu::fill_randint(&i, 1, 0, 0, 4, 4), Error);
  EXPECT_THROW(cpu::fill_uniform(&f, -1, 0, 0, 0.0, 1.0), Error);
}

// ---- the element mapping -------------------------------------------------------------------

TEST(RandomFill, ElementsFollowTheDocumentedMapping) {
  const uint64_t seed = 31337, offset = 1000;
  const auto uf = uniform<float>(10, seed, offset);
  const auto ud = uniform<double>(5, seed, offset);
  const auto nd = normal<double>(3, seed, offset);
  const auto ri = randint(3, seed, offset, 0, 1000);
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(uf[i], uniform_float(philox_block(seed, offset + i / 4).c[i % 4]));
  }
  for (int64_t i = 0; i < 5; ++i) {
    const Philox4x32 b = philox_block(seed, offset + i / 2);
    EXPECT_EQ(ud[i], uniform_double(b.c[2 * (i % 2)], b.c[2 * (i % 2) + 1]));
  }
  const Philox4x32 b0 = philox_block(seed, offset), b1 = philox_block(seed, offset + 1);
  double z0, z1;
  box_muller(uniform_double(b0.c[0], b0.c[1]), uniform_double(b0.c[2], b0.c[3]), z0, z1);
  EXPECT_EQ(nd[0], z0);
  EXPECT_EQ(nd[1], z1);
  box_muller(uniform_double(b1.c[0], b1.c[1]), uniform_double(b1.c[2], b1.c[3]), z0, z1);
  EXPECT_EQ(nd[2], z0);
  EXPECT_EQ(ri[2], static_cast<int64_t>((static_cast<uint64_t>(b1.c[1]) << 32 | b1.c[0]) % 1000));
}

// Element i depends on (seed, offset, i) only: a fill that starts k blocks later
// is the same stream shifted by k * P elements, whatever the length.
TEST(RandomFill, ElementDependsOnlyOnSeedOffsetAndIndex) {
  const auto full = normal<float>(100003, 5, 10);
  const auto shifted = normal<float>(100003 - 4 * 7, 5, 17);
  EXPECT_TRUE(bitwise_equal(shifted, std::vector<float>(full.begin() + 28, full.end())));
  const auto prefix = normal<float>(1001, 5, 10);
  EXPECT_TRUE(bitwise_equal(prefix, std::vector<float>(full.begin(), full.begin() + 1001)));
}

TEST(RandomFill, BitwiseIdenticalForOneAndManyThreads) {
  ThreadCount restore_threads;
  const int64_t n = 300007;  // many chunks and a partial last block
  set_num_threads(1);
  const auto uf1 = uniform<float>(n, 99, 5), nf1 = normal<float>(n, 99, 5);
  const auto nd1 = normal<double>(n, 99, 5);
  const auto ri1 = randint(n, 99, 5, -100, 100);
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    EXPECT_TRUE(bitwise_equal(uf1, uniform<float>(n, 99, 5))) << threads;
    EXPECT_TRUE(bitwise_equal(nf1, normal<float>(n, 99, 5))) << threads;
    EXPECT_TRUE(bitwise_equal(nd1, normal<double>(n, 99, 5))) << threads;
    EXPECT_TRUE(bitwise_equal(ri1, randint(n, 99, 5, -100, 100))) << threads;
  }
}

// ---- the Generator -------------------------------------------------------------------------

// Draws n uniform floats from g the way a rand op does.
std::vector<float> draw(Generator& g, int64_t n) {
  const uint64_t seed = g.seed();
  const uint64_t offset = g.reserve(cpu::blocks_needed_uniform<float>(n));
  return uniform<float>(n, seed, offset);
}

TEST(Generator, BlocksNeededRoundUpToWholeBlocks) {
  EXPECT_EQ(cpu::blocks_needed_uniform<float>(0), 0u);
  EXPECT_EQ(cpu::blocks_needed_uniform<float>(5), 2u);
  EXPECT_EQ(cpu::blocks_needed_uniform<double>(5), 3u);
  EXPECT_EQ(cpu::blocks_needed_normal<float>(8), 2u);
  EXPECT_EQ(cpu::blocks_needed_normal<double>(3), 2u);
  EXPECT_EQ(cpu::blocks_needed_randint(4), 2u);
}

TEST(Generator, SuccessiveDrawsContinueTheStream) {
  Generator g(2024);
  const auto first = draw(g, 12), second = draw(g, 8);
  EXPECT_EQ(g.offset(), 5u);
  // 12 is a whole number of blocks: the two draws are one draw of 20.
  const auto both = uniform<float>(20, 2024, 0);
  EXPECT_TRUE(bitwise_equal(first, std::vector<float>(both.begin(), both.begin() + 12)));
  EXPECT_TRUE(bitwise_equal(second, std::vector<float>(both.begin() + 12, both.end())));
}

TEST(Generator, PartialBlockIsDiscardedSoDrawsNeverRepeat) {
  Generator g(2024);
  draw(g, 5);                      // blocks 0-1, three lanes of block 1 unused
  const auto second = draw(g, 3);  // starts at block 2
  EXPECT_EQ(g.offset(), 3u);
  const auto stream = uniform<float>(12, 2024, 0);
  EXPECT_TRUE(bitwise_equal(second, std::vector<float>(stream.begin() + 8, stream.begin() + 11)));
}

TEST(Generator, ManualSeedReproducesTheStream) {
  Generator& g = default_generator();
  const Generator saved = g;
  manual_seed(7);
  EXPECT_EQ(g.seed(), 7u);
  EXPECT_EQ(g.offset(), 0u);
  const auto a = draw(g, 1000), b = draw(g, 1000);
  EXPECT_FALSE(bitwise_equal(a, b));
  manual_seed(7);
  EXPECT_TRUE(bitwise_equal(draw(g, 1000), a));
  g.manual_seed(8);
  EXPECT_FALSE(bitwise_equal(draw(g, 1000), a));
  g = saved;
}

TEST(Generator, CopyAndSetOffsetReplayState) {
  Generator g(11);
  draw(g, 40);
  Generator copy = g;
  const auto from_g = draw(g, 64);
  EXPECT_TRUE(bitwise_equal(draw(copy, 64), from_g));
  g.set_offset(10);
  EXPECT_TRUE(bitwise_equal(draw(g, 64), from_g));
  EXPECT_EQ(Generator().seed(), 67280421310721ULL);
}

TEST(Generator, ConcurrentReservesAreDisjoint) {
  Generator g(1);
  constexpr int kThreads = 4, kPerThread = 10000;
  std::vector<std::vector<uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int k = 0; k < kPerThread; ++k) got[t].push_back(g.reserve(3));
    });
  }
  for (auto& th : threads) th.join();
  std::vector<uint64_t> all;
  for (const auto& v : got) all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], 3 * i);
  EXPECT_EQ(g.offset(), 3u * kThreads * kPerThread);
}

}  // namespace
}  // namespace ember
