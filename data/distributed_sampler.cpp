#include "ember/data/distributed_sampler.h"

#include "data/state_dict_util.h"
#include "ember/distributed/process_group.h"
#include "ember/error.h"

namespace ember::data {

DistributedSampler::DistributedSampler(size_t dataset_size, int num_replicas, int rank, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : dataset_size_(dataset_size), num_replicas_(num_replicas), rank_(rank), shuffle_(shuffle), seed_(seed),
      drop_last_(drop_last) {
  if (num_replicas_ < 0) num_replicas_ = distributed::get_world_size();
  if (rank_ < 0) rank_ = distributed::get_rank();
  EMBER_CHECK(num_replicas_ >= 1 && rank_ < num_replicas_, "DistributedSampler: rank ", rank_,
              " is outside [0, ", num_replicas_, ")");
  const auto n = static_cast<size_t>(num_replicas_);
  num_samples_ = drop_last_ ? dataset_size_ / n : (dataset_size_ + n - 1) / n;
  EMBER_CHECK(num_samples_ > 0 || dataset_size_ == 0, "DistributedSampler: ", dataset_size_,
              " samples leave nothing for ", num_replicas_, " replicas with drop_last");
}

std::vector<size_t> DistributedSampler::next_epoch() {
  std::vector<size_t> all =
      shuffle_ ? RandomSampler(dataset_size_, seed_ + epoch_).next_epoch() : SequentialSampler(dataset_size_).next_epoch();
  ++epoch_;
  const size_t total = num_samples_ * static_cast<size_t>(num_replicas_);
  // Pad by repeating the start (again, if the data set is tiny), or cut the tail.
  for (size_t k = 0; all.size() < total; ++k) all.push_back(all[k]);
  all.resize(total);
  std::vector<size_t> mine;
  mine.reserve(num_samples_);
  for (size_t k = static_cast<size_t>(rank_); k < total; k += static_cast<size_t>(num_replicas_)) mine.push_back(all[k]);
  return mine;
}

TensorDict DistributedSampler::state_dict() const { return {{"epoch", detail::u64_tensor(epoch_)}}; }

void DistributedSampler::load_state_dict(const TensorDict& state) {
  epoch_ = detail::read_u64(state, "epoch", "DistributedSampler");
}

}  // namespace ember::data
