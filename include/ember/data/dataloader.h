// ember::data::DataLoader: batches from a data set, as torch.utils.data.DataLoader.
//
//   auto train = std::make_shared<TensorDataset>(images, labels);
//   DataLoader loader(train, {.batch_size = 64, .shuffle = true, .num_workers = 2, .seed = 42});
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (Example& batch : loader) { ... batch.data, batch.target ... }
//
// Note [DataLoader workers and order]
// With num_workers = 0 each batch is loaded (get() for each index, then
// collate) in the calling thread when the loop asks for it. With
// num_workers = N > 0, N threads load batches ahead of the loop: batch k is
// handed to the workers only while k < (batches taken) + N * prefetch_factor,
// each result is filed under its batch number, and the loop takes batch k
// only when batch k is ready. So the batches and their order are the same
// for any N and any worker timing; random transforms depend only on (epoch
// seed, sample index) (see MapDataset).
//
// Note [DataLoader errors and shutdown]
// An exception thrown by get() or collate in a worker is kept with its batch
// and rethrown when the loop reaches that batch, as an ember::Error that
// names the loader, the batch and the sample index, followed by the original
// message. When the loop ends early (break, exception) the iterator's
// destructor drops the batches not yet started and waits only for the ones
// being loaded; destroying the loader joins its threads. Nothing waits for
// work that is never going to be done, so shutdown does not hang as long as
// each get() returns.
//
// Note [DataLoader state]
// state_dict() holds what decides the batches from a point onward: the
// loader's Generator and the sampler's state as they were at the start of
// the current epoch, the epoch number and the count of batches handed out in
// this epoch. A loader (same data set and options) given load_state_dict()
// continues with the next batch of that epoch, bit for bit; the epochs after
// it follow as in the original run. A loop broken off and restarted in the
// same process starts a new epoch instead, as PyTorch's does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "ember/data/dataset.h"
#include "ember/data/example.h"
#include "ember/data/sampler.h"
#include "ember/serialize.h"

namespace ember::data {

struct DataLoaderOptions {
  size_t batch_size = 1;
  // A RandomSampler (seeded from the loader's generator) instead of a
  // SequentialSampler. Ignored when `sampler` is given.
  bool shuffle = false;
  // Drops the last, smaller batch of an epoch.
  bool drop_last = false;
  // 0: batches are loaded in the calling thread; N > 0: by N worker threads.
  size_t num_workers = 0;
  // Batches in flight per worker (num_workers > 0).
  size_t prefetch_factor = 2;
  // Keeps the worker threads between epochs instead of starting them anew.
  bool persistent_workers = false;
  // Copies each batch into page-locked host memory in the worker, so that a
  // following .cuda() transfers without staging. Only with a CUDA build and a
  // usable device; otherwise it does nothing.
  bool pin_memory = false;
  // Turns samples into a batch; empty means default_collate.
  Collate collate{};
  // Seeds the loader's Generator (epoch seeds, shuffling). Without it the
  // seed is drawn from ember::default_generator(), so manual_seed() makes
  // the loader reproducible.
  std::optional<uint64_t> seed{};
  // The visiting order (map-style data sets); takes precedence over shuffle.
  std::shared_ptr<Sampler> sampler{};
  // Names the loader in error messages ("train", "test", ...).
  std::string name = "DataLoader";
};

struct DataLoaderStats {
  // Time the loop spent waiting for batches, summed over all epochs
  // (with num_workers = 0 this is all the loading time).
  double wait_seconds = 0;
  size_t batches = 0;  // batches handed out, over all epochs
};

class DataLoader {
  struct Impl;

 public:
  class Iterator;
  using Sentinel = std::default_sentinel_t;

  DataLoader(std::shared_ptr<Dataset> dataset, DataLoaderOptions options = {});
  // An IterableDataset is read in order by one thread at a time; with
  // workers, collate (and pinning) still run in parallel. It has no size(),
  // shuffle or sampler.
  DataLoader(std::shared_ptr<IterableDataset> dataset, DataLoaderOptions options = {});
  ~DataLoader();
  DataLoader(DataLoader&&) noexcept;
  DataLoader& operator=(DataLoader&&) noexcept;
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  // Starts an epoch (or resumes one, after load_state_dict). One iteration
  // at a time: a begin() ends the previous iteration. As with a container,
  // the loader (or the loader it was moved into) must outlive its iterators.
  Iterator begin();
  Sentinel end() const { return {}; }

  // Batches per epoch (map-style data sets only).
  size_t size() const;
  // Batches of the current epoch handed out before a load_state_dict(): the
  // next iteration resumes after them (0 when it starts a fresh epoch).
  size_t resumed_batches() const;
  // The current epoch (counting from 0); it advances when an epoch ends or
  // is abandoned for a new begin().
  uint64_t epoch() const;
  const DataLoaderOptions& options() const;

  DataLoaderStats stats() const;
  double wait_seconds() const { return stats().wait_seconds; }
  void reset_stats();

  // See Note [DataLoader state].
  TensorDict state_dict() const;
  void load_state_dict(const TensorDict& state);

  class Iterator {
   public:
    using value_type = Example;
    using difference_type = std::ptrdiff_t;

    Iterator(Iterator&& other) noexcept;
    Iterator& operator=(Iterator&& other) noexcept;
    // Ends the iteration: pending batches are dropped (see Note [DataLoader errors and shutdown]).
    ~Iterator();

    Example& operator*() const;
    Example* operator->() const { return &**this; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& it, Sentinel) { return it.done_; }

   private:
    friend class DataLoader;
    explicit Iterator(Impl* loader);
    bool live() const;  // still the loader's current iteration
    void fetch();
    void release();

    Impl* loader_ = nullptr;
    uint64_t run_ = 0;
    std::unique_ptr<Example> batch_;
    bool done_ = true;
  };

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::data
