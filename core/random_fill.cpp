// CPU random fills (see core/random_fill.h). Work is split over Philox blocks
// in fixed chunks; each block is computed once and its elements written to
// out[j*P, j*P + P), so chunk boundaries never change a value.
#include "core/random_fill.h"

#include <algorithm>
#include <cmath>

#include "ember/error.h"
#include "ember/parallel.h"

namespace ember::cpu {
namespace {

// Elements per parallel chunk (a multiple of every P): ~0.1 ms of work for normals.
constexpr int64_t kGrainElements = 1 << 14;

// Calls make_block(philox block, T* vals) to write the P elements of each
// block of the fill to out: (n,).
template <class T, class MakeBlock>
void fill_blocks(T* out, int64_t n, uint64_t seed, uint64_t offset, const char* op, MakeBlock make_block) {
  EMBER_CHECK(n >= 0, op, ": expected a non-negative element count, got ", n);
  constexpr int64_t per = kElementsPerBlock<T>;
  const int64_t full_blocks = n / per;
  parallel_for(0, full_blocks, kGrainElements / per, [&](int64_t jb, int64_t je) {
    for (int64_t j = jb; j < je; ++j) make_block(philox_block(seed, offset + static_cast<uint64_t>(j)), out + j * per);
  });
  if (const int64_t rest = n - full_blocks * per; rest > 0) {  // a partial last block
    T vals[per];
    make_block(philox_block(seed, offset + static_cast<uint64_t>(full_blocks)), vals);
    std::copy(vals, vals + rest, out + full_blocks * per);
  }
}

template <class T>
void fill_uniform_impl(T* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high) {
  const UniformScale<T> scale = uniform_scale(static_cast<T>(low), static_cast<T>(high));
  EMBER_CHECK(low <= high && std::isfinite(scale.span),
              "uniform: expected low <= high with a finite high - low, got low=", low, " high=", high);
  fill_blocks(out, n, seed, offset, "uniform", [scale](const Philox4x32& b, T* vals) {
    T u[kElementsPerBlock<T>];
    uniforms_from_block(b, u);
    for (int64_t k = 0; k < kElementsPerBlock<T>; ++k) vals[k] = scale_uniform(u[k], scale);
  });
}

template <class T>
void fill_normal_impl(T* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std) {
  EMBER_CHECK(std >= 0.0 && std::isfinite(std) && std::isfinite(mean),
              "normal: expected a finite mean and a finite std >= 0, got mean=", mean, " std=", std);
  const T m = static_cast<T>(mean), s = static_cast<T>(std);
  fill_blocks(out, n, seed, offset, "normal", [m, s](const Philox4x32& b, T* vals) {
    T z[kElementsPerBlock<T>];
    normals_from_block(b, z);
    for (int64_t k = 0; k < kElementsPerBlock<T>; ++k) vals[k] = scale_normal(z[k], m, s);
  });
}

}  // namespace

void fill_uniform(float* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high) {
  fill_uniform_impl(out, n, seed, offset, low, high);
}
void fill_uniform(double* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high) {
  fill_uniform_impl(out, n, seed, offset, low, high);
}
void fill_normal(float* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std) {
  fill_normal_impl(out, n, seed, offset, mean, std);
}
void fill_normal(double* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std) {
  fill_normal_impl(out, n, seed, offset, mean, std);
}

void fill_randint(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high) {
  EMBER_CHECK(low < high, "randint: expected low < high, got low=", low, " high=", high);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  fill_blocks(out, n, seed, offset, "randint",
              [low, range](const Philox4x32& b, int64_t* vals) { randints_from_block(b, low, range, vals); });
}

}  // namespace ember::cpu
