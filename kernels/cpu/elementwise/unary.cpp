// Unary elementwise ops on CPU, plus clamp and masked_fill.
//
// Floating-point math (exp, log, tanh, erf, gelu, ...) is written once in
// kernels/cpu/vec/vec_math.h as a template over vec::VecF lanes and plain float,
// so contiguous float32 runs go through the SIMD form and strided runs through
// the scalar form of the same algorithm. float64 uses the C library; f16/bf16
// compute in float. Integer inputs of the floating ops are promoted to
// float32, as in PyTorch (exp(int) is float).
#include <cmath>
#include <type_traits>

#include "core/memory_overlap.h"
#include "core/op_decls.h"
#include "core/scalar_convert.h"
#include "kernels/cpu/elementwise/loops.h"
#include "kernels/cpu/vec/vec_math.h"

namespace ember {
namespace {

namespace vec = cpu::vec;

Tensor finish(TensorIterator& it, const Tensor& out) {
  it.finish();
  if (out.defined()) bump_version(out);
  return it.output();
}

// out = f(self) in floating point; `vf` takes float (and VecF when the op has
// a lane form), `df` takes double.
template <class VF, class DF>
Tensor float_unary(const char* name, const Tensor& out, const Tensor& self, VF vf, DF df) {
  TensorIterator::Config c;
  c.name(name).output(out).input(self);
  c.int_to_float = true;
  TensorIterator it = TensorIterator::build(std::move(c));
  switch (it.common_dtype()) {
    case DType::Float32:
      if constexpr (std::is_invocable_v<VF, vec::VecF>) {
        cpu::cpu_kernel_vec(it, [vf](float x) -> float { return vf(x); }, [vf](vec::VecF x) { return vf(x); });
      } else {  // no lane form in vec_math.h: the scalar function on every element
        cpu::cpu_kernel(it, [vf](float x) -> float { return vf(x); });
      }
      break;
    case DType::Float64:
      cpu::cpu_kernel(it, [df](double x) -> double { return df(x); });
      break;
    case DType::Float16:
      cpu::cpu_kernel(it, [vf](Half x) -> Half { return Half(vf(static_cast<float>(x))); });
      break;
    case DType::BFloat16:
      cpu::cpu_kernel(it, [vf](BFloat16 x) -> BFloat16 { return BFloat16(vf(static_cast<float>(x))); });
      break;
    default:
      EMBER_FAIL(name, ": unexpected dtype ", it.common_dtype());
  }
  return finish(it, out);
}

// out = f(self) keeping the dtype; `f` is generic over the element's math type
// and lane type (float32 runs use VecF).
template <class F>
Tensor same_dtype_unary(const char* name, const Tensor& out, const Tensor& self, bool allow_bool, F f) {
  EMBER_CHECK(allow_bool || self.dtype() != DType::Bool, name, ": not supported for bool tensors");
  TensorIterator it = TensorIterator::unary(name, out, self);
  dispatch_dtype(it.common_dtype(), name, [&]<class T>() {
    if constexpr (std::is_same_v<T, float>) {
      cpu::cpu_kernel_vec(it, [f](float x) -> float { return f(x); }, [f](vec::VecF x) { return f(x); });
    } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      cpu::cpu_kernel(it, [f](T x) -> T { return T(f(static_cast<float>(x))); });
    } else {
      cpu::cpu_kernel(it, [f](T x) -> T { return static_cast<T>(f(x)); });
    }
  });
  return finish(it, out);
}

// Rounding ops leave integers unchanged; `f` rounds float or VecF, `df` double.
template <class F, class DF>
Tensor rounding_unary(const char* name, const Tensor& out, const Tensor& self, F f, DF df) {
  return same_dtype_unary(name, out, self, true, [f, df](auto x) {
    using X = decltype(x);
    if constexpr (std::is_integral_v<X>) return x;
    else if constexpr (std::is_same_v<X, double>) return df(x);
    else return f(x);
  });
}

// ---- the ops, each as (out, self) so the functional and in-place forms share it ----

#define EMBER_FLOAT_OP(name, vec_expr, double_expr)                                                  \
  Tensor name##_impl(const Tensor& out, const Tensor& self) {                                        \
    return float_unary(#name, out, self, [](auto x) { return vec_expr; }, [](double x) { return double_expr; }); \
  }

EMBER_FLOAT_OP(exp, vec::exp(x), std::exp(x))
EMBER_FLOAT_OP(exp2, vec::exp2(x), std::exp2(x))
EMBER_FLOAT_OP(log, vec::log(x), std::log(x))
EMBER_FLOAT_OP(log2, vec::log2(x), std::log2(x))
EMBER_FLOAT_OP(log1p, vec::log1p(x), std::log1p(x))
EMBER_FLOAT_OP(expm1, vec::expm1(x), std::expm1(x))
EMBER_FLOAT_OP(sqrt, vec::sqrt(x), std::sqrt(x))
EMBER_FLOAT_OP(rsqrt, vec::rsqrt(x), 1.0 / std::sqrt(x))
EMBER_FLOAT_OP(reciprocal, vec::reciprocal(x), 1.0 / x)
EMBER_FLOAT_OP(sin, vec::sin(x), std::sin(x))
EMBER_FLOAT_OP(cos, vec::cos(x), std::cos(x))
EMBER_FLOAT_OP(tan, vec::sin(x) / vec::cos(x), std::tan(x))
EMBER_FLOAT_OP(tanh, vec::tanh(x), std::tanh(x))
EMBER_FLOAT_OP(sigmoid, vec::sigmoid(x), 1.0 / (1.0 + std::exp(-x)))
EMBER_FLOAT_OP(erf, vec::erf(x), std::erf(x))
#undef EMBER_FLOAT_OP

// The inverse and hyperbolic trigonometric functions, through the C library.
#define EMBER_LIBM_OP(name)                                                                   \
  Tensor name##_impl(const Tensor& out, const Tensor& self) {                                 \
    return float_unary(#name, out, self, [](float x) { return std::name(x); },                \
                       [](double x) { return std::name(x); });                                \
  }
EMBER_LIBM_OP(asin)
EMBER_LIBM_OP(acos)
EMBER_LIBM_OP(atan)
EMBER_LIBM_OP(sinh)
EMBER_LIBM_OP(cosh)
EMBER_LIBM_OP(asinh)
EMBER_LIBM_OP(acosh)
EMBER_LIBM_OP(atanh)
#undef EMBER_LIBM_OP

// silu and gelu are defined for floating inputs only, as in PyTorch.
void check_floating(const char* name, const Tensor& self) {
  EMBER_CHECK(is_floating_point(self.dtype()), name, ": expected a floating-point tensor, got ", self.dtype());
}

Tensor silu_impl(const Tensor& out, const Tensor& self) {
  check_floating("silu", self);
  return float_unary("silu", out, self, [](auto x) { return vec::silu(x); },
                     [](double x) { return std::isinf(x) && x < 0 ? -0.0 : x / (1.0 + std::exp(-x)); });
}

Tensor neg_impl(const Tensor& out, const Tensor& self) {
  EMBER_CHECK(self.dtype() != DType::Bool, "neg: negation of a bool tensor is not supported; use logical_not");
  return same_dtype_unary("neg", out, self, false, [](auto x) { return -x; });
}

Tensor abs_impl(const Tensor& out, const Tensor& self) {
  return same_dtype_unary("abs", out, self, true, [](auto x) {
    using X = decltype(x);
    if constexpr (std::is_same_v<X, bool> || std::is_unsigned_v<X>) return x;
    else if constexpr (std::is_integral_v<X>) return x < 0 ? static_cast<X>(-x) : x;
    else return vec::abs(x);
  });
}

// sign(NaN) is 0, as in PyTorch 1.13.
Tensor sign_impl(const Tensor& out, const Tensor& self) {
  return same_dtype_unary("sign", out, self, true, [](auto x) {
    using X = decltype(x);
    if constexpr (std::is_same_v<X, vec::VecF>) {
      const X zero(0.0f);
      return vec::blend(x > zero, X(1.0f), zero) - vec::blend(x < zero, X(1.0f), zero);
    } else if constexpr (std::is_same_v<X, bool> || std::is_unsigned_v<X>) {
      return static_cast<X>(x > X(0));
    } else {
      return static_cast<X>((X(0) < x) - (x < X(0)));
    }
  });
}

Tensor relu_impl(const Tensor& out, const Tensor& self) {
  EMBER_CHECK(self.dtype() != DType::Bool, "relu: not supported for bool tensors");
  return same_dtype_unary("relu", out, self, false, [](auto x) {
    using X = decltype(x);
    if constexpr (std::is_integral_v<X>) return x > X(0) ? x : X(0);
    else return vec::max(x, X(0.0f));
  });
}

Tensor floor_impl(const Tensor& out, const Tensor& self) {
  return rounding_unary("floor", out, self, [](auto x) { return vec::floor(x); }, [](double x) { return std::floor(x); });
}
Tensor ceil_impl(const Tensor& out, const Tensor& self) {
  return rounding_unary("ceil", out, self, [](auto x) { return vec::ceil(x); }, [](double x) { return std::ceil(x); });
}
Tensor trunc_impl(const Tensor& out, const Tensor& self) {
  return rounding_unary("trunc", out, self, [](auto x) { return vec::trunc(x); }, [](double x) { return std::trunc(x); });
}
Tensor round_impl(const Tensor& out, const Tensor& self) {
  return rounding_unary("round", out, self, [](auto x) { return vec::round(x); },
                        [](double x) { return std::nearbyint(x); });
}

#define EMBER_UNARY_KERNELS(name)                                                          \
  Tensor name##_cpu(const Tensor& self) { return name##_impl(Tensor(), self); }             \
  Tensor name##__cpu(const Tensor& self) { return name##_impl(self, self); }
EMBER_UNARY_OPS(EMBER_UNARY_KERNELS)
#undef EMBER_UNARY_KERNELS

// ---- ops with arguments ----

Tensor gelu_cpu(const Tensor& self, std::string_view approximate) {
  check_floating("gelu", self);
  if (approximate == "none") {
    return float_unary("gelu", Tensor(), self, [](auto x) { return vec::gelu_erf(x); },
                       [](double x) { return std::isinf(x) && x < 0 ? -0.0 : 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); });
  }
  EMBER_CHECK(approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  return float_unary("gelu", Tensor(), self, [](auto x) { return vec::gelu_tanh(x); }, [](double x) {
    if (std::isinf(x) && x < 0) return -0.0;
    const double k = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  });
}

// x for beta*x > threshold (linear regime), else log1p(exp(beta*x)) / beta.
Tensor softplus_cpu(const Tensor& self, const Scalar& beta_s, const Scalar& threshold_s) {
  check_floating("softplus", self);
  const double beta = beta_s.to_double(), threshold = threshold_s.to_double();
  if (beta == 1.0 && threshold == 20.0) {
    return float_unary("softplus", Tensor(), self, [](auto x) { return vec::softplus(x); },
                       [](double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); });
  }
  const float bf = static_cast<float>(beta), tf = static_cast<float>(threshold);
  return float_unary(
      "softplus", Tensor(), self,
      [bf, tf](auto x) {
        using X = decltype(x);
        const X bx = x * X(bf);
        return vec::blend(bx > X(tf), x, vec::log1p(vec::exp(bx)) / X(bf));
      },
      [beta, threshold](double x) { return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta; });
}

template <class Pred>
Tensor float_predicate(const char* name, const Tensor& self, Pred pred) {
  TensorIterator::Config c;
  c.name(name).input(self);
  c.output_dtype = DType::Bool;
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_dtype(self.dtype(), name, [&]<class T>() {
    if constexpr (std::is_integral_v<T>) cpu::cpu_kernel(it, [](T) -> bool { return false; });
    else cpu::cpu_kernel(it, [pred](T x) -> bool { return pred(static_cast<opmath_t<T>>(x)); });
  });
  return it.output();
}

Tensor isnan_cpu(const Tensor& self) { return float_predicate("isnan", self, [](auto x) { return std::isnan(x); }); }
Tensor isinf_cpu(const Tensor& self) { return float_predicate("isinf", self, [](auto x) { return std::isinf(x); }); }

Tensor logical_not_cpu(const Tensor& self) {
  TensorIterator::Config c;
  c.name("logical_not").input(self);
  c.common_dtype = DType::Bool;
  TensorIterator it = TensorIterator::build(std::move(c));
  cpu::cpu_kernel(it, [](bool x) -> bool { return !x; });
  return it.output();
}

// clamp(x, lo, hi) = min(max(x, lo), hi); NaN x stays NaN. The result dtype
// follows type promotion with the bounds, as in PyTorch.
Tensor clamp_impl(const Tensor& out, const Tensor& self, const std::optional<Scalar>& lo,
                  const std::optional<Scalar>& hi) {
  EMBER_CHECK(lo || hi, "clamp: at least one of 'min' or 'max' must not be None");
  EMBER_CHECK(self.dtype() != DType::Bool, "clamp: not supported for bool tensors");
  TensorIterator::Config c;
  c.name("clamp").output(out).input(self);
  ResultTypeState state;
  state.update(self);
  if (lo) state.update(*lo);
  if (hi) state.update(*hi);
  c.common_dtype = state.result();
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_dtype(it.common_dtype(), "clamp", [&]<class T>() {
    using M = opmath_t<T>;
    const bool has_lo = lo.has_value(), has_hi = hi.has_value();
    const DType t = it.common_dtype();
    const M l = has_lo ? static_cast<M>(scalar_to<T>(*lo, t, "clamp")) : M(0);
    const M h = has_hi ? static_cast<M>(scalar_to<T>(*hi, t, "clamp")) : M(0);
    cpu::cpu_kernel(it, [=](T v) -> T {
      M x = static_cast<M>(v);
      if constexpr (std::is_floating_point_v<M>) {
        if (std::isnan(x)) return v;
      }
      if (has_lo && x < l) x = l;
      if (has_hi && x > h) x = h;
      return T(x);
    });
  });
  return finish(it, out);
}

Tensor clamp_cpu(const Tensor& self, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  return clamp_impl(Tensor(), self, lo, hi);
}
Tensor clamp__cpu(const Tensor& self, const std::optional<Scalar>& lo, const std::optional<Scalar>& hi) {
  return clamp_impl(self, self, lo, hi);
}

// self[mask] = value, with mask broadcast to self's shape.
Tensor masked_fill__cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  EMBER_CHECK(mask.dtype() == DType::Bool, "masked_fill: expected a bool mask, got ", mask.dtype());
  EMBER_CHECK(broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill") == DimVector(self.sizes()),
              "masked_fill: the mask of shape ", mask.sizes(), " must broadcast to the tensor's shape ", self.sizes());
  // An expanded self is allowed, as in PyTorch (which deprecates it but does
  // not raise); a mask that partially overlaps self is not.
  assert_no_partial_overlap(self, mask, "masked_fill");
  TensorIterator::Config c;
  c.name("masked_fill").output(self).input(self).input(mask);
  c.promote_inputs = false;
  c.check_mem_overlap = false;
  c.common_dtype = self.dtype();
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_dtype(self.dtype(), "masked_fill", [&]<class T>() {
    const T v = scalar_to<T>(value, self.dtype(), "masked_fill");
    cpu::cpu_kernel(it, [v](T x, bool m) -> T { return m ? v : x; });
  });
  bump_version(self);
  return self;
}

Tensor masked_fill_cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill");
  Tensor out = make_empty(shape, self.dtype(), self.device());
  op::copy_.call(out, self, false);
  return masked_fill__cpu(out, mask, value);
}

}  // namespace

void register_cpu_unary_kernels() {
#define EMBER_REGISTER_UNARY(name)                                                  \
  op::name.impl(DispatchKey::CPU, kAllDTypes, &name##_cpu, "cpu::" #name);          \
  op::name##_.impl(DispatchKey::CPU, kAllDTypes, &name##__cpu, "cpu::" #name "_");
  EMBER_UNARY_OPS(EMBER_REGISTER_UNARY)
#undef EMBER_REGISTER_UNARY
  op::gelu.impl(DispatchKey::CPU, kFloatingDTypes, &gelu_cpu, "cpu::gelu");
  op::softplus.impl(DispatchKey::CPU, kFloatingDTypes, &softplus_cpu, "cpu::softplus");
  op::isnan.impl(DispatchKey::CPU, kAllDTypes, &isnan_cpu, "cpu::isnan");
  op::isinf.impl(DispatchKey::CPU, kAllDTypes, &isinf_cpu, "cpu::isinf");
  op::logical_not.impl(DispatchKey::CPU, kAllDTypes, &logical_not_cpu, "cpu::logical_not");
  op::clamp.impl(DispatchKey::CPU, kNumericDTypes, &clamp_cpu, "cpu::clamp");
  op::clamp_.impl(DispatchKey::CPU, kNumericDTypes, &clamp__cpu, "cpu::clamp_");
  op::masked_fill.impl(DispatchKey::CPU, kAllDTypes, &masked_fill_cpu, "cpu::masked_fill");
  op::masked_fill_.impl(DispatchKey::CPU, kAllDTypes, &masked_fill__cpu, "cpu::masked_fill_");
}

}  // namespace ember
