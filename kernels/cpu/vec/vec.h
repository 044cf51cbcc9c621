// SIMD types for the CPU elementwise kernels: VecF (float lanes) and VecD
// (double lanes), one width per build.
//
// Note [One SIMD type per build]
// The compiler flags choose the lane type once, at compile time:
//   __AVX512F__           VecF = 16 x f32 in a __m512,  VecD = 8 x f64
//   __AVX2__ && __FMA__   VecF =  8 x f32 in a __m256,  VecD = 4 x f64
//   otherwise             VecF =  4 x f32 in a struct,  VecD = 2 x f64 (plain C++)
// Every operation is also defined on plain `float` (and `double`), as a
// one-lane vector. vec_math.h writes each function once, as a template over
// V = VecF or float, so a strided loop (float) and a contiguous one (VecF)
// run the same algorithm and give the same bits: every primitive below is
// either exact or correctly rounded, in every lane width.
//
// A contiguous loop reads kLanes floats per step and finishes with a tail:
//   for (; i + VecF::kLanes <= n; i += VecF::kLanes) f(VecF::load(x + i)).store(y + i);
//   f(VecF::load_partial(x + i, n - i)).store_partial(y + i, n - i);
// The partial forms touch only the first n elements (masked on AVX-512 and
// AVX2, so they never fault past the end of a buffer) and fill the other
// lanes with 0.
//
// Conventions (the same in every width):
// - max/min propagate NaN like PyTorch's maximum/minimum: a NaN in either
//   operand gives NaN. When the operands compare equal (0 and -0) the result
//   is b.
// - clamp(x, lo, hi) propagates a NaN x; lo and hi must not be NaN.
// - Comparisons return a mask (bool for one lane); blend(mask, a, b) picks a
//   where the mask is set, b elsewhere, like `mask ? a : b`.
// - deinterleave(lo, hi, even, odd) splits the 2 * kLanes values lo:hi
//   into their even and odd positions (a row of 2-wide windows, for pooling).
// - round() rounds half to even (like torch.round), not half away from 0.
// - reciprocal is 1/x (correctly rounded) and rsqrt is 1/sqrt(x) (two
//   correctly rounded steps, < 1.5 ulp), not the hardware approximations, so
//   they give the same bits everywhere.
#pragma once

#include <bit>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics build their "undefined" operands as `__m512 x = x`,
// which -Wuninitialized flags once inlined (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif

namespace ember::cpu::vec {

#if defined(__AVX512F__)
inline constexpr const char* kIsaName = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
inline constexpr const char* kIsaName = "avx2+fma";
#else
inline constexpr const char* kIsaName = "portable";
#endif

// ---------------------------------------------------------------------------
// One lane: the primitives on float and double.
// ---------------------------------------------------------------------------

inline float fma(float a, float b, float c) { return std::fma(a, b, c); }
inline double fma(double a, double b, double c) { return std::fma(a, b, c); }
// Written as the x86 instructions behave (maxps returns b unless a > b), plus
// the NaN check on a, so that scalar and vector results agree bit for bit.
inline float max(float a, float b) { return a != a ? a : (a > b ? a : b); }
inline float min(float a, float b) { return a != a ? a : (a < b ? a : b); }
inline double max(double a, double b) { return a != a ? a : (a > b ? a : b); }
inline double min(double a, double b) { return a != a ? a : (a < b ? a : b); }
inline float clamp(float x, float lo, float hi) {
  float m = lo > x ? lo : x;
  return hi < m ? hi : m;
}
inline float abs(float x) { return std::fabs(x); }
inline double abs(double x) { return std::fabs(x); }
// v with its sign flipped where s has its sign bit set (s = -0 included).
inline float flip_sign(float v, float s) { return std::signbit(s) ? -v : v; }
inline float round(float x) { return std::nearbyint(x); }  // half to even (default FP environment)
inline float floor(float x) { return std::floor(x); }
inline float ceil(float x) { return std::ceil(x); }
inline float trunc(float x) { return std::trunc(x); }
inline float sqrt(float x) { return std::sqrt(x); }
inline double sqrt(double x) { return std::sqrt(x); }
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline float reciprocal(float x) { return 1.0f / x; }
inline float blend(bool mask, float a, float b) { return mask ? a : b; }
inline bool any(bool mask) { return mask; }
template <class F>
float apply_lanes(float x, F f) {
  return f(x);
}

namespace detail {
inline constexpr float kMinNormal = std::numeric_limits<float>::min();  // 2^-126
// 2^k as a float, for k in [-126, 127] (a normal number: bits (k + 127) << 23).
inline float pow2(int k) { return std::bit_cast<float>(static_cast<uint32_t>(k + 127) << 23); }
}  // namespace detail

// x * 2^n for an integral n in [-252, 254] (outside, and for NaN, the result
// is unspecified but defined). Scaled in two steps by 2^floor(n/2) and
// 2^(n - floor(n/2)), each a normal power of two: the first product is exact
// for the |x| in [2^-100, 2^100] the math passes, so the result is rounded
// once, into the denormals or to inf if needed. (AVX-512's scalef does it in
// one instruction.)
inline float ldexp(float x, float n) {
  float c = n > -252.0f ? n : -252.0f;
  c = c < 254.0f ? c : 254.0f;
  int k = static_cast<int>(c);
  int k1 = k >> 1;  // floor(k / 2)
  return x * detail::pow2(k1) * detail::pow2(k - k1);
}

// x * 2^n when x and the result are normal floats (so it is exact). The
// vector forms add n to the exponent field: a few instructions, where ldexp
// above takes a dozen; the one-lane form is ldexp itself.
inline float ldexp_normal(float x, float n) { return ldexp(x, n); }

// Returns m in [1, 2) and sets e so that x = m * 2^e, for finite x > 0,
// denormals included. Other inputs give unspecified (but defined) values.
inline float mantissa(float x, float& e) {
  bool tiny = x < detail::kMinNormal;
  uint32_t bits = std::bit_cast<uint32_t>(tiny ? x * 0x1p23f : x);
  e = static_cast<float>(static_cast<int>(bits >> 23)) - (tiny ? 150.0f : 127.0f);
  return std::bit_cast<float>((bits & 0x007fffffu) | 0x3f800000u);
}

// ---------------------------------------------------------------------------
// VecF, VecD and their masks, per instruction set.
// ---------------------------------------------------------------------------

#if defined(__AVX512F__)

struct MaskF {
  __mmask16 k;
};

struct VecF {
  static constexpr int kLanes = 16;
  __m512 v;
  VecF() = default;
  VecF(__m512 x) : v(x) {}
  VecF(float s) : v(_mm512_set1_ps(s)) {}  // broadcast
  static VecF broadcast(float s) { return VecF(s); }
  static VecF load(const float* p) { return _mm512_loadu_ps(p); }
  void store(float* p) const { _mm512_storeu_ps(p, v); }
  // n in [0, kLanes]: lanes >= n are 0 and their memory is not read.
  static VecF load_partial(const float* p, int n) { return _mm512_maskz_loadu_ps(tail(n), p); }
  void store_partial(float* p, int n) const { _mm512_mask_storeu_ps(p, tail(n), v); }

 private:
  static __mmask16 tail(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
};

namespace detail {
inline __m512 bits(__m512i x) { return _mm512_castsi512_ps(x); }
inline __m512i ibits(__m512 x) { return _mm512_castps_si512(x); }
inline __m512i sign_mask() { return _mm512_set1_epi32(static_cast<int>(0x80000000u)); }
}  // namespace detail

inline VecF operator+(VecF a, VecF b) { return _mm512_add_ps(a.v, b.v); }
inline VecF operator-(VecF a, VecF b) { return _mm512_sub_ps(a.v, b.v); }
inline VecF operator*(VecF a, VecF b) { return _mm512_mul_ps(a.v, b.v); }
inline VecF operator/(VecF a, VecF b) { return _mm512_div_ps(a.v, b.v); }
inline VecF operator-(VecF a) { return detail::bits(_mm512_xor_si512(detail::ibits(a.v), detail::sign_mask())); }
inline VecF fma(VecF a, VecF b, VecF c) { return _mm512_fmadd_ps(a.v, b.v, c.v); }

inline MaskF operator==(VecF a, VecF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }
inline MaskF operator!=(VecF a, VecF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_NEQ_UQ)}; }
inline MaskF operator<(VecF a, VecF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ)}; }
inline MaskF operator<=(VecF a, VecF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_LE_OQ)}; }
inline MaskF operator>(VecF a, VecF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline MaskF operator>=(VecF a, VecF b) { return {_mm512_cmp_ps_mask(a.v, b.v, _CMP_GE_OQ)}; }
inline MaskF operator&(MaskF a, MaskF b) { return {static_cast<__mmask16>(a.k & b.k)}; }
inline MaskF operator|(MaskF a, MaskF b) { return {static_cast<__mmask16>(a.k | b.k)}; }
inline bool any(MaskF m) { return m.k != 0; }
inline VecF blend(MaskF m, VecF a, VecF b) { return _mm512_mask_blend_ps(m.k, b.v, a.v); }
inline void deinterleave(VecF lo, VecF hi, VecF& even, VecF& odd) {
  const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  even = _mm512_permutex2var_ps(lo.v, evens, hi.v);
  odd = _mm512_permutex2var_ps(lo.v, _mm512_add_epi32(evens, _mm512_set1_epi32(1)), hi.v);
}

inline VecF max(VecF a, VecF b) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q), _mm512_max_ps(a.v, b.v), a.v);
}
inline VecF min(VecF a, VecF b) {
  return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q), _mm512_min_ps(a.v, b.v), a.v);
}
// maxps returns its second operand when either is NaN: x second keeps a NaN x.
inline VecF clamp(VecF x, VecF lo, VecF hi) { return _mm512_min_ps(hi.v, _mm512_max_ps(lo.v, x.v)); }
inline VecF abs(VecF x) { return detail::bits(_mm512_andnot_si512(detail::sign_mask(), detail::ibits(x.v))); }
inline VecF flip_sign(VecF v, VecF s) {
  return detail::bits(_mm512_xor_si512(detail::ibits(v.v), _mm512_and_si512(detail::ibits(s.v), detail::sign_mask())));
}
inline VecF round(VecF x) { return _mm512_roundscale_ps(x.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline VecF floor(VecF x) { return _mm512_roundscale_ps(x.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
inline VecF ceil(VecF x) { return _mm512_roundscale_ps(x.v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
inline VecF trunc(VecF x) { return _mm512_roundscale_ps(x.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
inline VecF sqrt(VecF x) { return _mm512_sqrt_ps(x.v); }
// scalef computes x * 2^floor(n) with one rounding, whatever the range.
inline VecF ldexp(VecF x, VecF n) { return _mm512_scalef_ps(x.v, n.v); }
inline VecF ldexp_normal(VecF x, VecF n) { return _mm512_scalef_ps(x.v, n.v); }
inline VecF mantissa(VecF x, VecF& e) {
  e = _mm512_getexp_ps(x.v);
  return _mm512_getmant_ps(x.v, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);
}

struct VecD {
  static constexpr int kLanes = 8;
  __m512d v;
  VecD() = default;
  VecD(__m512d x) : v(x) {}
  VecD(double s) : v(_mm512_set1_pd(s)) {}  // broadcast
  static VecD broadcast(double s) { return VecD(s); }
  static VecD load(const double* p) { return _mm512_loadu_pd(p); }
  void store(double* p) const { _mm512_storeu_pd(p, v); }
  static VecD load_partial(const double* p, int n) { return _mm512_maskz_loadu_pd(tail(n), p); }
  void store_partial(double* p, int n) const { _mm512_mask_storeu_pd(p, tail(n), v); }

 private:
  static __mmask8 tail(int n) { return static_cast<__mmask8>((1u << n) - 1u); }
};

namespace detail {
inline __m512i sign_mask_d() { return _mm512_set1_epi64(static_cast<long long>(0x8000000000000000ull)); }
}  // namespace detail

inline VecD operator+(VecD a, VecD b) { return _mm512_add_pd(a.v, b.v); }
inline VecD operator-(VecD a, VecD b) { return _mm512_sub_pd(a.v, b.v); }
inline VecD operator*(VecD a, VecD b) { return _mm512_mul_pd(a.v, b.v); }
inline VecD operator/(VecD a, VecD b) { return _mm512_div_pd(a.v, b.v); }
inline VecD operator-(VecD a) {
  return _mm512_castsi512_pd(_mm512_xor_si512(_mm512_castpd_si512(a.v), detail::sign_mask_d()));
}
inline VecD fma(VecD a, VecD b, VecD c) { return _mm512_fmadd_pd(a.v, b.v, c.v); }
inline VecD max(VecD a, VecD b) {
  return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a.v, a.v, _CMP_UNORD_Q), _mm512_max_pd(a.v, b.v), a.v);
}
inline VecD min(VecD a, VecD b) {
  return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a.v, a.v, _CMP_UNORD_Q), _mm512_min_pd(a.v, b.v), a.v);
}
inline VecD abs(VecD x) {
  return _mm512_castsi512_pd(_mm512_andnot_si512(detail::sign_mask_d(), _mm512_castpd_si512(x.v)));
}
inline VecD sqrt(VecD x) { return _mm512_sqrt_pd(x.v); }

#elif defined(__AVX2__) && defined(__FMA__)

struct MaskF {
  __m256 m;  // all-ones lanes where set
};

namespace detail {
// Lanes [0, n) all ones, the others 0 (the masks of maskload/maskstore).
inline __m256i tail_mask32(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline __m256i tail_mask64(int n) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}
inline __m256 sign_mask() { return _mm256_set1_ps(-0.0f); }
}  // namespace detail

struct VecF {
  static constexpr int kLanes = 8;
  __m256 v;
  VecF() = default;
  VecF(__m256 x) : v(x) {}
  VecF(float s) : v(_mm256_set1_ps(s)) {}  // broadcast
  static VecF broadcast(float s) { return VecF(s); }
  static VecF load(const float* p) { return _mm256_loadu_ps(p); }
  void store(float* p) const { _mm256_storeu_ps(p, v); }
  // n in [0, kLanes]: lanes >= n are 0 and their memory is not read.
  static VecF load_partial(const float* p, int n) { return _mm256_maskload_ps(p, detail::tail_mask32(n)); }
  void store_partial(float* p, int n) const { _mm256_maskstore_ps(p, detail::tail_mask32(n), v); }
};

inline VecF operator+(VecF a, VecF b) { return _mm256_add_ps(a.v, b.v); }
inline VecF operator-(VecF a, VecF b) { return _mm256_sub_ps(a.v, b.v); }
inline VecF operator*(VecF a, VecF b) { return _mm256_mul_ps(a.v, b.v); }
inline VecF operator/(VecF a, VecF b) { return _mm256_div_ps(a.v, b.v); }
inline VecF operator-(VecF a) { return _mm256_xor_ps(a.v, detail::sign_mask()); }
inline VecF fma(VecF a, VecF b, VecF c) { return _mm256_fmadd_ps(a.v, b.v, c.v); }

inline MaskF operator==(VecF a, VecF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)}; }
inline MaskF operator!=(VecF a, VecF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_NEQ_UQ)}; }
inline MaskF operator<(VecF a, VecF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; }
inline MaskF operator<=(VecF a, VecF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LE_OQ)}; }
inline MaskF operator>(VecF a, VecF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ)}; }
inline MaskF operator>=(VecF a, VecF b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_GE_OQ)}; }
inline MaskF operator&(MaskF a, MaskF b) { return {_mm256_and_ps(a.m, b.m)}; }
inline MaskF operator|(MaskF a, MaskF b) { return {_mm256_or_ps(a.m, b.m)}; }
inline bool any(MaskF m) { return _mm256_movemask_ps(m.m) != 0; }
inline VecF blend(MaskF m, VecF a, VecF b) { return _mm256_blendv_ps(b.v, a.v, m.m); }
inline void deinterleave(VecF lo, VecF hi, VecF& even, VecF& odd) {
  // shuffle_ps picks within 128-bit halves: (lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6); the
  // 64-bit permute then puts the lo pairs before the hi pairs.
  even = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo.v, hi.v, 0x88)), 0xD8));
  odd = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo.v, hi.v, 0xDD)), 0xD8));
}

inline VecF max(VecF a, VecF b) {
  return _mm256_blendv_ps(_mm256_max_ps(a.v, b.v), a.v, _mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q));
}
inline VecF min(VecF a, VecF b) {
  return _mm256_blendv_ps(_mm256_min_ps(a.v, b.v), a.v, _mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q));
}
// maxps returns its second operand when either is NaN: x second keeps a NaN x.
inline VecF clamp(VecF x, VecF lo, VecF hi) { return _mm256_min_ps(hi.v, _mm256_max_ps(lo.v, x.v)); }
inline VecF abs(VecF x) { return _mm256_andnot_ps(detail::sign_mask(), x.v); }
inline VecF flip_sign(VecF v, VecF s) { return _mm256_xor_ps(v.v, _mm256_and_ps(s.v, detail::sign_mask())); }
inline VecF round(VecF x) { return _mm256_round_ps(x.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
inline VecF floor(VecF x) { return _mm256_round_ps(x.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
inline VecF ceil(VecF x) { return _mm256_round_ps(x.v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
inline VecF trunc(VecF x) { return _mm256_round_ps(x.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
inline VecF sqrt(VecF x) { return _mm256_sqrt_ps(x.v); }

namespace detail {
// 2^k as floats, for integer lanes k in [-126, 127].
inline __m256 pow2(__m256i k) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
}
}  // namespace detail

// Same steps as the one-lane ldexp above.
inline VecF ldexp(VecF x, VecF n) {
  __m256 c = _mm256_min_ps(_mm256_max_ps(n.v, _mm256_set1_ps(-252.0f)), _mm256_set1_ps(254.0f));
  __m256i k = _mm256_cvtps_epi32(c);
  __m256i k1 = _mm256_srai_epi32(k, 1);
  __m256i k2 = _mm256_sub_epi32(k, k1);
  return _mm256_mul_ps(_mm256_mul_ps(x.v, detail::pow2(k1)), detail::pow2(k2));
}

inline VecF ldexp_normal(VecF x, VecF n) {
  __m256i k = _mm256_slli_epi32(_mm256_cvtps_epi32(n.v), 23);
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(x.v), k));
}

inline VecF mantissa(VecF x, VecF& e) {
  __m256 tiny = _mm256_cmp_ps(x.v, _mm256_set1_ps(detail::kMinNormal), _CMP_LT_OQ);
  __m256 xs = _mm256_blendv_ps(x.v, _mm256_mul_ps(x.v, _mm256_set1_ps(0x1p23f)), tiny);
  __m256 bias = _mm256_blendv_ps(_mm256_set1_ps(127.0f), _mm256_set1_ps(150.0f), tiny);
  __m256i bits = _mm256_castps_si256(xs);
  e = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(bits, 23)), bias);
  __m256i m = _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f800000));
  return _mm256_castsi256_ps(m);
}

struct VecD {
  static constexpr int kLanes = 4;
  __m256d v;
  VecD() = default;
  VecD(__m256d x) : v(x) {}
  VecD(double s) : v(_mm256_set1_pd(s)) {}  // broadcast
  static VecD broadcast(double s) { return VecD(s); }
  static VecD load(const double* p) { return _mm256_loadu_pd(p); }
  void store(double* p) const { _mm256_storeu_pd(p, v); }
  static VecD load_partial(const double* p, int n) { return _mm256_maskload_pd(p, detail::tail_mask64(n)); }
  void store_partial(double* p, int n) const { _mm256_maskstore_pd(p, detail::tail_mask64(n), v); }
};

inline VecD operator+(VecD a, VecD b) { return _mm256_add_pd(a.v, b.v); }
inline VecD operator-(VecD a, VecD b) { return _mm256_sub_pd(a.v, b.v); }
inline VecD operator*(VecD a, VecD b) { return _mm256_mul_pd(a.v, b.v); }
inline VecD operator/(VecD a, VecD b) { return _mm256_div_pd(a.v, b.v); }
inline VecD operator-(VecD a) { return _mm256_xor_pd(a.v, _mm256_set1_pd(-0.0)); }
inline VecD fma(VecD a, VecD b, VecD c) { return _mm256_fmadd_pd(a.v, b.v, c.v); }
inline VecD max(VecD a, VecD b) {
  return _mm256_blendv_pd(_mm256_max_pd(a.v, b.v), a.v, _mm256_cmp_pd(a.v, a.v, _CMP_UNORD_Q));
}
inline VecD min(VecD a, VecD b) {
  return _mm256_blendv_pd(_mm256_min_pd(a.v, b.v), a.v, _mm256_cmp_pd(a.v, a.v, _CMP_UNORD_Q));
}
inline VecD abs(VecD x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x.v); }
inline VecD sqrt(VecD x) { return _mm256_sqrt_pd(x.v); }

#else  // portable: plain arrays, each operation a loop over the one-lane form

struct MaskF {
  static constexpr int kLanes = 4;
  bool m[kLanes];
};

struct VecF {
  static constexpr int kLanes = 4;
  float v[kLanes];
  VecF() = default;
  VecF(float s) {  // broadcast
    for (float& x : v) x = s;
  }
  static VecF broadcast(float s) { return VecF(s); }
  static VecF load(const float* p) { return load_partial(p, kLanes); }
  void store(float* p) const { store_partial(p, kLanes); }
  // n in [0, kLanes]: lanes >= n are 0 and their memory is not read.
  static VecF load_partial(const float* p, int n) {
    VecF r(0.0f);
    for (int i = 0; i < n; ++i) r.v[i] = p[i];
    return r;
  }
  void store_partial(float* p, int n) const {
    for (int i = 0; i < n; ++i) p[i] = v[i];
  }
};

namespace detail {
// Lane loops shared by the portable VecF and VecD.
template <class Vec, class F>
Vec map(Vec a, F f) {
  for (auto& x : a.v) x = f(x);
  return a;
}
template <class Vec, class F>
Vec zip(Vec a, Vec b, F f) {
  for (int i = 0; i < Vec::kLanes; ++i) a.v[i] = f(a.v[i], b.v[i]);
  return a;
}
template <class F>
MaskF compare(VecF a, VecF b, F f) {
  MaskF r;
  for (int i = 0; i < VecF::kLanes; ++i) r.m[i] = f(a.v[i], b.v[i]);
  return r;
}
}  // namespace detail

inline VecF operator+(VecF a, VecF b) { return detail::zip(a, b, [](float x, float y) { return x + y; }); }
inline VecF operator-(VecF a, VecF b) { return detail::zip(a, b, [](float x, float y) { return x - y; }); }
inline VecF operator*(VecF a, VecF b) { return detail::zip(a, b, [](float x, float y) { return x * y; }); }
inline VecF operator/(VecF a, VecF b) { return detail::zip(a, b, [](float x, float y) { return x / y; }); }
inline VecF operator-(VecF a) { return detail::map(a, [](float x) { return -x; }); }
inline VecF fma(VecF a, VecF b, VecF c) {
  for (int i = 0; i < VecF::kLanes; ++i) a.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
  return a;
}

inline MaskF operator==(VecF a, VecF b) { return detail::compare(a, b, [](float x, float y) { return x == y; }); }
inline MaskF operator!=(VecF a, VecF b) { return detail::compare(a, b, [](float x, float y) { return x != y; }); }
inline MaskF operator<(VecF a, VecF b) { return detail::compare(a, b, [](float x, float y) { return x < y; }); }
inline MaskF operator<=(VecF a, VecF b) { return detail::compare(a, b, [](float x, float y) { return x <= y; }); }
inline MaskF operator>(VecF a, VecF b) { return detail::compare(a, b, [](float x, float y) { return x > y; }); }
inline MaskF operator>=(VecF a, VecF b) { return detail::compare(a, b, [](float x, float y) { return x >= y; }); }
inline MaskF operator&(MaskF a, MaskF b) {
  for (int i = 0; i < MaskF::kLanes; ++i) a.m[i] = a.m[i] && b.m[i];
  return a;
}
inline MaskF operator|(MaskF a, MaskF b) {
  for (int i = 0; i < MaskF::kLanes; ++i) a.m[i] = a.m[i] || b.m[i];
  return a;
}
inline bool any(MaskF m) {
  for (bool b : m.m)
    if (b) return true;
  return false;
}
inline VecF blend(MaskF m, VecF a, VecF b) {
  for (int i = 0; i < VecF::kLanes; ++i) a.v[i] = m.m[i] ? a.v[i] : b.v[i];
  return a;
}
inline void deinterleave(VecF lo, VecF hi, VecF& even, VecF& odd) {
  for (int i = 0; i < VecF::kLanes; ++i) {
    const VecF& half = 2 * i < VecF::kLanes ? lo : hi;
    const int at = (2 * i) % VecF::kLanes;
    even.v[i] = half.v[at];
    odd.v[i] = half.v[at + 1];
  }
}

inline VecF max(VecF a, VecF b) { return detail::zip(a, b, [](float x, float y) { return max(x, y); }); }
inline VecF min(VecF a, VecF b) { return detail::zip(a, b, [](float x, float y) { return min(x, y); }); }
inline VecF clamp(VecF x, VecF lo, VecF hi) {
  for (int i = 0; i < VecF::kLanes; ++i) x.v[i] = clamp(x.v[i], lo.v[i], hi.v[i]);
  return x;
}
inline VecF abs(VecF x) { return detail::map(x, [](float v) { return abs(v); }); }
inline VecF flip_sign(VecF v, VecF s) { return detail::zip(v, s, [](float x, float y) { return flip_sign(x, y); }); }
inline VecF round(VecF x) { return detail::map(x, [](float v) { return round(v); }); }
inline VecF floor(VecF x) { return detail::map(x, [](float v) { return floor(v); }); }
inline VecF ceil(VecF x) { return detail::map(x, [](float v) { return ceil(v); }); }
inline VecF trunc(VecF x) { return detail::map(x, [](float v) { return trunc(v); }); }
inline VecF sqrt(VecF x) { return detail::map(x, [](float v) { return sqrt(v); }); }
inline VecF ldexp(VecF x, VecF n) { return detail::zip(x, n, [](float a, float b) { return ldexp(a, b); }); }
inline VecF ldexp_normal(VecF x, VecF n) { return ldexp(x, n); }
inline VecF mantissa(VecF x, VecF& e) {
  for (int i = 0; i < VecF::kLanes; ++i) x.v[i] = mantissa(x.v[i], e.v[i]);
  return x;
}

struct VecD {
  static constexpr int kLanes = 2;
  double v[kLanes];
  VecD() = default;
  VecD(double s) {  // broadcast
    for (double& x : v) x = s;
  }
  static VecD broadcast(double s) { return VecD(s); }
  static VecD load(const double* p) { return load_partial(p, kLanes); }
  void store(double* p) const { store_partial(p, kLanes); }
  static VecD load_partial(const double* p, int n) {
    VecD r(0.0);
    for (int i = 0; i < n; ++i) r.v[i] = p[i];
    return r;
  }
  void store_partial(double* p, int n) const {
    for (int i = 0; i < n; ++i) p[i] = v[i];
  }
};

inline VecD operator+(VecD a, VecD b) { return detail::zip(a, b, [](double x, double y) { return x + y; }); }
inline VecD operator-(VecD a, VecD b) { return detail::zip(a, b, [](double x, double y) { return x - y; }); }
inline VecD operator*(VecD a, VecD b) { return detail::zip(a, b, [](double x, double y) { return x * y; }); }
inline VecD operator/(VecD a, VecD b) { return detail::zip(a, b, [](double x, double y) { return x / y; }); }
inline VecD operator-(VecD a) { return detail::map(a, [](double x) { return -x; }); }
inline VecD fma(VecD a, VecD b, VecD c) {
  for (int i = 0; i < VecD::kLanes; ++i) a.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
  return a;
}
inline VecD max(VecD a, VecD b) { return detail::zip(a, b, [](double x, double y) { return max(x, y); }); }
inline VecD min(VecD a, VecD b) { return detail::zip(a, b, [](double x, double y) { return min(x, y); }); }
inline VecD abs(VecD x) { return detail::map(x, [](double v) { return abs(v); }); }
inline VecD sqrt(VecD x) { return detail::map(x, [](double v) { return sqrt(v); }); }

#endif

// ---------------------------------------------------------------------------
// Written once for every width.
// ---------------------------------------------------------------------------

inline VecF rsqrt(VecF x) { return VecF(1.0f) / sqrt(x); }
inline VecF reciprocal(VecF x) { return VecF(1.0f) / x; }

// f applied to each lane with a scalar function (rare paths: huge sin/cos args).
template <class F>
VecF apply_lanes(VecF x, F f) {
  float lanes[VecF::kLanes];
  x.store(lanes);
  for (float& v : lanes) v = f(v);
  return VecF::load(lanes);
}

inline VecF& operator+=(VecF& a, VecF b) { return a = a + b; }
inline VecF& operator-=(VecF& a, VecF b) { return a = a - b; }
inline VecF& operator*=(VecF& a, VecF b) { return a = a * b; }
inline VecF& operator/=(VecF& a, VecF b) { return a = a / b; }
inline VecD& operator+=(VecD& a, VecD b) { return a = a + b; }
inline VecD& operator-=(VecD& a, VecD b) { return a = a - b; }
inline VecD& operator*=(VecD& a, VecD b) { return a = a * b; }
inline VecD& operator/=(VecD& a, VecD b) { return a = a / b; }

// The lane types the vec_math.h templates accept.
template <class V>
concept FloatLanes = std::same_as<V, float> || std::same_as<V, VecF>;

}  // namespace ember::cpu::vec
