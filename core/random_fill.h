// CPU random fills on raw buffers: the kernels behind rand, randn, randint.
//
// Each fill writes element i from Philox block (offset + i / P) of the stream
// `seed` (Note [Philox element mapping] in core/philox.h), so its output
// depends on (seed, offset, i) only: not on the thread count, not on the
// chunking, and not on the device. A caller reserves the blocks first:
//   Generator& g = default_generator();
//   const uint64_t seed = g.seed();
//   const uint64_t offset = g.reserve(cpu::blocks_needed_uniform<float>(n));
//   cpu::fill_uniform(data, n, seed, offset, 0.0, 1.0);
#pragma once

#include <cstdint>

#include "core/philox.h"

namespace ember::cpu {

// Philox blocks a fill of n elements of type T uses (the Generator advances by this).
template <class T>
constexpr uint64_t blocks_needed_uniform(int64_t n) {
  return static_cast<uint64_t>((n + kElementsPerBlock<T> - 1) / kElementsPerBlock<T>);
}
template <class T>
constexpr uint64_t blocks_needed_normal(int64_t n) {
  return blocks_needed_uniform<T>(n);
}
constexpr uint64_t blocks_needed_randint(int64_t n) { return blocks_needed_uniform<int64_t>(n); }

// out: (n,) uniform in [low, high), low <= high; high - low must be finite in the output type.
void fill_uniform(float* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high);
void fill_uniform(double* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high);

// out: (n,) normal with the given mean and standard deviation (std >= 0), by Box-Muller.
void fill_normal(float* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std);
void fill_normal(double* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std);

// out: (n,) integers in [low, high), low < high (high exclusive, as torch.randint).
// Each element is low + w % (high - low) for a 64-bit word w: bias at most (high - low) / 2^64.
void fill_randint(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high);

}  // namespace ember::cpu
