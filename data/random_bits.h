// Random bits for the data pipeline, straight from Philox (core/philox.h):
// cheaper than a tensor op for the handful of numbers a sampler or a
// transform needs, and on the same (seed, offset) streams as ember::Generator.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/philox.h"
#include "ember/generator.h"

namespace ember::data::detail {

inline uint64_t low_word(const Philox4x32& block) { return static_cast<uint64_t>(block.c[1]) << 32 | block.c[0]; }
inline uint64_t high_word(const Philox4x32& block) { return static_cast<uint64_t>(block.c[3]) << 32 | block.c[2]; }

// The next block of `generator`'s stream (reserving it).
inline Philox4x32 next_block(Generator& generator) {
  const uint64_t block = generator.reserve(1);
  return philox_block(generator.seed(), block);
}

// 64 random bits from the next block of `generator`.
inline uint64_t next_u64(Generator& generator) { return low_word(next_block(generator)); }

// The seed of sample `index`'s generator in the epoch seeded by `epoch_seed`.
inline uint64_t sample_seed(uint64_t epoch_seed, size_t index) {
  return low_word(philox_block(epoch_seed, static_cast<uint64_t>(index)));
}

}  // namespace ember::data::detail
