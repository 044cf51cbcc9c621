// The samplers of <ember/data/sampler.h>.
#include "ember/data/sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "ember/error.h"
#include "data/random_bits.h"
#include "data/state_dict_util.h"

namespace ember::data {

std::vector<size_t> SequentialSampler::next_epoch() {
  std::vector<size_t> order(size_);
  std::iota(order.begin(), order.end(), size_t{0});
  return order;
}

SubsetRandomSampler::SubsetRandomSampler(std::vector<size_t> indices, uint64_t seed)
    : indices_(std::move(indices)), generator_(seed) {}

// Fisher-Yates: for i = n-1 .. 1, swap element i with element w % (i + 1),
// w the next 64-bit word of the stream (two words per Philox block; the
// modulo bias is below 2^-32 for any size under 2^32).
std::vector<size_t> SubsetRandomSampler::next_epoch() {
  std::vector<size_t> order = indices_;
  const size_t n = order.size();
  if (n < 2) return order;
  const uint64_t words = n - 1;
  const uint64_t seed = generator_.seed();
  const uint64_t first_block = generator_.reserve((words + 1) / 2);
  for (uint64_t k = 0; k < words; ++k) {
    const Philox4x32 block = philox_block(seed, first_block + k / 2);
    const uint64_t word = k % 2 == 0 ? detail::low_word(block) : detail::high_word(block);
    const size_t i = n - 1 - k;
    std::swap(order[i], order[word % (i + 1)]);
  }
  return order;
}

TensorDict SubsetRandomSampler::state_dict() const {
  return {{"seed", detail::u64_tensor(generator_.seed())}, {"offset", detail::u64_tensor(generator_.offset())}};
}

void SubsetRandomSampler::load_state_dict(const TensorDict& state) {
  const uint64_t seed = detail::read_u64(state, "seed", "RandomSampler");
  const uint64_t offset = detail::read_u64(state, "offset", "RandomSampler");
  generator_.manual_seed(seed);
  generator_.set_offset(offset);
}

namespace {
std::vector<size_t> iota_indices(size_t size) {
  std::vector<size_t> indices(size);
  std::iota(indices.begin(), indices.end(), size_t{0});
  return indices;
}
}  // namespace

RandomSampler::RandomSampler(size_t size, uint64_t seed) : SubsetRandomSampler(iota_indices(size), seed) {}

BatchSampler::BatchSampler(std::shared_ptr<Sampler> sampler, size_t batch_size, bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  EMBER_CHECK(sampler_ != nullptr, "BatchSampler: the sampler is null");
  EMBER_CHECK(batch_size_ > 0, "BatchSampler: batch_size must be positive, got 0");
}

size_t BatchSampler::size() const {
  const size_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<std::vector<size_t>> BatchSampler::next_epoch() {
  const std::vector<size_t> order = sampler_->next_epoch();
  std::vector<std::vector<size_t>> batches;
  batches.reserve(size());
  for (size_t begin = 0; begin < order.size(); begin += batch_size_) {
    const size_t end = std::min(order.size(), begin + batch_size_);
    if (drop_last_ && end - begin < batch_size_) break;
    batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(begin),
                         order.begin() + static_cast<std::ptrdiff_t>(end));
  }
  return batches;
}

}  // namespace ember::data
