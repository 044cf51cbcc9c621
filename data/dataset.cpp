// TensorDataset and MapDataset (<ember/data/dataset.h>).
#include "ember/data/dataset.h"

#include <utility>

#include "ember/error.h"
#include "data/random_bits.h"

namespace ember::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  EMBER_CHECK(data_.defined() && data_.dim() >= 1, "TensorDataset: data must be a tensor with at least one dim, got ",
              data_.defined() ? data_.sizes() : IntArrayRef{});
  if (targets_.defined()) {
    EMBER_CHECK(targets_.dim() >= 1 && targets_.size(0) == data_.size(0), "TensorDataset: data has ",
                data_.size(0), " rows (shape ", data_.sizes(), ") but targets have shape ", targets_.sizes());
  }
}

size_t TensorDataset::size() const { return static_cast<size_t>(data_.size(0)); }

Example TensorDataset::get(size_t index) const {
  EMBER_CHECK(index < size(), "TensorDataset: index ", index, " is out of range for ", size(), " samples");
  const auto i = static_cast<int64_t>(index);
  return Example{data_.select(0, i), targets_.defined() ? targets_.select(0, i) : Tensor()};
}

MapDataset::MapDataset(std::shared_ptr<Dataset> dataset, Transform transform)
    : dataset_(std::move(dataset)), transform_(std::move(transform)) {
  EMBER_CHECK(dataset_ != nullptr, "MapDataset: the dataset is null");
  EMBER_CHECK(static_cast<bool>(transform_), "MapDataset: the transform is empty");
}

Example MapDataset::get(size_t index) const {
  Example example = dataset_->get(index);
  Generator generator(detail::sample_seed(epoch_seed_.load(std::memory_order_relaxed), index));
  example.data = transform_(example.data, generator);
  return example;
}

void MapDataset::set_epoch_seed(uint64_t epoch_seed) {
  epoch_seed_.store(epoch_seed, std::memory_order_relaxed);
  // A different seed below, so nested MapDatasets draw independent numbers for a sample.
  dataset_->set_epoch_seed(epoch_seed + 0x9E3779B97F4A7C15ULL);
}

}  // namespace ember::data
