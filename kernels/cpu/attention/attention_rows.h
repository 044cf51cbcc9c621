// Row operations on score tiles shared by the attention kernels: the online
// softmax step of the forward pass and the softmax recomputation of the
// backward pass. float rows use SIMD lanes (vec_math.h exp); double rows
// the C library.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/vec/vec_math.h"

namespace ember::cpu::attention_rows {

// max over the row, NaN ignored (a NaN score reaches the output through exp).
template <class T>
T row_max(const T* s, int64_t n, T init) {
  T m = init;
  int64_t j = 0;
  if constexpr (std::is_same_v<T, float>) {
    using vec::VecF;
    constexpr int64_t W = VecF::kLanes;
    if (n >= W) {
      VecF acc(init);
      for (; j + W <= n; j += W) {
        const VecF x = VecF::load(s + j);
        acc = vec::blend(x > acc, x, acc);  // a NaN compares false: acc is kept
      }
      float lanes[W];
      acc.store(lanes);
      for (float x : lanes) m = x > m ? x : m;
    }
  }
  for (; j < n; ++j) m = s[j] > m ? s[j] : m;
  return m;
}

// s[j] = exp(s[j] - shift) for the row; returns the row's sum (in a fixed order).
template <class T>
T exp_shifted_sum(T* s, int64_t n, T shift) {
  T sum = 0;
  int64_t j = 0;
  if constexpr (std::is_same_v<T, float>) {
    using vec::VecF;
    constexpr int64_t W = VecF::kLanes;
    const VecF sh(shift);
    VecF acc(0.0f);
    for (; j + W <= n; j += W) {
      const VecF p = vec::exp(VecF::load(s + j) - sh);
      p.store(s + j);
      acc = acc + p;
    }
    if (j < n) {
      const int rest = static_cast<int>(n - j);
      const VecF p = vec::exp(VecF::load_partial(s + j, rest) - sh);
      p.store_partial(s + j, rest);
      acc = acc + VecF::load_partial(s + j, rest);
      j = n;
    }
    float lanes[W];
    acc.store(lanes);
    for (float x : lanes) sum += x;
  }
  for (; j < n; ++j) {
    s[j] = std::exp(s[j] - shift);
    sum += s[j];
  }
  return sum;
}

// dS = P * (dP - d), in place in dp (p: the probabilities, d: the row's sum of dO * O).
template <class T>
void softmax_grad_row(const T* p, T* dp, int64_t n, T d) {
  for (int64_t j = 0; j < n; ++j) dp[j] = p[j] * (dp[j] - d);
}

}  // namespace ember::cpu::attention_rows
