// Float math for the elementwise kernels: exp, log, tanh, erf, gelu, silu, ...
// on VecF, and on plain float for strided loops.
//
// Note [One algorithm, two lane widths]
// Each function is a template over V = VecF (contiguous data) or float (one
// element of a strided loop). Both run the same steps on primitives that are
// exact or correctly rounded (vec.h), so a strided tensor and its contiguous
// copy give the same bits. Every multiply that feeds an add is an explicit
// fma (or exact), so the bits also do not depend on -ffp-contract.
//
// Note [How the functions are built]
// Each one cuts its argument down to a small interval where a polynomial is
// accurate, then undoes the cut:
// - exp(x) = 2^n e^r with n = round(x / ln2) and r = x - n ln2 in
//   [-ln2/2, ln2/2]. ln2 is split into two floats (Cody-Waite) so that r is
//   exact up to one rounding, whose error r_lo is kept too. e^r = 1 + r +
//   r^2 Q(r) with Q of degree 4, and 1 + r is summed without rounding error
//   (Fast2Sum), so the final add is the only rounding at the scale of the
//   result. 2^n is added into the exponent bits; lanes near over/underflow
//   take the full ldexp. exp2, expm1, sigmoid, tanh, silu, softplus and the
//   e^(-y²) of erfc reuse these steps.
// - log(x) = e ln2 + log1p(f), from x = (1 + f) 2^e with 1 + f in [√½, √2):
//   log1p(f) = f + f^2 Q(f) with Q of degree 8. log1p adds the first-order
//   correction for the rounding of 1 + x.
// - tanh: an odd polynomial below 0.625, else 1 - 2/(e^2|x| + 1).
// - erfc(y) = e^(-y²) R(y) for y >= 0. R = e^(y²) erfc(y) is smooth (1 at 0,
//   about 1/(y√π) far out) and is a degree-10 polynomial in t = (y - 3)/(y + 3).
//   y² is kept exact as a sum of two floats (hi + lo, from an fma), since
//   e^(-y²) magnifies any error in y² by y². erf = 1 - erfc, except below 0.5
//   where an odd polynomial avoids the cancellation.
// - gelu_erf(x) = x Φ(x) with Φ(x) = erfc(-x/√2)/2, which cancels on neither
//   side: the left tail keeps its relative accuracy, and for x > 0, Φ =
//   1 - erfc(x/√2)/2 subtracts at most 1/2 from 1. gelu_tanh is rewritten
//   as x sigmoid(2u) (= 0.5x(1 + tanh u)), which does not cancel for x < 0.
// - sin, cos: x = k π/2 + r with |r| <= π/4 (π/2 split into three floats),
//   then a polynomial for sin r or cos r picked and signed by k mod 4. Lanes
//   with |x| > kTrigMax (or ±inf) are handed to std::sin/std::cos.
// Polynomial coefficients are minimax fits (Remez exchange in 40-digit
// arithmetic, weighted for relative error, on the intervals above), rounded
// to float.
//
// Accuracy: max error against the correctly rounded result, in ulps, over
// every 11th float bit pattern (tests/test_vec_math.cpp holds each function
// to a bound):
//   exp 0.77   exp2 0.78   expm1 1.56   log 0.92   log2 1.07   log1p 0.90
//   tanh 1.33  sigmoid 2.35  silu 3.14  softplus 1.60  erf 2.50  erfc 4.58
//   gelu_erf 5.29 (at x = -12.9)  sin 1.56  cos 1.56
// gelu_tanh: 2 ulp near 0, growing like 2.4 |2u| ulp in the left tail, where
// the rounding of its cubic argument u is magnified by e^(2u): 12 ulp at
// x = -2.75, 50 at x = -6 (PyTorch's float 0.5x(1 + tanh u) is off by 200
// ulp and 100% there).
//
// Special values follow std:: (NaN in, NaN out; exp(-inf) = 0; log(0) =
// -inf; log(x < 0) = NaN; tanh(±inf) = ±1; erf(±inf) = ±1; -0 stays -0 in
// the odd functions). gelu_erf, gelu_tanh and silu give -0 at -inf (their
// limit), where the textbook formula gives -inf * 0 = NaN.
#pragma once

#include <cmath>
#include <limits>

#include "kernels/cpu/vec/vec.h"

namespace ember::cpu::vec {

namespace detail {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kLn2Hi = 0x1.62e430p-1f;  // ln2 = kLn2Hi + kLn2Lo
inline constexpr float kLn2Lo = -0x1.05c610p-29f;
inline constexpr float kLog2e = 0x1.715476p+0f;  // 1/ln2 = kLog2e + kLog2eLo
inline constexpr float kLog2eLo = 0x1.4ae0c0p-26f;
inline constexpr float kSqrt2 = 0x1.6a09e6p+0f;
inline constexpr float kSqrt1_2 = 0x1.6a09e6p-1f;
inline constexpr float kTwoOverPi = 0x1.45f306p-1f;
inline constexpr float kPiOver2Hi = 0x1.921fb6p+0f;  // π/2 = Hi + Mid + Lo
inline constexpr float kPiOver2Mid = -0x1.777a5cp-25f;
inline constexpr float kPiOver2Lo = -0x1.ee59dap-50f;
// sin/cos reduce |x| <= kTrigMax themselves (error bound tested up to here).
inline constexpr float kTrigMax = 65536.0f;

// c0 + c1 x + c2 x^2 + ... by Horner's rule, one fma per coefficient.
template <FloatLanes V>
V poly(V, float c0) {
  return V(c0);
}
template <FloatLanes V, class... C>
V poly(V x, float c0, C... cs) {
  return fma(poly(x, cs...), x, V(c0));
}

// Q(r) with e^r = 1 + r + r^2 Q(r), for |r| <= ln2/2.
template <FloatLanes V>
V expm1_q(V r) {
  return poly(r, 0.49999994f, 0.166665211f, 0.041668389f, 0.00836874545f, 0.00138145394f);
}

// e^(r + r_lo) for |r| <= ln2/2 and a tiny correction r_lo. 1 + r is kept as
// a sum of two floats (Fast2Sum), so the last add is the only rounding at the
// scale of the result.
template <FloatLanes V>
V exp_small(V r, V r_lo) {
  V s = 1.0f + r;
  V s_lo = (1.0f - s) + r;  // exact: what 1 + r lost
  return s + fma(r * r, expm1_q(r), s_lo + r_lo);
}

// Q(f) with log(1 + f) = f + f^2 Q(f), for f in [√½ - 1, √2 - 1].
template <FloatLanes V>
V log1p_q(V f) {
  return poly(f, -0.499999881f, 0.333333254f, -0.250015855f, 0.200019836f, -0.166089997f, 0.141815796f,
              -0.132434711f, 0.129063249f, -0.0762293786f);
}

// Writes x = (1 + f) 2^e with 1 + f in [√½, √2) and returns f, for finite x > 0.
template <FloatLanes V>
V log_reduce(V x, V& e) {
  V m = mantissa(x, e);  // [1, 2)
  auto high = m > kSqrt2;
  e = blend(high, e + 1.0f, e);
  return blend(high, m * 0.5f, m) - 1.0f;  // exact (Sterbenz)
}

// The log of x where r was computed as if x were finite and positive.
template <FloatLanes V>
V log_special(V x, V r) {
  r = blend(x >= 0.0f, r, V(kNaN));  // x < 0 or NaN
  r = blend(x == 0.0f, V(-kInf), r);
  return blend(x == kInf, x, r);
}

// erf(y) for 0 <= y < 0.5: y (2/√π + z P(z)) with z = y², the leading
// coefficient kept as two floats so its rounding does not show.
template <FloatLanes V>
V erf_small(V y) {
  V z = y * y;
  V p = fma(z, poly(z, -0.37612617f, 0.112829499f, -0.0267640296f, 0.00473023532f), V(-0x1.f7ac92p-25f));
  return fma(y, V(0x1.20dd76p+0f), y * p);
}

// Writes x = n ln2 + r + r_lo and returns r, |r| <= ln2/2, for |x| <= 200.
// ln2 is split in two floats (Cody-Waite); r_lo is what rounding r lost.
template <FloatLanes V>
V exp_reduce(V x, V& n, V& r_lo) {
  n = round(x * kLog2e);
  V r_hi = fma(n, V(-kLn2Hi), x);  // exact
  V r = fma(n, V(-kLn2Lo), r_hi);
  r_lo = fma(n, V(-kLn2Lo), r_hi - r);
  return r;
}

// e^x = m 2^n with m in [√½, √2], for |x| <= 200.
template <FloatLanes V>
V exp_parts(V x, V& n) {
  V r_lo;
  V r = exp_reduce(x, n, r_lo);
  return exp_small(r, r_lo);
}

// m 2^n for m in [√½, √2]; `edge` marks the lanes whose result may leave
// the normal floats (rare: those take the full ldexp).
template <FloatLanes V, class Mask>
V scale(V m, V n, Mask edge) {
  V y = ldexp_normal(m, n);
  if (any(edge)) y = blend(edge, ldexp(m, n), y);
  return y;
}

// erfc(y) = r g for 0 <= y <= 10.5, given t = (y - 3)/(y + 3) and y² =
// y2hi + y2lo exactly. Returns r = e^(y²) erfc(y), a polynomial in t, and sets
// g = e^(-y²). They stay apart so that callers can scale r before
// multiplying by g, which may be denormal.
template <FloatLanes V>
V erfc_tail(V t, V y2hi, V y2lo, V& g) {
  V n, r_lo;
  V r = exp_reduce(-y2hi, n, r_lo);
  V m = exp_small(r, r_lo);
  g = scale(fma(-m, y2lo, m), n, y2hi > 86.0f);  // e^(-hi - lo) = e^(-hi) (1 - lo), |lo| < 2^-17
  return poly(t, 0.179001153f, -0.326233566f, 0.2456038f, -0.150115788f, 0.0716657937f, -0.0243942738f,
              0.00426926091f, 0.000716183451f, -0.0005951153f, 2.77854742e-05f, 5.54580365e-05f);
}

// sin(a) for 0 <= a <= kTrigMax, or cos(a) with quadrant_shift = 1
// (cos a = sin(a + π/2)).
template <FloatLanes V>
V sin_reduced(V a, float quadrant_shift) {
  V k = round(a * kTwoOverPi);
  V r = fma(k, V(-kPiOver2Hi), a);  // exact
  r = fma(k, V(-kPiOver2Mid), r);
  r = fma(k, V(-kPiOver2Lo), r);  // |r| <= π/4
  V q = k + quadrant_shift;
  q = q - 4.0f * floor(q * 0.25f);  // quadrant in {0, 1, 2, 3}
  V z = r * r;
  V s = fma(r * z, poly(z, -0.166666552f, 0.00833215564f, -0.00019514632f), r);
  V c = fma(z * z, poly(z, 0.0416666456f, -0.00138873095f, 2.44324128e-05f), fma(z, V(-0.5f), V(1.0f)));
  V v = blend((q == 1.0f) | (q == 3.0f), c, s);  // sin r, cos r, -sin r, -cos r
  return blend(q >= 2.0f, -v, v);
}

}  // namespace detail

template <FloatLanes V>
V exp(V x) {
  using namespace detail;
  x = clamp(x, V(-104.0f), V(89.0f));  // e^x is 0 below and inf above in float
  V n;
  V m = exp_parts(x, n);
  return scale(m, n, abs(x) > 86.0f);
}

template <FloatLanes V>
V exp2(V x) {
  using namespace detail;
  x = clamp(x, V(-151.0f), V(129.0f));
  V n = round(x);
  V f = x - n;  // exact, |f| <= 1/2; 2^f = e^(f ln2)
  V r = f * kLn2Hi;
  return scale(exp_small(r, fma(f, V(kLn2Lo), fma(f, V(kLn2Hi), -r))), n, abs(x) > 124.0f);
}

template <FloatLanes V>
V expm1(V x) {
  using namespace detail;
  V xc = clamp(x, V(-20.0f), V(89.0f));  // expm1 is -1 in float below -17.3
  V n, r_lo;
  V r = exp_reduce(xc, n, r_lo);
  V p = r + fma(r * r, expm1_q(r), r_lo);              // e^r - 1
  V s = ldexp_normal(V(1.0f), n);                       // 2^n
  V mid = fma(p, s, s - 1.0f);                          // 2^n (e^r - 1) + (2^n - 1), for x <= 20
  V big = scale(exp_small(r, r_lo), n, xc > 86.0f);     // e^x: above 20 the -1 is below half an ulp
  V y = blend(xc > 20.0f, big, mid);
  return blend(x == 0.0f, x, y);                        // -0 stays -0
}

template <FloatLanes V>
V log(V x) {
  using namespace detail;
  V e;
  V f = log_reduce(x, e);
  V y = fma(e, V(kLn2Hi), fma(e, V(kLn2Lo), fma(f * f, log1p_q(f), f)));
  return log_special(x, y);
}

template <FloatLanes V>
V log2(V x) {
  using namespace detail;
  V e;
  V f = log_reduce(x, e);
  V t = (f * f) * log1p_q(f);  // log2(1 + f) = (f + t) log2e, f times log2e unrounded
  V y = e + fma(f, V(kLog2e), fma(t, V(kLog2e), f * kLog2eLo));
  return log_special(x, y);
}

template <FloatLanes V>
V log1p(V x) {
  using namespace detail;
  V u = 1.0f + x;
  V e;
  V f = log_reduce(u, e);
  V c = (x - (u - 1.0f)) / u;  // log(u + d) = log(u) + d/u for what 1 + x lost
  V y = fma(e, V(kLn2Hi), fma(e, V(kLn2Lo), f + fma(f * f, log1p_q(f), c)));
  y = log_special(u, y);
  return blend(x == 0.0f, x, y);  // -0 stays -0
}

template <FloatLanes V>
V tanh(V x) {
  using namespace detail;
  V a = abs(x);
  V z = a * a;
  V small = fma(a * z, poly(z, -0.333332807f, 0.133314416f, -0.0537397154f, 0.020639088f, -0.00570498686f), a);
  V large = 1.0f - 2.0f / (exp(a + a) + 1.0f);
  return flip_sign(blend(a < 0.625f, small, large), x);
}

template <FloatLanes V>
V sigmoid(V x) {
  V e = exp(-abs(x));  // never overflows; 1/(1 + e^-x) = e^x/(1 + e^x)
  return blend(x >= 0.0f, V(1.0f), e) / (1.0f + e);
}

template <FloatLanes V>
V silu(V x) {
  x = clamp(x, V(-170.0f), V(detail::kInf));  // silu(-170) is -0 already
  V y = x * sigmoid(x);
  auto deep = x < -80.0f;  // e^x near the denormals: x e^x as one scaled product (n >= -246)
  if (any(deep)) {
    V n;
    V m = detail::exp_parts(x, n);
    y = blend(deep, ldexp(x * m, n), y);  // 1 + e^x is 1 there
  }
  return y;
}

// PyTorch's softplus with beta = 1, threshold = 20.
template <FloatLanes V>
V softplus(V x) {
  return blend(x > 20.0f, x, log1p(exp(x)));
}

template <FloatLanes V>
V erf(V x) {
  using namespace detail;
  V a = abs(x);
  V y = clamp(a, V(0.0f), V(10.5f));  // erfc(10.5) is 0 in float
  V hi = y * y;
  V g;
  V r = erfc_tail((y - 3.0f) / (y + 3.0f), hi, fma(y, y, -hi), g);
  return flip_sign(blend(a < 0.5f, erf_small(a), fma(-r, g, V(1.0f))), x);
}

template <FloatLanes V>
V erfc(V x) {
  using namespace detail;
  V a = abs(x);
  V y = clamp(a, V(0.0f), V(10.5f));  // erfc(10.5) is 0 in float
  V hi = y * y;
  V g;
  V tail = erfc_tail((y - 3.0f) / (y + 3.0f), hi, fma(y, y, -hi), g) * g;  // erfc(|x|)
  V small = 1.0f - flip_sign(erf_small(a), x);  // 1 - erf(x), no cancellation below 0.5
  return blend(a < 0.5f, small, blend(x < 0.0f, 2.0f - tail, tail));
}

// 0.5 x (1 + erf(x/√2)) = x Φ(x), with Φ(x) = erfc(-x/√2)/2 for |x|/√2 >= 0.5,
// which cancels on neither side: the left tail keeps its relative accuracy.
template <FloatLanes V>
V gelu_erf(V x) {
  using namespace detail;
  V xt = clamp(x, V(-15.0f), V(15.0f));  // beyond, Φ is 0 or 1 in float
  V a = abs(xt);
  V t = fma(a, V(kSqrt1_2), V(-3.0f)) / fma(a, V(kSqrt1_2), V(3.0f));  // y = |x|/√2 unrounded
  V h = xt * xt;  // y² = (h + l)/2 exactly
  V g;
  V r = erfc_tail(t, h * 0.5f, fma(xt, xt, -h) * 0.5f, g);  // erfc(|x|/√2) = r g
  V neg = (0.5f * xt * r) * g;                             // scaled before g: g may be denormal
  V pos = x * fma(-0.5f * r, g, V(1.0f));
  return blend(x < 0.0f, neg, pos);
}

// PyTorch's approximate='tanh': 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))),
// computed as x sigmoid(2u), which is the same function.
template <FloatLanes V>
V gelu_tanh(V x) {
  x = clamp(x, V(-20.0f), V(detail::kInf));  // gelu_tanh(-20) is -0 already
  V v = x * fma(x * x, V(0x1.2444f2p-4f), V(0x1.988454p+0f));  // 2√(2/π) (x + 0.044715 x³)
  return x * sigmoid(v);
}

template <FloatLanes V>
V sin(V x) {
  using namespace detail;
  V a = abs(x);
  V y = flip_sign(sin_reduced(a, 0.0f), x);
  auto huge = a > kTrigMax;
  if (any(huge)) y = blend(huge, apply_lanes(x, [](float v) { return std::sin(v); }), y);
  return y;
}

template <FloatLanes V>
V cos(V x) {
  using namespace detail;
  V a = abs(x);
  V y = sin_reduced(a, 1.0f);
  auto huge = a > kTrigMax;
  if (any(huge)) y = blend(huge, apply_lanes(x, [](float v) { return std::cos(v); }), y);
  return y;
}

}  // namespace ember::cpu::vec
