// ember::Generator (see <ember/generator.h>): (seed, offset) behind a mutex,
// so concurrent random ops reserve disjoint blocks of the stream.
#include "ember/generator.h"

#include <mutex>

namespace ember {

struct Generator::State {
  std::mutex mutex;
  uint64_t seed = 0;
  uint64_t offset = 0;
};

Generator::Generator(uint64_t seed) : state_(std::make_unique<State>()) { state_->seed = seed; }

Generator::Generator(const Generator& other) : state_(std::make_unique<State>()) {
  std::lock_guard<std::mutex> lock(other.state_->mutex);
  state_->seed = other.state_->seed;
  state_->offset = other.state_->offset;
}

Generator& Generator::operator=(const Generator& other) {
  if (this != &other) {
    std::scoped_lock lock(state_->mutex, other.state_->mutex);
    state_->seed = other.state_->seed;
    state_->offset = other.state_->offset;
  }
  return *this;
}

Generator::~Generator() = default;

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->seed = seed;
  state_->offset = 0;
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->seed;
}

uint64_t Generator::offset() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->offset;
}

void Generator::set_offset(uint64_t offset) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->offset = offset;
}

uint64_t Generator::reserve(uint64_t blocks) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  const uint64_t first = state_->offset;
  state_->offset += blocks;
  return first;
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace ember
