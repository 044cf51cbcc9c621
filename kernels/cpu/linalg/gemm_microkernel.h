// The GEMM micro-kernel and the per-instruction-set choices around it:
// vector wrappers and tile shape (gemm.cpp derives the cache blocks around
// it). Included by gemm.cpp only.
//
// The micro-kernel multiplies one packed A panel (kRows rows) by one packed B
// panel (kCols columns) over kc steps, keeping the whole kRows x kCols tile of
// C in vector registers: at each step p it loads kVectors vectors of B's row p,
// broadcasts each of the kRows values of A's column p, and issues
// kRows * kVectors independent FMAs. An FMA takes ~4 cycles and two can start
// per cycle, so at least 8 accumulators must be in flight; the tiles below
// keep 12 (AVX2) or 24 (AVX-512).
#pragma once

#include <cstdint>
#include <type_traits>

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace ember::cpu::gemm_detail {

// Each Simd struct wraps one vector type: kLanes elements of T.
#if defined(__AVX512F__)

struct SimdF32 {
  using T = float;
  using V = __m512;
  static constexpr int kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load(const T* p) { return _mm512_loadu_ps(p); }
  static V broadcast(const T* p) { return _mm512_set1_ps(*p); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }  // a * b + c, one rounding
  static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
};

struct SimdF64 {
  using T = double;
  using V = __m512d;
  static constexpr int kLanes = 8;
  static V zero() { return _mm512_setzero_pd(); }
  static V load(const T* p) { return _mm512_loadu_pd(p); }
  static V broadcast(const T* p) { return _mm512_set1_pd(*p); }
  static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
};

// 32 zmm registers: 12 x 2 accumulators + 2 B vectors + 1 broadcast.
inline constexpr int kTileRows = 12;
inline constexpr int kTileVectors = 2;

#elif defined(__AVX2__) && defined(__FMA__)

struct SimdF32 {
  using T = float;
  using V = __m256;
  static constexpr int kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load(const T* p) { return _mm256_loadu_ps(p); }
  static V broadcast(const T* p) { return _mm256_broadcast_ss(p); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
};

struct SimdF64 {
  using T = double;
  using V = __m256d;
  static constexpr int kLanes = 4;
  static V zero() { return _mm256_setzero_pd(); }
  static V load(const T* p) { return _mm256_loadu_pd(p); }
  static V broadcast(const T* p) { return _mm256_broadcast_sd(p); }
  static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
};

// 16 ymm registers: 6 x 2 accumulators + 2 B vectors + 1 broadcast.
inline constexpr int kTileRows = 6;
inline constexpr int kTileVectors = 2;

#else  // portable: "vectors" of one element; the compiler may vectorize what it can.
// fma here may or may not be fused, but every tile runs this same code, so
// results still do not depend on the thread count.

template <class Element>
struct SimdScalar {
  using T = Element;
  using V = Element;
  static constexpr int kLanes = 1;
  static V zero() { return 0; }
  static V load(const T* p) { return *p; }
  static V broadcast(const T* p) { return *p; }
  static V mul(V a, V b) { return a * b; }
  static V fma(V a, V b, V c) { return a * b + c; }
  static void store(T* p, V v) { *p = v; }
};
using SimdF32 = SimdScalar<float>;
using SimdF64 = SimdScalar<double>;

inline constexpr int kTileRows = 4;
inline constexpr int kTileVectors = 4;

#endif

// The register tile of the GEMM for element type T (names in gemm.cpp's note).
template <class T>
struct Tile {
  using Simd = std::conditional_t<std::is_same_v<T, float>, SimdF32, SimdF64>;
  static constexpr int kRows = kTileRows;                    // MR
  static constexpr int kVectors = kTileVectors;              // vectors per B row
  static constexpr int kCols = kTileVectors * Simd::kLanes;  // NR
};

// C tile (kRows, kCols) with unit column stride:
//   C = alpha * A_panel * B_panel + beta * C   (beta == 0: C is not read)
// a: (kc, kPanelRows) packed, row p at a + p * kPanelRows, of which the first
// kRows are used (a ragged last panel of A runs with kRows < kPanelRows);
// b: (kc, kCols) packed, row p at b + p * kCols.
template <class Simd, int kRows, int kVectors, int kPanelRows = kRows>
inline void microkernel(int64_t kc, const typename Simd::T* a, const typename Simd::T* b,
                        typename Simd::T alpha, typename Simd::T beta, typename Simd::T* c, int64_t c_rs) {
  using V = typename Simd::V;
  constexpr int kLanes = Simd::kLanes;
  constexpr int kCols = kVectors * kLanes;
  // C is touched only after the loop; start fetching its rows now so the
  // cache misses overlap with the FMAs.
#pragma GCC unroll 32
  for (int i = 0; i < kRows; ++i) {
    __builtin_prefetch(c + i * c_rs, 1);
    __builtin_prefetch(c + i * c_rs + kCols - 1, 1);
  }
  V acc[kRows][kVectors];
#pragma GCC unroll 32
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) acc[i][v] = Simd::zero();
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    V b_row[kVectors];
#pragma GCC unroll 8
    for (int v = 0; v < kVectors; ++v) b_row[v] = Simd::load(b + v * kLanes);
#pragma GCC unroll 32
    for (int i = 0; i < kRows; ++i) {
      const V a_value = Simd::broadcast(a + i);
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) acc[i][v] = Simd::fma(a_value, b_row[v], acc[i][v]);
    }
    a += kPanelRows;
    b += kCols;
  }
  const V alpha_v = Simd::broadcast(&alpha);
  if (beta == 0) {
#pragma GCC unroll 32
    for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) Simd::store(c + i * c_rs + v * kLanes, Simd::mul(alpha_v, acc[i][v]));
    }
  } else {
    const V beta_v = Simd::broadcast(&beta);
#pragma GCC unroll 32
    for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 8
      for (int v = 0; v < kVectors; ++v) {
        typename Simd::T* out = c + i * c_rs + v * kLanes;
        Simd::store(out, Simd::fma(beta_v, Simd::load(out), Simd::mul(alpha_v, acc[i][v])));
      }
    }
  }
}

}  // namespace ember::cpu::gemm_detail
