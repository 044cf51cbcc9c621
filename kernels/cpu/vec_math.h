// Float math for the elementwise kernels: exp, log, tanh, erf, gelu, silu, ...
// on VecF, and on plain float for strided loops.
//
// Note [One algorithm, two lane widths]
// Each function is a template over V = VecF (contiguous data) or float (one
// element of a strided loop). Both run the same steps on primitives that are
// exact or correctly rounded (vec.h), so a strided tensor and its contiguous
// copy give the same bits.
//
// Note [How the functions are built]
// Each one cuts its argument down to a small interval where a polynomial is
// accurate, then undoes the cut:
// - exp(x) = 2^n e^r with n = round(x / ln2) and r = x - n ln2 in
//   [-ln2/2, ln2/2]. ln2 is split into two floats (Cody-Waite) so that r is
//   exact up to one rounding; e^r - 1 = r + r^2 Q(r) with Q of degree 4; 2^n
//   goes into the exponent bits (ldexp). exp2 and expm1 reuse the same
//   polynomial.
// - log(x) = e ln2 + log1p(f), from x = (1 + f) 2^e with 1 + f in [√½, √2):
//   log1p(f) = f + f^2 Q(f) with Q of degree 8. log1p adds the first-order
//   correction for the rounding of 1 + x.
// - tanh, erf: an odd polynomial near 0; further out tanh = 1 - 2/(e^2|x| + 1)
//   and erf = 1 - erfc, with erfc(y) = e^(-y²) R(y). R is smooth (about
//   1/(y√π)) and is a polynomial in t = (y - 3)/(y + 3). y² is kept exact as
//   a sum of two floats (hi + lo, from an fma), since e^(-y²) magnifies any
//   error in y² by y².
// - gelu_erf(x) = x Φ(x) uses the same erfc, so its left tail keeps relative
//   accuracy; gelu_tanh is rewritten as x sigmoid(2u) (= 0.5x(1 + tanh u)),
//   which does not cancel for x < 0.
// - sin, cos: x = k π/2 + r with |r| <= π/4 (π/2 split into three floats),
//   then a polynomial for sin r or cos r picked and signed by k mod 4. Lanes
//   with |x| > kTrigMax (or ±inf) are handed to std::sin/std::cos.
// Polynomial coefficients are minimax fits (Remez exchange in 40-digit
// arithmetic, weighted for relative error, on the intervals above), rounded
// to float. Results are checked against double-precision std:: in
// tests/test_vec_math.cpp, which states the max error of each function.
//
// Special values follow std:: (NaN in, NaN out; exp(-inf) = 0; log(0) =
// -inf; log(x < 0) = NaN; tanh(±inf) = ±1; erf(±inf) = ±1; -0 stays -0 in
// the odd functions). gelu_erf, gelu_tanh and silu give -0 at -inf (their
// limit), where the textbook formula gives -inf * 0 = NaN.
#pragma once

#include <cmath>
#include <limits>

#include "kernels/cpu/vec.h"

namespace ember::cpu::vec {

template <FloatLanes V>
V exp(V x);  // used by detail::erfc_tail

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

// e^r - 1 for |r| <= ln2/2.
template <FloatLanes V>
V expm1_poly(V r) {
  V q = poly(r, 0.49999997f, 0.166665435f, 0.0416672006f, 0.00836654752f, 0.00138825167f);
  return fma(r * r, q, r);
}

// log(1 + f) for f in [√½ - 1, √2 - 1].
template <FloatLanes V>
V log1p_poly(V f) {
  V q = poly(f, -0.499999881f, 0.333333254f, -0.250015855f, 0.200019836f, -0.166089997f, 0.141815796f,
             -0.132434711f, 0.129063249f, -0.0762293786f);
  return fma(f * f, q, f);
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

// erf(y) for 0 <= y < 0.5.
template <FloatLanes V>
V erf_small(V y) {
  return y * poly(y * y, 1.12837911f, -0.376126081f, 0.112828225f, -0.0267571844f, 0.00471798936f);
}

// erfc(y) = r * g for 0.5 <= y <= 10.5, given y² = y2hi + y2lo exactly. Returns
// r = e^(y²) erfc(y) and sets g = e^(-y²). They stay apart so that callers
// can scale r before multiplying by g, which may be denormal.
template <FloatLanes V>
V erfc_tail(V y, V y2hi, V y2lo, V& g) {
  V t = (y - 3.0f) / (y + 3.0f);
  V e = exp(-y2hi);
  g = fma(-e, y2lo, e);  // e^(-hi - lo) = e^(-hi) (1 - lo), |lo| < 2^-18
  return poly(t, 0.179001153f, -0.326233566f, 0.245603651f, -0.150115401f, 0.0716686174f, -0.024399098f,
              0.00425056648f, 0.000736755726f, -0.000542123336f);
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
  V n = round(x * kLog2e);
  V r = fma(n, V(-kLn2Hi), x);  // exact
  r = fma(n, V(-kLn2Lo), r);
  return ldexp(1.0f + expm1_poly(r), n);
}

template <FloatLanes V>
V exp2(V x) {
  using namespace detail;
  x = clamp(x, V(-151.0f), V(129.0f));
  V n = round(x);
  return ldexp(1.0f + expm1_poly((x - n) * kLn2Hi), n);
}

template <FloatLanes V>
V expm1(V x) {
  using namespace detail;
  V xc = clamp(x, V(-20.0f), V(89.0f));  // expm1 is -1 in float below -17.3
  V n = round(xc * kLog2e);
  V r = fma(n, V(-kLn2Hi), xc);
  r = fma(n, V(-kLn2Lo), r);
  V p = expm1_poly(r);
  V s = ldexp(V(1.0f), n);          // 2^n, exact for |x| <= 20
  V mid = fma(p, s, s - 1.0f);      // 2^n (e^r - 1) + (2^n - 1)
  V big = ldexp(1.0f + p, n);       // e^x: the -1 is below half an ulp there
  V y = blend(xc > 20.0f, big, mid);
  return blend(x == 0.0f, x, y);    // -0 stays -0
}

template <FloatLanes V>
V log(V x) {
  using namespace detail;
  V e;
  V f = log_reduce(x, e);
  V y = fma(e, V(kLn2Hi), fma(e, V(kLn2Lo), log1p_poly(f)));
  return log_special(x, y);
}

template <FloatLanes V>
V log2(V x) {
  using namespace detail;
  V e;
  V l = log1p_poly(log_reduce(x, e));
  V y = e + fma(l, V(kLog2e), l * kLog2eLo);
  return log_special(x, y);
}

template <FloatLanes V>
V log1p(V x) {
  using namespace detail;
  V u = 1.0f + x;
  V e;
  V f = log_reduce(u, e);
  V c = (x - (u - 1.0f)) / u;  // log(u + d) = log(u) + d/u for what 1 + x lost
  V y = fma(e, V(kLn2Hi), fma(e, V(kLn2Lo), log1p_poly(f) + c));
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
  x = clamp(x, V(-200.0f), V(detail::kInf));  // silu(-200) is -0 already
  return x * sigmoid(x);
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
  V r = erfc_tail(y, hi, fma(y, y, -hi), g);
  return flip_sign(blend(a < 0.5f, erf_small(a), 1.0f - r * g), x);
}

template <FloatLanes V>
V erfc(V x) {
  using namespace detail;
  V a = abs(x);
  V y = clamp(a, V(0.0f), V(10.5f));
  V hi = y * y;
  V g;
  V tail = erfc_tail(y, hi, fma(y, y, -hi), g) * g;  // erfc(|x|)
  V large = blend(x < 0.0f, 2.0f - tail, tail);
  return blend(a < 0.5f, 1.0f - flip_sign(erf_small(a), x), large);
}

// 0.5 x (1 + erf(x/√2)) = x Φ(x), with Φ(x) = erfc(-x/√2)/2.
template <FloatLanes V>
V gelu_erf(V x) {
  using namespace detail;
  V xt = clamp(x, V(-15.0f), V(15.0f));  // beyond, Φ is 0 or 1 in float
  V y = abs(xt) * kSqrt1_2;
  V h = xt * xt;  // y² = (h + l)/2 exactly
  V g;
  V r = erfc_tail(y, h * 0.5f, fma(xt, xt, -h) * 0.5f, g);
  V small = x * fma(flip_sign(erf_small(y), xt), V(0.5f), V(0.5f));
  V neg = (0.5f * xt * r) * g;  // scaled before g: g may be denormal
  V pos = x * (1.0f - (0.5f * r) * g);
  return blend(y < 0.5f, small, blend(x < 0.0f, neg, pos));
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
