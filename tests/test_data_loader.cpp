// DataLoader: batch shapes and order, shuffling, worker threads that give the
// same batches as the calling thread, errors that reach the loop, shutdown
// that never hangs, and a saved state that resumes the run bit for bit.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>
#include <optional>
#include <vector>

#include "ember/cuda.h"
#include "ember/data.h"
#include "tests/test_data_util.h"
#include "tests/test_util.h"

namespace ember::data {
namespace {

using namespace std::chrono_literals;
using ember::testing::finishes_within;
using ember::testing::same_bits;
using ember::testing::values;

// Sample i: data [2, 3] holding 10 i + (0..5) as float32, target i as int64.
// Optionally sleeps (a fixed or an index-dependent time, to shuffle the
// workers' finishing order) and throws at one index.
class RangeDataset : public Dataset {
 public:
  struct Options {
    std::chrono::microseconds delay{0};
    bool jitter = false;  // delay * (i % 3) instead of delay
    size_t fail_at = std::numeric_limits<size_t>::max();
  };
  explicit RangeDataset(size_t n) : RangeDataset(n, Options{}) {}
  RangeDataset(size_t n, Options options) : n_(n), options_(options) {}
  size_t size() const override { return n_; }
  Example get(size_t i) const override {
    const auto delay = options_.jitter ? options_.delay * static_cast<int>(i % 3) : options_.delay;
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (i == options_.fail_at) throw std::runtime_error("disk on fire");
    Tensor data = arange(6, kFloat32).add(10.0 * static_cast<double>(i)).view({2, 3});
    return Example{data, scalar_tensor(static_cast<int64_t>(i), kInt64)};
  }

 private:
  size_t n_;
  Options options_;
};

// Every batch of `epochs` epochs, in order.
std::vector<Example> collect(DataLoader& loader, int epochs = 1) {
  std::vector<Example> batches;
  for (int e = 0; e < epochs; ++e)
    for (Example& b : loader) batches.push_back(b);
  return batches;
}

std::vector<double> targets_of(const std::vector<Example>& batches) {
  std::vector<double> out;
  for (const Example& b : batches)
    for (double v : values(b.target)) out.push_back(v);
  return out;
}

void expect_same_batches(const std::vector<Example>& a, const std::vector<Example>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_TRUE(same_bits(a[k].data, b[k].data)) << "batch " << k;
    EXPECT_TRUE(same_bits(a[k].target, b[k].target)) << "batch " << k;
  }
}

// A random crop and flip over RangeDataset-like images, so batches depend on the transforms' randomness.
std::shared_ptr<Dataset> augmented_images(size_t n) {
  Tensor images = arange(static_cast<int64_t>(n * 16), kFloat32).view({static_cast<int64_t>(n), 1, 4, 4});
  auto base = std::make_shared<TensorDataset>(images, arange(static_cast<int64_t>(n)));
  return std::make_shared<MapDataset>(base, Compose({RandomCrop(4, /*padding=*/1), RandomHorizontalFlip()}));
}

TEST(DataLoader, DefaultCollateStacksDataAndTargets) {
  DataLoader loader(std::make_shared<RangeDataset>(10), {.batch_size = 4});
  EXPECT_EQ(loader.size(), 3u);
  const std::vector<Example> batches = collect(loader);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].data.sizes(), IntArrayRef({4, 2, 3}));
  EXPECT_EQ(batches[0].data.dtype(), kFloat32);
  EXPECT_EQ(batches[0].target.sizes(), IntArrayRef({4}));
  EXPECT_EQ(batches[0].target.dtype(), kInt64);
  EXPECT_EQ(batches[2].data.sizes(), IntArrayRef({2, 2, 3}));  // the short last batch
  EXPECT_EQ(values(batches[1].data[1]), (std::vector<double>{50, 51, 52, 53, 54, 55}));
  EXPECT_EQ(targets_of(batches), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(DataLoader, DropLastDropsTheShortBatch) {
  DataLoader loader(std::make_shared<RangeDataset>(10), {.batch_size = 4, .drop_last = true});
  EXPECT_EQ(loader.size(), 2u);
  EXPECT_EQ(targets_of(collect(loader)), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(DataLoader, TensorDatasetBatchesAreItsRows) {
  Tensor x = randn({7, 3});
  Tensor y = randint(0, 5, {7});
  DataLoader loader(std::make_shared<TensorDataset>(x, y), {.batch_size = 7});
  const std::vector<Example> batches = collect(loader);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_TRUE(same_bits(batches[0].data, x));
  EXPECT_TRUE(same_bits(batches[0].target, y));
}

TEST(DataLoader, ShuffleVisitsEverySampleOncePerEpochInANewOrder) {
  DataLoader loader(std::make_shared<RangeDataset>(32), {.batch_size = 5, .shuffle = true, .seed = 3});
  const std::vector<double> e0 = targets_of(collect(loader)), e1 = targets_of(collect(loader));
  EXPECT_EQ(std::set<double>(e0.begin(), e0.end()).size(), 32u);
  EXPECT_EQ(std::set<double>(e1.begin(), e1.end()).size(), 32u);
  EXPECT_NE(e0, e1);
  EXPECT_EQ(loader.epoch(), 2u);

  DataLoader again(std::make_shared<RangeDataset>(32), {.batch_size = 5, .shuffle = true, .seed = 3});
  EXPECT_EQ(targets_of(collect(again)), e0);
}

TEST(DataLoader, SeedDefaultsToTheGlobalGenerator) {
  manual_seed(11);
  DataLoader a(std::make_shared<RangeDataset>(20), {.batch_size = 20, .shuffle = true});
  manual_seed(11);
  DataLoader b(std::make_shared<RangeDataset>(20), {.batch_size = 20, .shuffle = true});
  EXPECT_EQ(targets_of(collect(a)), targets_of(collect(b)));
}

TEST(DataLoader, WorkersGiveTheSameBatchesInTheSameOrder) {
  auto run = [](size_t workers, size_t prefetch, bool persistent) {
    DataLoader loader(augmented_images(37), {.batch_size = 4,
                                             .shuffle = true,
                                             .num_workers = workers,
                                             .prefetch_factor = prefetch,
                                             .persistent_workers = persistent,
                                             .seed = 21});
    return collect(loader, /*epochs=*/3);
  };
  const std::vector<Example> inline_batches = run(0, 2, false);
  ASSERT_EQ(inline_batches.size(), 30u);
  expect_same_batches(inline_batches, run(2, 2, false));
  expect_same_batches(inline_batches, run(3, 1, true));
}

TEST(DataLoader, WorkersKeepOrderWhenLaterBatchesFinishFirst) {
  RangeDataset::Options slow{.delay = 300us, .jitter = true};
  DataLoader loader(std::make_shared<RangeDataset>(24, slow),
                    {.batch_size = 1, .num_workers = 3, .prefetch_factor = 4});
  std::vector<double> expected(24);
  for (size_t i = 0; i < 24; ++i) expected[i] = static_cast<double>(i);
  EXPECT_EQ(targets_of(collect(loader)), expected);
}

TEST(DataLoader, AnErrorInGetReachesTheLoopWithItsMessage) {
  for (size_t workers : {size_t{0}, size_t{2}}) {
    RangeDataset::Options failing{.fail_at = 7};
    DataLoader loader(std::make_shared<RangeDataset>(20, failing),
                      {.batch_size = 4, .num_workers = workers, .name = "train"});
    size_t delivered = 0;
    EXPECT_EMBER_ERROR(for (Example& b : loader) { delivered += static_cast<size_t>(b.data.size(0)); },
                       "train", "batch 1", "get(7)", "disk on fire");
    EXPECT_EQ(delivered, 4u) << workers << " workers";
  }
}

TEST(DataLoader, AnErrorInCollateReachesTheLoop) {
  for (size_t workers : {size_t{0}, size_t{2}}) {
    DataLoaderOptions options{.batch_size = 3, .num_workers = workers};
    options.collate = [](std::vector<Example>&& samples) -> Example {
      if (samples.size() < 3) throw std::runtime_error("short batch");
      return default_collate(std::move(samples));
    };
    DataLoader loader(std::make_shared<RangeDataset>(7), options);
    EXPECT_EMBER_ERROR(collect(loader), "DataLoader", "collate failed for batch 2", "short batch");
  }
}

TEST(DataLoader, CustomCollateIsUsed) {
  DataLoaderOptions options{.batch_size = 4};
  options.collate = [](std::vector<Example>&& samples) {
    Tensor sum = zeros({2, 3});
    for (const Example& s : samples) sum = sum + s.data;
    return Example{sum, Tensor()};
  };
  DataLoader loader(std::make_shared<RangeDataset>(4), options);
  const std::vector<Example> batches = collect(loader);
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_FALSE(batches[0].target.defined());
  EXPECT_EQ(values(batches[0].data), (std::vector<double>{60, 64, 68, 72, 76, 80}));
}

TEST(DataLoader, BreakingOutOfTheLoopDoesNotHang) {
  EXPECT_TRUE(finishes_within(60s, [] {
    RangeDataset::Options slow{.delay = 20ms};
    for (bool persistent : {false, true}) {
      DataLoader loader(std::make_shared<RangeDataset>(1000, slow),
                        {.batch_size = 2, .num_workers = 2, .prefetch_factor = 4, .persistent_workers = persistent});
      for (Example& b : loader) {
        (void)b;
        break;
      }
      // A new epoch after the abandoned one, then the loader dies mid-epoch.
      auto it = loader.begin();
      ++it;
      EXPECT_EQ(loader.epoch(), 1u);
    }
  }));
}

TEST(DataLoader, AnExceptionInTheLoopBodyDoesNotHang) {
  EXPECT_TRUE(finishes_within(60s, [] {
    RangeDataset::Options slow{.delay = 10ms};
    DataLoader loader(std::make_shared<RangeDataset>(500, slow), {.batch_size = 1, .num_workers = 3});
    EXPECT_THROW(
        for (Example& b : loader) {
          (void)b;
          throw std::runtime_error("user code failed");
        },
        std::runtime_error);
    EXPECT_EQ(values(loader.begin()->target), std::vector<double>{0});  // usable afterwards
  }));
}

TEST(DataLoader, StateResumesMidEpochBitForBit) {
  auto options = [](uint64_t seed, size_t workers) {
    return DataLoaderOptions{.batch_size = 3, .shuffle = true, .num_workers = workers, .seed = seed};
  };
  // The original run: epoch 0, then 4 batches of epoch 1, save, then the rest and epoch 2.
  DataLoader original(augmented_images(20), options(5, 2));
  collect(original);
  TensorDict saved;
  std::vector<Example> after_save;
  size_t seen = 0;
  for (Example& b : original) {
    if (++seen == 4) {
      saved = original.state_dict();
      continue;
    }
    if (seen > 4) after_save.push_back(b);
  }
  for (Example& b : original) after_save.push_back(b);

  ember::testing::ScratchDir dir;
  save_safetensors(saved, dir.path("loader.safetensors"));
  DataLoader resumed(augmented_images(20), options(/*another seed*/ 77, 0));
  resumed.load_state_dict(load_safetensors(dir.path("loader.safetensors")).tensors);
  EXPECT_EQ(resumed.epoch(), 1u);
  std::vector<Example> replay = collect(resumed, 2);
  EXPECT_EQ(replay.size(), 3u + 7u);  // 7 batches per epoch, 4 of epoch 1 were done
  expect_same_batches(after_save, replay);
  EXPECT_EQ(resumed.epoch(), original.epoch());
}

TEST(DataLoader, StateAtAnEpochBoundaryResumesTheNextEpoch) {
  DataLoader original(augmented_images(10), {.batch_size = 4, .shuffle = true, .seed = 8});
  collect(original);
  const TensorDict saved = original.state_dict();
  EXPECT_EQ(original.state_dict().at("batches_done").item<int64_t>(), 0);
  const std::vector<Example> next_epoch = collect(original);
  DataLoader resumed(augmented_images(10), {.batch_size = 4, .shuffle = true, .seed = 9});
  resumed.load_state_dict(saved);
  expect_same_batches(next_epoch, collect(resumed));
}

TEST(DataLoader, StateFromALongerEpochIsAnError) {
  DataLoader big(std::make_shared<RangeDataset>(30), {.batch_size = 2});
  auto it = big.begin();
  for (int k = 0; k < 9; ++k) ++it;
  const TensorDict saved = big.state_dict();
  DataLoader small(std::make_shared<RangeDataset>(6), {.batch_size = 2});
  EXPECT_EMBER_ERROR(small.load_state_dict(saved), "DataLoader", "10 batches done", "only 3");
}

TEST(DataLoader, MovingALoaderKeepsItsIterationGoing) {
  DataLoader original(std::make_shared<RangeDataset>(6), {.batch_size = 2, .num_workers = 2});
  // Declared before the iterator so that it outlives it, as a container must outlive its iterators.
  std::optional<DataLoader> moved;
  auto it = original.begin();
  moved.emplace(std::move(original));
  std::vector<double> seen = values(it->target);
  for (++it; it != moved->end(); ++it)
    for (double v : values(it->target)) seen.push_back(v);
  EXPECT_EQ(seen, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(moved->epoch(), 1u);
}

TEST(DataLoader, CountsBatchesAndTheTimeSpentWaiting) {
  RangeDataset::Options slow{.delay = 1ms};
  DataLoader loader(std::make_shared<RangeDataset>(6, slow), {.batch_size = 2});
  collect(loader);
  EXPECT_EQ(loader.stats().batches, 3u);
  EXPECT_GT(loader.wait_seconds(), 0.0);  // with no workers the loop waits for every get()
  loader.reset_stats();
  EXPECT_EQ(loader.stats().batches, 0u);
  EXPECT_EQ(loader.wait_seconds(), 0.0);
}

TEST(DataLoader, PinMemoryKeepsTheValues) {
  DataLoader plain(std::make_shared<RangeDataset>(5), {.batch_size = 5});
  DataLoader pinned(std::make_shared<RangeDataset>(5), {.batch_size = 5, .num_workers = 1, .pin_memory = true});
  const std::vector<Example> a = collect(plain), b = collect(pinned);
  expect_same_batches(a, b);
  EXPECT_EQ(b[0].data.is_pinned(), cuda_is_available());
  if (cuda_is_available()) {
    EXPECT_TRUE(same_bits(b[0].data.cuda().cpu(), a[0].data));
  }
}

TEST(PinMemory, NeedsACudaDeviceAndACpuTensor) {
  const Tensor t = arange(6).view({2, 3}).t();
  EXPECT_FALSE(t.is_pinned());
  EXPECT_FALSE(Tensor().is_pinned());
  EXPECT_EMBER_ERROR(Tensor().pin_memory(), "pin_memory", "undefined");
  if (!cuda_is_available()) {
    EXPECT_EMBER_ERROR(t.pin_memory(), "pin_memory", "CUDA device");
    return;
  }
  const Tensor p = t.pin_memory();  // a contiguous copy
  EXPECT_TRUE(p.is_pinned());
  EXPECT_TRUE(p.is_contiguous());
  EXPECT_TRUE(same_bits(p, t));
  EXPECT_EQ(p.pin_memory().data_ptr(), p.data_ptr());  // already pinned: itself
}

TEST(DataLoader, RejectsBadOptions) {
  EXPECT_EMBER_ERROR(DataLoader(std::make_shared<RangeDataset>(3), {.batch_size = 0}), "batch_size");
  EXPECT_EMBER_ERROR(DataLoader(std::make_shared<RangeDataset>(3), {.num_workers = 2, .prefetch_factor = 0}),
                     "prefetch_factor");
  EXPECT_EMBER_ERROR(DataLoader(std::shared_ptr<Dataset>(), {}), "dataset is null");
}

// 0, 1, 2, ... up to n - 1 as samples (data [2] = {k, -k}, target k).
class CountingStream : public IterableDataset {
 public:
  explicit CountingStream(int64_t n) : n_(n) {}
  std::optional<Example> next() override {
    if (next_ >= n_) return std::nullopt;
    const int64_t k = next_++;
    return Example{tensor({static_cast<float>(k), -static_cast<float>(k)}), scalar_tensor(k, kInt64)};
  }
  void reset() override { next_ = 0; }

 private:
  int64_t n_;
  int64_t next_ = 0;
};

TEST(DataLoader, IterableDatasetIsBatchedInStreamOrder) {
  for (size_t workers : {size_t{0}, size_t{3}}) {
    DataLoader loader(std::make_shared<CountingStream>(11), {.batch_size = 4, .num_workers = workers});
    const std::vector<Example> batches = collect(loader, 2);
    ASSERT_EQ(batches.size(), 6u) << workers << " workers";
    EXPECT_EQ(batches[2].data.sizes(), IntArrayRef({3, 2}));
    std::vector<double> expected;
    for (int e = 0; e < 2; ++e)
      for (int k = 0; k < 11; ++k) expected.push_back(k);
    EXPECT_EQ(targets_of(batches), expected);
  }
}

TEST(DataLoader, IterableDatasetHonoursDropLastAndResumes) {
  DataLoader loader(std::make_shared<CountingStream>(11), {.batch_size = 4, .drop_last = true, .num_workers = 2});
  EXPECT_EQ(targets_of(collect(loader)), (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EMBER_ERROR(loader.size(), "IterableDataset", "no size");

  auto it = loader.begin();  // one batch into epoch 1
  const TensorDict saved = loader.state_dict();
  DataLoader resumed(std::make_shared<CountingStream>(11), {.batch_size = 4, .drop_last = true});
  resumed.load_state_dict(saved);
  EXPECT_EQ(targets_of(collect(resumed)), (std::vector<double>{4, 5, 6, 7}));
}

// A state claiming more batches than a stream holds ends at the stream's end
// with an error (it once looped over the exhausted stream for 2^64 batches).
TEST(DataLoader, StateBeyondTheEndOfAStreamIsAnError) {
  DataLoader loader(std::make_shared<CountingStream>(6), {.batch_size = 2});
  TensorDict state = loader.state_dict();
  state["batches_done"] = full({1}, Scalar(int64_t{-1}), kInt64);
  loader.load_state_dict(state);
  EXPECT_EMBER_ERROR(loader.begin(), "DataLoader", "batches done", "the stream ended after 3");
}

TEST(DataLoader, IterableDatasetRejectsShuffle) {
  EXPECT_EMBER_ERROR(DataLoader(std::make_shared<CountingStream>(3), {.shuffle = true}), "IterableDataset",
                     "shuffle");
}

TEST(DataCollate, RejectsSamplesOfDifferentShapes) {
  std::vector<Example> samples = {{zeros({2, 3}), Tensor()}, {zeros({2, 4}), Tensor()}};
  EXPECT_EMBER_ERROR(default_collate(std::move(samples)), "default_collate", "example 1", "[2, 4]", "[2, 3]");
}

TEST(DataCollate, RejectsTargetsInSomeSamplesOnly) {
  std::vector<Example> samples = {{zeros({2}), scalar_tensor(1, kInt64)}, {zeros({2}), Tensor()}};
  EXPECT_EMBER_ERROR(default_collate(std::move(samples)), "default_collate", "example 1 has no target");
  std::vector<Example> reversed = {{zeros({2}), Tensor()}, {zeros({2}), scalar_tensor(1, kInt64)}};
  EXPECT_EMBER_ERROR(default_collate(std::move(reversed)), "example 1 has a target");
}

}  // namespace
}  // namespace ember::data
