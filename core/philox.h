// Philox4x32-10: the counter-based random number generator behind
// ember::Generator, written once for CPU and CUDA (every function here is
// EMBER_HOST_DEVICE, header-only, no CUDA types).
//
// Note [Philox]
// A counter-based generator has no state to advance: it is a pure function
//   block = philox4x32_10(counter, key)
// that maps a 128-bit counter and a 64-bit key to 128 random bits (four
// uint32 "lanes"). Drawing number j of a stream is just evaluating block j, so
// any thread (CPU worker or CUDA thread) can compute any part of the stream
// without seeing the rest. That is what makes a seeded fill the same on every
// device and every thread count.
//
// One round (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC11)
// multiplies two lanes by fixed odd constants, keeps both halves of each
// 64-bit product, and mixes them with the other lanes and the key:
//   (hi0, lo0) = M0 * c0          (hi1, lo1) = M1 * c2
//   c = { hi1 ^ c1 ^ k0,  lo1,  hi0 ^ c3 ^ k1,  lo0 }
// with M0 = 0xD2511F53, M1 = 0xCD9E8D57. Between rounds the key is bumped by
// the Weyl constants (k0 += 0x9E3779B9, k1 += 0xBB67AE85). Ten rounds pass
// the BigCrush statistical tests with a safety margin.
//
// Note [Philox element mapping]
// A Generator is (seed, offset); the offset counts 128-bit blocks already used.
//   key        = { low32(seed), high32(seed) }
//   counter(j) = { low32(b), high32(b), 0, 0 }  with b = offset + j
// Lanes 2 and 3 of the counter (the "subsequence") are always 0 for now; they
// are kept free for independent streams (per rank, per purpose) later.
//
// A fill of n elements of type T uses block j for elements
// [j*P, j*P + P), P = kElementsPerBlock<T> = 16 / sizeof(T): every element
// consumes sizeof(T) bytes of the block's 16. So element i is a function of
// (seed, offset, i) only, never of how the work is chunked, and a fill
// reserves ceil(n / P) blocks. Per distribution:
//   uniform float   element 4j+k  <- lane k, top 24 bits         -> [0, 1)
//   uniform double  element 2j+k  <- lanes 2k (low), 2k+1 (high),
//                                    top 53 of those 64 bits      -> [0, 1)
//   normal float    elements 4j, 4j+1 <- Box-Muller of lanes 0, 1;
//                   elements 4j+2, 4j+3 <- Box-Muller of lanes 2, 3
//                   (first of each pair is r*cos, second r*sin)
//   normal double   elements 2j, 2j+1 <- Box-Muller of the two 53-bit
//                   uniforms made from lanes (0, 1) and (2, 3)
//   randint         element 2j+k  <- 64-bit word lanes 2k (low), 2k+1 (high),
//                                    low + word % (high - low)
// Lanes left over in a fill's last block are discarded: the next fill starts
// at a fresh block. Hence a fill of n then a fill of m equals the tail of one
// fill of n + m exactly when n is a multiple of P.
//
// Bitwise agreement: the integer path, the [0, 1) conversions, the uniform
// scaling (one fma) and randint are exact, so they give the same bits on CPU
// and CUDA. Normals go through log/sin/cos/sqrt, whose last bit may differ
// between libm and CUDA's math library; they agree to a few ulps.
#pragma once

#include <math.h>  // C names (logf, fmaf, ...) resolve both in host and CUDA device code
#include <stdint.h>

#include "core/host_device.h"

namespace ember {

struct Philox4x32 {
  uint32_t c[4];
};

inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;

// Elements of type T made from one 128-bit block (see Note [Philox element mapping]).
template <class T>
inline constexpr int64_t kElementsPerBlock = 16 / sizeof(T);

// The Philox4x32 bijection with 10 rounds: 128 counter bits -> 128 random bits.
EMBER_HOST_DEVICE inline Philox4x32 philox4x32_10(const uint32_t (&counter)[4], const uint32_t (&key)[2]) {
  uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  uint32_t k0 = key[0], k1 = key[1];
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c2;
    const uint32_t next0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t next2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = next0;
    c2 = next2;
    k0 += kPhiloxW0;  // the key schedule (the bump after the last round is unused)
    k1 += kPhiloxW1;
  }
  return Philox4x32{{c0, c1, c2, c3}};
}

// Block number `block` of the stream keyed by `seed` (block = offset + j).
EMBER_HOST_DEVICE inline Philox4x32 philox_block(uint64_t seed, uint64_t block) {
  const uint32_t counter[4] = {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0u, 0u};
  const uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  return philox4x32_10(counter, key);
}

// uint32 -> float in [0, 1): the top 24 bits scaled by 2^-24 (exact; largest 1 - 2^-24).
EMBER_HOST_DEVICE inline float uniform_float(uint32_t x) { return static_cast<float>(x >> 8) * 0x1p-24f; }

// Two uint32 -> double in [0, 1): the top 53 of the 64 bits scaled by 2^-53 (exact).
EMBER_HOST_DEVICE inline double uniform_double(uint32_t lo, uint32_t hi) {
  const uint64_t bits = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  return static_cast<double>(bits) * 0x1p-53;
}

// Box-Muller: two uniforms in [0, 1) -> two independent standard normals,
//   r = sqrt(-2 ln(1 - u1)), z0 = r cos(2 pi u2), z1 = r sin(2 pi u2).
// 1 - u1 is exact and lies in (0, 1], so the log never sees 0 (largest |z| is
// about 5.8 for float, 8.6 for double).
EMBER_HOST_DEVICE inline void box_muller(float u1, float u2, float& z0, float& z1) {
  const float r = sqrtf(-2.0f * logf(1.0f - u1));
  const float theta = 6.2831853071795865f * u2;
  z0 = r * cosf(theta);
  z1 = r * sinf(theta);
}
EMBER_HOST_DEVICE inline void box_muller(double u1, double u2, double& z0, double& z1) {
  // Qualified: inside namespace ember, ember::log (the tensor op) would hide them.
  const double r = ::sqrt(-2.0 * ::log(1.0 - u1));
  const double theta = 6.2831853071795865 * u2;
  z0 = r * ::cos(theta);
  z1 = r * ::sin(theta);
}

// The kElementsPerBlock<T> elements of one block, per Note [Philox element mapping],
// written to out[0..P).
EMBER_HOST_DEVICE inline void uniforms_from_block(const Philox4x32& b, float* out) {
  for (int k = 0; k < 4; ++k) out[k] = uniform_float(b.c[k]);
}
EMBER_HOST_DEVICE inline void uniforms_from_block(const Philox4x32& b, double* out) {
  out[0] = uniform_double(b.c[0], b.c[1]);
  out[1] = uniform_double(b.c[2], b.c[3]);
}
EMBER_HOST_DEVICE inline void normals_from_block(const Philox4x32& b, float* out) {
  box_muller(uniform_float(b.c[0]), uniform_float(b.c[1]), out[0], out[1]);
  box_muller(uniform_float(b.c[2]), uniform_float(b.c[3]), out[2], out[3]);
}
EMBER_HOST_DEVICE inline void normals_from_block(const Philox4x32& b, double* out) {
  box_muller(uniform_double(b.c[0], b.c[1]), uniform_double(b.c[2], b.c[3]), out[0], out[1]);
}
// Integers in [low, low + range), range >= 1. A 64-bit word modulo the range:
// the bias is at most range / 2^64 (below 2^-32 for ranges under 2^32).
EMBER_HOST_DEVICE inline void randints_from_block(const Philox4x32& b, int64_t low, uint64_t range,
                                                  int64_t* out) {
  const uint64_t w0 = static_cast<uint64_t>(b.c[1]) << 32 | b.c[0];
  const uint64_t w1 = static_cast<uint64_t>(b.c[3]) << 32 | b.c[2];
  out[0] = static_cast<int64_t>(static_cast<uint64_t>(low) + w0 % range);
  out[1] = static_cast<int64_t>(static_cast<uint64_t>(low) + w1 % range);
}

// u in [0, 1) -> [low, high): low + u * (high - low) in one fma (a single
// rounding on every device), clamped to the largest value below high, since
// rounding can land on high itself. low == high gives low.
template <class T>
struct UniformScale {
  T low, span, largest;
};
EMBER_HOST_DEVICE inline UniformScale<float> uniform_scale(float low, float high) {
  return {low, high - low, nextafterf(high, low)};
}
EMBER_HOST_DEVICE inline UniformScale<double> uniform_scale(double low, double high) {
  return {low, high - low, nextafter(high, low)};
}
EMBER_HOST_DEVICE inline float scale_uniform(float u, const UniformScale<float>& s) {
  const float v = fmaf(u, s.span, s.low);
  return v < s.largest ? v : s.largest;
}
EMBER_HOST_DEVICE inline double scale_uniform(double u, const UniformScale<double>& s) {
  const double v = fma(u, s.span, s.low);
  return v < s.largest ? v : s.largest;
}

// z ~ N(0, 1) -> mean + z * std, in one fma.
EMBER_HOST_DEVICE inline float scale_normal(float z, float mean, float std) { return fmaf(z, std, mean); }
EMBER_HOST_DEVICE inline double scale_normal(double z, double mean, double std) { return fma(z, std, mean); }

}  // namespace ember
