// Data sets, as torch.utils.data's:
//
//   auto train = std::make_shared<TensorDataset>(images, labels);   // images [N, ...], labels [N]
//   Example e = train->get(0);                                     // views of row 0, no copy
//   auto augmented = std::make_shared<MapDataset>(train, Compose({ToTensor(), RandomHorizontalFlip()}));
//
// A map-style Dataset knows its size and returns sample i on request; a
// DataLoader may call get() from several worker threads at once, so get()
// must be safe to call concurrently (it is const; keep it free of hidden
// mutable state). An IterableDataset is a stream read in order.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "ember/data/example.h"
#include "ember/data/transforms.h"

namespace ember::data {

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual size_t size() const = 0;
  // Sample `index` (in [0, size())). Called concurrently from worker threads.
  virtual Example get(size_t index) const = 0;
  // Called by the DataLoader before each epoch, while no get() runs, with a
  // seed drawn for that epoch. Random transforms derive each sample's
  // randomness from (epoch seed, index); wrappers pass the call on.
  virtual void set_epoch_seed(uint64_t /*epoch_seed*/) {}
};

class IterableDataset {
 public:
  virtual ~IterableDataset() = default;
  // The next sample, or nothing at the end of the stream. The DataLoader
  // calls it from one thread at a time, in order.
  virtual std::optional<Example> next() = 0;
  // Rewinds the stream; the DataLoader calls it at the start of each epoch.
  virtual void reset() = 0;
};

// Sample i is (data[i], targets[i]): views along dim 0, no copies.
class TensorDataset : public Dataset {
 public:
  // `targets` may be undefined (then samples have no target); when defined,
  // its size(0) must equal data's.
  explicit TensorDataset(Tensor data, Tensor targets = Tensor());
  size_t size() const override;
  Example get(size_t index) const override;
  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_;
  Tensor targets_;
};

// Applies `transform` to the data of each sample of `dataset` (targets pass
// through). The transform's Generator is seeded from (epoch seed, index), so
// a random transform gives the same result for a sample whichever worker
// thread runs it, and a resumed run repeats it exactly.
class MapDataset : public Dataset {
 public:
  MapDataset(std::shared_ptr<Dataset> dataset, Transform transform);
  size_t size() const override { return dataset_->size(); }
  Example get(size_t index) const override;
  void set_epoch_seed(uint64_t epoch_seed) override;

 private:
  std::shared_ptr<Dataset> dataset_;
  Transform transform_;
  std::atomic<uint64_t> epoch_seed_{0};
};

}  // namespace ember::data
