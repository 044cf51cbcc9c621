// Unary elementwise CUDA kernels: the math family (neg ... trunc, gelu,
// softplus), clamp, and isnan/isinf, with PyTorch's semantics: f16/bf16 compute in
// float and round once on store; integer inputs only reach the kinds that
// keep integers (neg, abs, sign, relu), since the op wrappers promote them to
// float32 for the others. One functor per dtype holds every kind (Note [Few
// kernel instantiations] in cuda_kernels.h).
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_loops.cuh"

namespace ember::cuda {
namespace {

// float and double overloads of the CUDA math library (f-suffixed for float).
#define EMBER_MATH_FN(name, f32, f64)                                         \
  __device__ __forceinline__ float name(float x) { return f32(x); }          \
  __device__ __forceinline__ double name(double x) { return f64(x); }
EMBER_MATH_FN(m_exp, expf, exp)
EMBER_MATH_FN(m_exp2, exp2f, exp2)
EMBER_MATH_FN(m_log, logf, log)
EMBER_MATH_FN(m_log2, log2f, log2)
EMBER_MATH_FN(m_log1p, log1pf, log1p)
EMBER_MATH_FN(m_expm1, expm1f, expm1)
EMBER_MATH_FN(m_sqrt, sqrtf, sqrt)
EMBER_MATH_FN(m_sin, sinf, sin)
EMBER_MATH_FN(m_cos, cosf, cos)
EMBER_MATH_FN(m_tan, tanf, tan)
EMBER_MATH_FN(m_asin, asinf, asin)
EMBER_MATH_FN(m_acos, acosf, acos)
EMBER_MATH_FN(m_atan, atanf, atan)
EMBER_MATH_FN(m_sinh, sinhf, sinh)
EMBER_MATH_FN(m_cosh, coshf, cosh)
EMBER_MATH_FN(m_tanh, tanhf, tanh)
EMBER_MATH_FN(m_asinh, asinhf, asinh)
EMBER_MATH_FN(m_acosh, acoshf, acosh)
EMBER_MATH_FN(m_atanh, atanhf, atanh)
EMBER_MATH_FN(m_erf, erff, erf)
EMBER_MATH_FN(m_erfc, erfcf, erfc)
EMBER_MATH_FN(m_floor, floorf, floor)
EMBER_MATH_FN(m_ceil, ceilf, ceil)
EMBER_MATH_FN(m_rint, rintf, rint)  // round half to even, as torch.round
EMBER_MATH_FN(m_trunc, truncf, trunc)
EMBER_MATH_FN(m_fabs, fabsf, fabs)
#undef EMBER_MATH_FN

// 1 / (1 + e^-x) from e^-|x|, which never overflows.
template <class M>
__device__ __forceinline__ M sigmoid(M x) {
  const M e = m_exp(-m_fabs(x));
  return (x >= M(0) ? M(1) : e) / (M(1) + e);
}

// The formulas of the CPU kernels (kernels/cpu/elementwise/unary.cpp, vec_math.h), with
// CUDA's math library underneath: sigmoid from e^-|x|, gelu as x Phi(x) with
// Phi from erfc and tanh-gelu as x sigmoid(2u) (no cancellation for x < 0),
// silu and both gelus -0 at -inf (their limit, where the textbook formula
// gives -inf * 0 = NaN), relu(-0) = +0.
template <class M>
__device__ __forceinline__ M unary_float(UnaryKind kind, M x, M beta, M threshold) {
  constexpr M one = 1, zero = 0, half = 0.5;
  constexpr M neg_inf = -static_cast<M>(INFINITY);
  switch (kind) {
    case UnaryKind::Neg: return -x;
    case UnaryKind::Abs: return m_fabs(x);
    case UnaryKind::Sign: return static_cast<M>((zero < x) - (x < zero));  // NaN -> 0
    case UnaryKind::Exp: return m_exp(x);
    case UnaryKind::Exp2: return m_exp2(x);
    case UnaryKind::Log: return m_log(x);
    case UnaryKind::Log2: return m_log2(x);
    case UnaryKind::Log1p: return m_log1p(x);
    case UnaryKind::Expm1: return m_expm1(x);
    case UnaryKind::Sqrt: return m_sqrt(x);
    case UnaryKind::Rsqrt: return one / m_sqrt(x);
    case UnaryKind::Reciprocal: return one / x;
    case UnaryKind::Sin: return m_sin(x);
    case UnaryKind::Cos: return m_cos(x);
    case UnaryKind::Tan: return m_tan(x);
    case UnaryKind::Asin: return m_asin(x);
    case UnaryKind::Acos: return m_acos(x);
    case UnaryKind::Atan: return m_atan(x);
    case UnaryKind::Sinh: return m_sinh(x);
    case UnaryKind::Cosh: return m_cosh(x);
    case UnaryKind::Tanh: return m_tanh(x);
    case UnaryKind::Asinh: return m_asinh(x);
    case UnaryKind::Acosh: return m_acosh(x);
    case UnaryKind::Atanh: return m_atanh(x);
    case UnaryKind::Sigmoid: return sigmoid(x);
    case UnaryKind::Relu: return x != x ? x : (x > zero ? x : zero);
    case UnaryKind::Silu: return x == neg_inf ? -zero : x * sigmoid(x);
    case UnaryKind::Erf: return m_erf(x);
    case UnaryKind::Floor: return m_floor(x);
    case UnaryKind::Ceil: return m_ceil(x);
    case UnaryKind::Round: return m_rint(x);
    case UnaryKind::Trunc: return m_trunc(x);
    case UnaryKind::GeluErf: {
      constexpr M kSqrtHalf = static_cast<M>(0.70710678118654752440);
      return x == neg_inf ? -zero : half * x * m_erfc(-x * kSqrtHalf);
    }
    case UnaryKind::GeluTanh: {  // 0.5 x (1 + tanh u) = x sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3)
      constexpr M k0 = static_cast<M>(1.59576912160573071176);     // 2 sqrt(2/pi)
      constexpr M k1 = static_cast<M>(0.0713548162726008336574);  // 2 sqrt(2/pi) 0.044715
      return x == neg_inf ? -zero : x * sigmoid(x * (k1 * x * x + k0));
    }
    case UnaryKind::Softplus: {
      const M z = x * beta;
      return z > threshold ? x : m_log1p(m_exp(z)) / beta;
    }
  }
  return x;
}

template <class T>
__device__ __forceinline__ bool negative(T x) {
  if constexpr (std::is_signed_v<T>) return x < T(0);
  else return false;
}

// The same for float64, compiled once and called rather than inlined into
// every kernel: double math is large, and rare on GPUs.
__device__ __noinline__ double unary_double(UnaryKind kind, double x, double beta, double threshold) {
  return unary_float<double>(kind, x, beta, threshold);
}

template <class T>
__device__ __forceinline__ T unary_int(UnaryKind kind, T x) {
  switch (kind) {
    case UnaryKind::Neg: return static_cast<T>(-x);
    case UnaryKind::Abs: return negative(x) ? static_cast<T>(-x) : x;
    case UnaryKind::Sign: return static_cast<T>((T(0) < x) - negative(x));
    default: return negative(x) ? T(0) : x;  // Relu
  }
}

template <class M>
__device__ __forceinline__ bool is_nan(M x) {
  if constexpr (std::is_floating_point_v<M>) return x != x;
  else return false;
}

// One functor per dtype for the whole family, and clamp: min(max(x, lo), hi)
// with NaN propagating from x and from the bounds (as PyTorch).
template <class T>
struct UnaryOp {
  using M = opmath_t<T>;
  UnaryKind kind;
  bool clamp, has_lo, has_hi;
  M p0, p1;  // softplus: beta, threshold; clamp: lo, hi
  __device__ T operator()(T a) const {
    if (clamp) {
      M x = up(a);
      if (has_lo) x = (x < p0 || is_nan(p0)) ? p0 : x;
      if (has_hi) x = (x > p1 || is_nan(p1)) ? p1 : x;
      return down<T>(x);
    }
    if constexpr (std::is_same_v<T, double>) return unary_double(kind, a, p0, p1);
    else if constexpr (is_floating_v<T>) return down<T>(unary_float<M>(kind, up(a), p0, p1));
    else return unary_int(kind, a);
  }
};

template <class T>
struct FloatClassOp {
  bool inf;
  __device__ bool operator()(T a) const {
    const opmath_t<T> x = up(a);
    return inf ? isinf(x) : x != x;
  }
};

}  // namespace

void launch_unary(UnaryKind kind, const ElementwiseArgs& a, double beta, double threshold) {
  dispatch_device_dtype(a.dtypes[0], "unary", [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      EMBER_FAIL("unary: no bool kernel (the op wrapper handles bool inputs)");
    } else {
      using M = opmath_t<T>;
      launch_elementwise(a, UnaryOp<T>{kind, false, false, false, static_cast<M>(beta), static_cast<M>(threshold)},
                         "unary");
    }
  });
}

void launch_clamp(const ElementwiseArgs& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  dispatch_device_dtype(a.dtypes[0], "clamp", [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      EMBER_FAIL("clamp: not supported for bool tensors");
    } else {
      using M = opmath_t<T>;
      const UnaryOp<T> op{UnaryKind::Neg, true, min.has_value(), max.has_value(), min ? min->to<M>() : M{},
                          max ? max->to<M>() : M{}};
      launch_elementwise(a, op, "clamp");
    }
  });
}

void launch_float_class(const ElementwiseArgs& a, bool inf) {
  dispatch_device_floating(a.dtypes[1], inf ? "isinf" : "isnan", [&]<class T>() {
    launch_elementwise(a, FloatClassOp<T>{inf}, inf ? "isinf" : "isnan");
  });
}

}  // namespace ember::cuda
