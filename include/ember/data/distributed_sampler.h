// DistributedSampler: each rank's share of a data set, as
// torch.utils.data.DistributedSampler.
//
//   auto sampler = std::make_shared<ember::data::DistributedSampler>(dataset.size(), world, rank);
//   sampler->set_epoch(epoch);   // optional: next_epoch() also moves on by itself
//
// Every rank shuffles all indices with the same permutation (seeded by seed
// + epoch), pads the list by repeating its start until it divides evenly
// (or, with drop_last, cuts the tail), and takes every num_replicas-th index
// from its rank on. All ranks then see the same number of samples per epoch.
#pragma once

#include <cstdint>

#include "ember/data/sampler.h"

namespace ember::data {

class DistributedSampler : public Sampler {
 public:
  // num_replicas and rank -1: the default process group's size and rank.
  explicit DistributedSampler(size_t dataset_size, int num_replicas = -1, int rank = -1, bool shuffle = true,
                              uint64_t seed = 0, bool drop_last = false);
  // Samples per epoch on this rank.
  size_t size() const override { return num_samples_; }
  // The indices of the current epoch; the epoch then advances by one.
  std::vector<size_t> next_epoch() override;
  void set_epoch(uint64_t epoch) { epoch_ = epoch; }
  uint64_t epoch() const { return epoch_; }
  // {"epoch"}: the epoch the next call draws.
  TensorDict state_dict() const override;
  void load_state_dict(const TensorDict& state) override;

 private:
  size_t dataset_size_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  size_t num_samples_;
  uint64_t epoch_ = 0;
};

}  // namespace ember::data
