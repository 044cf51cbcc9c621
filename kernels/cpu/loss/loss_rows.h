// Row primitives of the fused cross-entropy kernels: max, sum of exp(x - max)
// and a weighted sum over one contiguous row of C classes.
//
// float rows run on SIMD lanes (kernels/cpu/vec/vec.h, vec_math.h) with two
// independent accumulators, folded in a fixed order, and a scalar tail that
// runs the same exp algorithm; double rows use plain loops and std::exp.
// A row is always folded by one thread, so the bits never depend on the
// thread count.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec/vec_math.h"

namespace ember::cpu::loss_rows {

using vec::VecF;
inline constexpr int kL = VecF::kLanes;

inline float fold_max(VecF v) {
  float lanes[kL];
  v.store(lanes);
  float m = lanes[0];
  for (int k = 1; k < kL; ++k) m = vec::max(m, lanes[k]);
  return m;
}

inline float fold_sum(VecF v) {
  float lanes[kL];
  v.store(lanes);
  float s = lanes[0];
  for (int k = 1; k < kL; ++k) s += lanes[k];
  return s;
}

// max of x[0, C); NaN propagates.
inline float row_max(const float* x, int64_t C) {
  VecF m0(-std::numeric_limits<float>::infinity()), m1 = m0;
  int64_t c = 0;
  for (; c + 2 * kL <= C; c += 2 * kL) {
    m0 = vec::max(VecF::load(x + c), m0);
    m1 = vec::max(VecF::load(x + c + kL), m1);
  }
  for (; c + kL <= C; c += kL) m0 = vec::max(VecF::load(x + c), m0);
  float m = fold_max(vec::max(m1, m0));
  for (; c < C; ++c) m = vec::max(x[c], m);
  return m;
}
inline double row_max(const double* x, int64_t C) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < C; ++c) m = vec::max(x[c], m);
  return m;
}

// sum of exp(x[c] - m); when `e` is given, exp(x[c] - m) is also written to e[c].
inline float row_sum_exp(const float* x, int64_t C, float m, float* e) {
  const VecF vm(m);
  VecF s0(0.0f), s1(0.0f);
  int64_t c = 0;
  for (; c + 2 * kL <= C; c += 2 * kL) {
    const VecF a = vec::exp(VecF::load(x + c) - vm), b = vec::exp(VecF::load(x + c + kL) - vm);
    if (e) {
      a.store(e + c);
      b.store(e + c + kL);
    }
    s0 = s0 + a;
    s1 = s1 + b;
  }
  for (; c + kL <= C; c += kL) {
    const VecF a = vec::exp(VecF::load(x + c) - vm);
    if (e) a.store(e + c);
    s0 = s0 + a;
  }
  float s = fold_sum(s0 + s1);
  for (; c < C; ++c) {
    const float a = vec::exp(x[c] - m);
    if (e) e[c] = a;
    s += a;
  }
  return s;
}
inline double row_sum_exp(const double* x, int64_t C, double m, double* e) {
  double s = 0;
  for (int64_t c = 0; c < C; ++c) {
    const double a = std::exp(x[c] - m);
    if (e) e[c] = a;
    s += a;
  }
  return s;
}

// sum of w[c] * x[c], or of x[c] when w is null.
inline float row_dot(const float* x, const float* w, int64_t C) {
  VecF s(0.0f);
  int64_t c = 0;
  for (; c + kL <= C; c += kL) s = w ? vec::fma(VecF::load(x + c), VecF::load(w + c), s) : s + VecF::load(x + c);
  float r = fold_sum(s);
  for (; c < C; ++c) r = w ? vec::fma(x[c], w[c], r) : r + x[c];
  return r;
}
inline double row_dot(const double* x, const double* w, int64_t C) {
  double r = 0;
  for (int64_t c = 0; c < C; ++c) r += w ? w[c] * x[c] : x[c];
  return r;
}

// e[c] = e[c] * k - b * w[c] (w null: - b), in place.
inline void row_scale_shift(float* e, int64_t C, float k, float b, const float* w) {
  const VecF vk(k), vb(b);
  int64_t c = 0;
  for (; c + kL <= C; c += kL) {
    const VecF shift = w ? vb * VecF::load(w + c) : vb;
    (VecF::load(e + c) * vk - shift).store(e + c);
  }
  for (; c < C; ++c) e[c] = e[c] * k - (w ? b * w[c] : b);
}
inline void row_scale_shift(double* e, int64_t C, double k, double b, const double* w) {
  for (int64_t c = 0; c < C; ++c) e[c] = e[c] * k - (w ? b * w[c] : b);
}

}  // namespace ember::cpu::loss_rows
