// Samplers: the orders they produce, their reproducibility by seed, and a
// saved state that resumes the same sequence of epochs.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "ember/data.h"
#include "tests/test_data_util.h"
#include "tests/test_util.h"

namespace ember::data {
namespace {

std::vector<size_t> iota(size_t n) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), size_t{0});
  return v;
}

bool is_permutation_of(std::vector<size_t> order, std::vector<size_t> items) {
  std::sort(order.begin(), order.end());
  std::sort(items.begin(), items.end());
  return order == items;
}

TEST(DataSampler, SequentialVisitsEveryIndexInOrder) {
  SequentialSampler s(5);
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ(s.next_epoch(), iota(5));
  EXPECT_EQ(s.next_epoch(), iota(5));
  EXPECT_TRUE(s.state_dict().empty());
}

TEST(DataSampler, RandomDrawsAPermutationPerEpoch) {
  RandomSampler s(100, /*seed=*/7);
  const std::vector<size_t> e0 = s.next_epoch(), e1 = s.next_epoch();
  EXPECT_TRUE(is_permutation_of(e0, iota(100)));
  EXPECT_TRUE(is_permutation_of(e1, iota(100)));
  EXPECT_NE(e0, iota(100));
  EXPECT_NE(e0, e1);  // a fresh order each epoch
}

TEST(DataSampler, RandomIsReproducibleBySeed) {
  RandomSampler a(50, 123), b(50, 123), c(50, 124);
  for (int epoch = 0; epoch < 3; ++epoch) {
    const std::vector<size_t> ea = a.next_epoch();
    EXPECT_EQ(ea, b.next_epoch()) << "epoch " << epoch;
    EXPECT_NE(ea, c.next_epoch()) << "epoch " << epoch;
  }
}

TEST(DataSampler, RandomHandlesTinySizes) {
  RandomSampler empty(0, 1), one(1, 1);
  EXPECT_TRUE(empty.next_epoch().empty());
  EXPECT_EQ(one.next_epoch(), std::vector<size_t>{0});
}

TEST(DataSampler, SubsetRandomPermutesTheGivenIndices) {
  const std::vector<size_t> subset = {3, 9, 4, 20, 11, 7};
  SubsetRandomSampler s(subset, 5);
  EXPECT_EQ(s.size(), subset.size());
  std::set<std::vector<size_t>> orders;
  for (int epoch = 0; epoch < 5; ++epoch) {
    const std::vector<size_t> order = s.next_epoch();
    EXPECT_TRUE(is_permutation_of(order, subset));
    orders.insert(order);
  }
  EXPECT_GT(orders.size(), 1u);
}

TEST(DataSampler, RandomStateResumesTheSameEpochs) {
  RandomSampler original(40, 99);
  original.next_epoch();
  const TensorDict saved = original.state_dict();
  const std::vector<size_t> e1 = original.next_epoch(), e2 = original.next_epoch();

  RandomSampler resumed(40, /*seed=*/1);  // its own seed is replaced by the saved state
  resumed.load_state_dict(saved);
  EXPECT_EQ(resumed.next_epoch(), e1);
  EXPECT_EQ(resumed.next_epoch(), e2);
}

TEST(DataSampler, RandomStateSurvivesSafetensors) {
  ember::testing::ScratchDir dir;
  RandomSampler original(30, 0xFFFFFFFFFFFFFFF1ULL);  // a seed above 2^63 round-trips through int64
  save_safetensors(original.state_dict(), dir.path("sampler.safetensors"));
  const std::vector<size_t> e0 = original.next_epoch();
  RandomSampler resumed(30, 2);
  resumed.load_state_dict(load_safetensors(dir.path("sampler.safetensors")).tensors);
  EXPECT_EQ(resumed.next_epoch(), e0);
  EXPECT_EQ(resumed.generator().seed(), 0xFFFFFFFFFFFFFFF1ULL);
}

TEST(DataSampler, RandomStateWithAMissingKeyIsAnError) {
  RandomSampler s(10, 1);
  TensorDict state = s.state_dict();
  state.erase("offset");
  EXPECT_EMBER_ERROR(s.load_state_dict(state), "RandomSampler", "offset");
  state = s.state_dict();
  state["seed"] = ember::zeros({2});
  EXPECT_EMBER_ERROR(s.load_state_dict(state), "seed", "one-element int64");
}

TEST(DataSampler, BatchSamplerGroupsInOrder) {
  BatchSampler b(std::make_shared<SequentialSampler>(10), 3, /*drop_last=*/false);
  EXPECT_EQ(b.size(), 4u);
  const std::vector<std::vector<size_t>> expected = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}};
  EXPECT_EQ(b.next_epoch(), expected);
}

TEST(DataSampler, BatchSamplerDropLastDropsTheShortBatch) {
  BatchSampler b(std::make_shared<SequentialSampler>(10), 3, /*drop_last=*/true);
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b.next_epoch().size(), 3u);
  BatchSampler exact(std::make_shared<SequentialSampler>(9), 3, /*drop_last=*/true);
  EXPECT_EQ(exact.size(), 3u);
  EXPECT_EQ(exact.next_epoch().back(), (std::vector<size_t>{6, 7, 8}));
}

TEST(DataSampler, BatchSamplerRejectsZeroBatchSize) {
  EXPECT_EMBER_ERROR(BatchSampler(std::make_shared<SequentialSampler>(3), 0, false), "batch_size");
}

}  // namespace
}  // namespace ember::data
