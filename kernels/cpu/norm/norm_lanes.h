// Lane helpers for the norm family's kernels (kernels/cpu/norm/norm.cpp,
// kernels/cpu/norm/softmax.cpp): one generic lambda body, `[&]<class W>(int64_t i)`,
// serves the SIMD lanes (W = VecF for float, VecD for double) and the scalar
// tail (W = float or double), so a row is written once.
//
// Storage T is float, double, Half or BFloat16; arithmetic runs in
// opmath_t<T> (float for the 16-bit types, which take the scalar path: one
// element at a time, converted on load and rounded once on store).
//
// Sums are deterministic: a row is cut into fixed blocks of kSumBlock
// elements, each block summed with two vector accumulators whose lanes are
// added in lane order, and the block sums added in block order (in double,
// so float sums over millions of elements stay accurate). Nothing depends on
// the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "kernels/cpu/vec/vec.h"

namespace ember::cpu::norm {

using vec::VecD;
using vec::VecF;

template <class T> struct SimdOf { using type = opmath_t<T>; static constexpr bool kVector = false; };
template <> struct SimdOf<float> { using type = VecF; static constexpr bool kVector = true; };
template <> struct SimdOf<double> { using type = VecD; static constexpr bool kVector = true; };

// The statistics dtype of an input dtype: float32 for f16/bf16, else the input's.
inline DType stat_dtype(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

template <class W, class T>
inline W load(const T* p) {
  if constexpr (std::is_arithmetic_v<W>) return static_cast<W>(static_cast<opmath_t<T>>(*p));
  else return W::load(p);
}

template <class T, class W>
inline void store(T* p, W v) {
  if constexpr (std::is_arithmetic_v<W>) *p = static_cast<T>(v);
  else v.store(p);
}

// Calls f.template operator()<W>(i) for every i in [0, n): a vector of W's
// lanes at a time, then one element at a time. kVector = false: scalar only
// (for math that has no SIMD form for T, e.g. exp of double).
template <class T, bool kVector = true, class F>
inline void for_lanes(int64_t n, F&& f) {
  using S = opmath_t<T>;
  int64_t i = 0;
  if constexpr (SimdOf<T>::kVector && kVector) {
    using V = typename SimdOf<T>::type;
    for (; i + V::kLanes <= n; i += V::kLanes) f.template operator()<V>(i);
  }
  for (; i < n; ++i) f.template operator()<S>(i);
}

inline constexpr int64_t kSumBlock = 4096;

// The sum over [begin, end) of the terms f.template operator()<W>(i) returns.
template <class T, bool kVector, class F>
inline opmath_t<T> sum_block(int64_t begin, int64_t end, F& f) {
  using S = opmath_t<T>;
  int64_t i = begin;
  S total = 0;
  if constexpr (SimdOf<T>::kVector && kVector) {
    using V = typename SimdOf<T>::type;
    constexpr int L = V::kLanes;
    V a0(S(0)), a1(S(0));
    for (; i + 2 * L <= end; i += 2 * L) {
      a0 = a0 + f.template operator()<V>(i);
      a1 = a1 + f.template operator()<V>(i + L);
    }
    if (i + L <= end) {
      a0 = a0 + f.template operator()<V>(i);
      i += L;
    }
    alignas(64) S lanes[L];
    (a0 + a1).store(lanes);
    for (int k = 0; k < L; ++k) total += lanes[k];
  }
  S tail = 0;
  for (; i < end; ++i) tail += f.template operator()<S>(i);
  return total + tail;
}

template <class T, bool kVector = true, class F>
inline opmath_t<T> sum_lanes(int64_t n, F&& f) {
  if (n <= kSumBlock) return sum_block<T, kVector>(0, n, f);
  double total = 0;
  for (int64_t b = 0; b < n; b += kSumBlock) total += sum_block<T, kVector>(b, std::min(n, b + kSumBlock), f);
  return static_cast<opmath_t<T>>(total);
}

// The maximum of x[0, n) (NaN if any is NaN); -inf for n == 0.
template <class T>
inline opmath_t<T> max_lanes(const T* x, int64_t n) {
  using S = opmath_t<T>;
  S m = -std::numeric_limits<S>::infinity();
  int64_t i = 0;
  if constexpr (SimdOf<T>::kVector) {
    using V = typename SimdOf<T>::type;
    constexpr int L = V::kLanes;
    if (n >= L) {
      V m0(m), m1(m);
      for (; i + 2 * L <= n; i += 2 * L) {
        m0 = vec::max(V::load(x + i), m0);
        m1 = vec::max(V::load(x + i + L), m1);
      }
      if (i + L <= n) {
        m0 = vec::max(V::load(x + i), m0);
        i += L;
      }
      alignas(64) S lanes[L];
      vec::max(m0, m1).store(lanes);
      for (int k = 0; k < L; ++k) m = vec::max(lanes[k], m);
    }
  }
  for (; i < n; ++i) m = vec::max(load<S>(x + i), m);
  return m;
}

}  // namespace ember::cpu::norm
