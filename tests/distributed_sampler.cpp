// DistributedSampler: each rank's share of the data set, and with the DataLoader.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/distributed_sampler.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::data {
namespace {

std::vector<std::vector<size_t>> shares(size_t n, int replicas, bool shuffle, bool drop_last, uint64_t epoch) {
  std::vector<std::vector<size_t>> out;
  for (int r = 0; r < replicas; ++r) {
    DistributedSampler s(n, replicas, r, shuffle, /*seed=*/7, drop_last);
    s.set_epoch(epoch);
    out.push_back(s.next_epoch());
    EXPECT_EQ(out.back().size(), s.size());
  }
  return out;
}

TEST(DistributedSampler, PadsSoThatEveryRankGetsAsMany) {
  const auto parts = shares(10, 3, /*shuffle=*/false, /*drop_last=*/false, 0);
  EXPECT_EQ(parts[0], (std::vector<size_t>{0, 3, 6, 9}));
  EXPECT_EQ(parts[1], (std::vector<size_t>{1, 4, 7, 0}));  // padded with the start
  EXPECT_EQ(parts[2], (std::vector<size_t>{2, 5, 8, 1}));
}

TEST(DistributedSampler, DropLastCutsTheTail) {
  const auto parts = shares(10, 3, /*shuffle=*/true, /*drop_last=*/true, 0);
  std::set<size_t> seen;
  for (const auto& p : parts) {
    EXPECT_EQ(p.size(), 3u);
    seen.insert(p.begin(), p.end());
  }
  EXPECT_EQ(seen.size(), 9u);  // distinct indices, none repeated
}

TEST(DistributedSampler, ShuffleIsTheSameAcrossRanksAndNewEachEpoch) {
  const auto e0 = shares(100, 4, true, false, 0), e0_again = shares(100, 4, true, false, 0);
  const auto e1 = shares(100, 4, true, false, 1);
  EXPECT_EQ(e0, e0_again);
  EXPECT_NE(e0, e1);
  std::vector<size_t> all;
  for (const auto& p : e0) all.insert(all.end(), p.begin(), p.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i);  // a permutation split four ways
  // next_epoch() moves on by itself; the state holds the epoch.
  DistributedSampler s(100, 4, 1, true, 7);
  EXPECT_EQ(s.next_epoch(), e0[1]);
  const TensorDict state = s.state_dict();
  EXPECT_EQ(s.next_epoch(), e1[1]);
  s.load_state_dict(state);
  EXPECT_EQ(s.next_epoch(), e1[1]);
}

TEST(DistributedSampler, FeedsTheDataLoader) {
  auto dataset = std::make_shared<TensorDataset>(arange(10).to(kFloat32));
  DataLoaderOptions o;
  o.batch_size = 2;
  o.sampler = std::make_shared<DistributedSampler>(10, 2, 1, /*shuffle=*/false);
  DataLoader loader(dataset, o);
  std::vector<float> got;
  for (Example& batch : loader)
    for (int64_t i = 0; i < batch.data.size(0); ++i) got.push_back(batch.data[i].item<float>());
  EXPECT_EQ(got, (std::vector<float>{1, 3, 5, 7, 9}));
}

TEST(DistributedSampler, BadRankIsAnError) {
  EXPECT_THROW(DistributedSampler(10, 2, 2), Error);
  EXPECT_THROW(DistributedSampler(1, 2, 0, true, 0, /*drop_last=*/true), Error);
}

}  // namespace
}  // namespace ember::data
