// Samplers decide the order in which a DataLoader visits a map-style data
// set, one epoch at a time, as torch.utils.data's samplers:
//
//   RandomSampler sampler(/*size=*/60000, /*seed=*/42);
//   std::vector<size_t> order = sampler.next_epoch();   // a fresh permutation per call
//   TensorDict saved = sampler.state_dict();            // ... later: load_state_dict(saved)
//
// A random sampler owns a Generator (Philox, see <ember/generator.h>). Its
// state is the generator's (seed, offset) before the next epoch is drawn, so
// a sampler restored from state_dict() draws exactly the orders the saved one
// would have drawn.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ember/generator.h"
#include "ember/serialize.h"

namespace ember::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Indices per epoch.
  virtual size_t size() const = 0;
  // The indices of the next epoch, in visiting order.
  virtual std::vector<size_t> next_epoch() = 0;
  // What decides the next epochs' orders (empty for deterministic samplers),
  // as int64 scalar tensors.
  virtual TensorDict state_dict() const { return {}; }
  virtual void load_state_dict(const TensorDict& /*state*/) {}
};

// 0, 1, ..., size - 1.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  size_t size() const override { return size_; }
  std::vector<size_t> next_epoch() override;

 private:
  size_t size_;
};

// A uniformly random permutation of `indices`, drawn anew for every epoch
// (a Fisher-Yates shuffle driven by the generator).
class SubsetRandomSampler : public Sampler {
 public:
  SubsetRandomSampler(std::vector<size_t> indices, uint64_t seed);
  size_t size() const override { return indices_.size(); }
  std::vector<size_t> next_epoch() override;
  // {"seed", "offset"}: the generator's position before the next epoch.
  TensorDict state_dict() const override;
  void load_state_dict(const TensorDict& state) override;
  Generator& generator() { return generator_; }

 private:
  std::vector<size_t> indices_;
  Generator generator_;
};

// A random permutation of 0, ..., size - 1 per epoch.
class RandomSampler : public SubsetRandomSampler {
 public:
  RandomSampler(size_t size, uint64_t seed);
};

// Groups a sampler's indices into batches of batch_size, in order; the last
// batch is smaller unless drop_last drops it.
class BatchSampler {
 public:
  BatchSampler(std::shared_ptr<Sampler> sampler, size_t batch_size, bool drop_last);
  // Batches per epoch.
  size_t size() const;
  std::vector<std::vector<size_t>> next_epoch();
  Sampler& sampler() const { return *sampler_; }

 private:
  std::shared_ptr<Sampler> sampler_;
  size_t batch_size_;
  bool drop_last_;
};

}  // namespace ember::data
