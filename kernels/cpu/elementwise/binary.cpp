// Binary elementwise ops on CPU: arithmetic, comparisons, logical ops, where,
// atan2, logaddexp, and lerp (three operands).
// A functional op and its in-place form share one body: the in-place form
// passes self as the iterator's output.
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/int_division.h"
#include "core/op_decls.h"
#include "core/scalar_convert.h"
#include "kernels/cpu/elementwise/loops.h"

namespace ember {
namespace {

// out = f(a, b) in the common dtype T; f is made by make_op<opmath_t<T>>().
// f16/bf16 compute in float and round once on store.
template <class MakeOp>
Tensor binary_arith(const char* name, const Tensor& out, const Tensor& a, const Tensor& b, MakeOp make_op) {
  TensorIterator it = TensorIterator::binary(name, out, a, b);
  dispatch_dtype(it.common_dtype(), name, [&]<class T>() {
    auto f = make_op.template operator()<opmath_t<T>>();
    if constexpr (std::is_same_v<T, opmath_t<T>>) {
      cpu::cpu_kernel(it, [f](T x, T y) -> T { return f(x, y); });
    } else {
      cpu::cpu_kernel(it, [f](T x, T y) -> T { return T(f(static_cast<float>(x), static_cast<float>(y))); });
    }
  });
  it.finish();
  if (out.defined()) bump_version(out);
  return it.output();
}

// out = pred(a, b) as bool, comparing in the common dtype.
template <class Pred>
Tensor compare(const char* name, const Tensor& a, const Tensor& b, Pred pred) {
  TensorIterator::Config c;
  c.name(name).input(a).input(b);
  c.output_dtype = DType::Bool;
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_dtype(it.common_dtype(), name, [&]<class T>() {
    using M = opmath_t<T>;
    cpu::cpu_kernel(it, [pred](T x, T y) -> bool { return pred(static_cast<M>(x), static_cast<M>(y)); });
  });
  return it.output();
}

// out = f(bool(a), bool(b)) for inputs of any dtype.
template <class F>
Tensor logical(const char* name, const Tensor& a, const Tensor& b, F f) {
  TensorIterator::Config c;
  c.name(name).input(a).input(b);
  c.common_dtype = DType::Bool;
  TensorIterator it = TensorIterator::build(std::move(c));
  cpu::cpu_kernel(it, [f](bool x, bool y) -> bool { return f(x, y); });
  return it.output();
}

// Python's %: the result has the divisor's sign. Integers go through
// core/int_division.h, so MIN % -1 is 0, not a trap (Note [Integer division overflow]).
template <class T>
T floor_mod(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<T>(a % b);
  } else if constexpr (std::is_integral_v<T>) {
    return int_mod_floor(a, b);
  } else {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

void check_int_divisor(const char* name, const Tensor& b) {
  if (is_integral(b.dtype(), true)) {
    EMBER_CHECK(!op::eq.call(b, wrap_scalar(0)).any().item<bool>(), name, ": integer division by zero");
  }
}

Tensor add_impl(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha, bool subtract) {
  const char* name = subtract ? "sub" : "add";
  EMBER_CHECK(!(subtract && a.dtype() == DType::Bool && b.dtype() == DType::Bool), name,
              ": subtracting two bool tensors is not supported; use logical_xor");
  return binary_arith(name, out, a, b, [&]<class T>() {
    // An integer alpha must fit the dtype, as in PyTorch (Note [Scalar to dtype conversion]).
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) check_scalar_fits(alpha, dtype_v<T>, name);
    T s = alpha.to<T>();
    if (subtract) {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) s = static_cast<T>(-alpha.to<int64_t>());
      else s = -s;
    }
    if constexpr (std::is_same_v<T, bool>) {
      return [s](T x, T y) -> T { return x || (s && y); };
    } else if constexpr (std::is_integral_v<T>) {  // wraps on overflow, as PyTorch (signed overflow is UB)
      using U = std::make_unsigned_t<T>;
      return [s](T x, T y) -> T { return static_cast<T>(U(x) + U(U(s) * U(y))); };
    } else {
      return [s](T x, T y) -> T { return x + s * y; };
    }
  });
}

Tensor mul_impl(const Tensor& out, const Tensor& a, const Tensor& b) {
  return binary_arith("mul", out, a, b, []<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      return [](T x, T y) -> T { return x && y; };
    } else if constexpr (std::is_integral_v<T>) {  // wraps on overflow, as PyTorch
      using U = std::make_unsigned_t<T>;
      return [](T x, T y) -> T { return static_cast<T>(U(x) * U(y)); };
    } else {
      return [](T x, T y) -> T { return x * y; };
    }
  });
}

// True division: integer inputs give float32, as in PyTorch.
Tensor div_impl(const Tensor& out, const Tensor& a, const Tensor& b) {
  TensorIterator::Config c;
  c.name("div").output(out).input(a).input(b);
  c.int_to_float = true;
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_floating(it.common_dtype(), "div", [&]<class T>() {
    cpu::cpu_kernel(it, [](T x, T y) -> T { return T(static_cast<opmath_t<T>>(x) / static_cast<opmath_t<T>>(y)); });
  });
  it.finish();
  if (out.defined()) bump_version(out);
  return it.output();
}

// Division rounded toward zero ("trunc") or toward -inf ("floor"), in the
// common dtype (integers stay integers, as in PyTorch).
Tensor div_mode_cpu(const Tensor& a, const Tensor& b, std::string_view mode) {
  EMBER_CHECK(mode == "trunc" || mode == "floor", "div: rounding_mode must be 'trunc' or 'floor', got '", mode, "'");
  check_int_divisor("div", b);
  const bool floor_mode = mode == "floor";
  return binary_arith("div", Tensor(), a, b, [floor_mode]<class T>() {
    return [floor_mode](T x, T y) -> T {
      if constexpr (std::is_same_v<T, bool>) {
        (void)floor_mode;
        return x;  // y is true: x / 1
      } else if constexpr (std::is_integral_v<T>) {
        return floor_mode ? int_div_floor(x, y) : int_div_trunc(x, y);  // MIN / -1 wraps, no trap
      } else if (!floor_mode) {
        return std::trunc(x / y);
      } else {
        if (y == 0) return x / y;
        // Floor of the exact quotient: from fmod, so a/b rounding up to an integer does not overshoot.
        const T mod = std::fmod(x, y);
        T div = (x - mod) / y;
        if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1;
        if (div == 0) return std::copysign(T(0), x / y);
        T floored = std::floor(div);
        if (div - floored > T(0.5)) floored += 1;
        return floored;
      }
    };
  });
}

template <class T>
T int_pow(T base, T exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exp % 2 == 0) ? 1 : -1;
    return 0;
  }
  // Products wrap (in an unsigned type, where overflow is defined) instead of overflowing.
  using U = std::conditional_t<sizeof(T) <= sizeof(unsigned), unsigned, unsigned long long>;
  U result = 1, b = static_cast<U>(base);
  while (exp) {
    if (exp & 1) result *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<T>(result);
}

Tensor pow_impl(const Tensor& out, const Tensor& a, const Tensor& b) {
  return binary_arith("pow", out, a, b, []<class T>() {
    if constexpr (std::is_same_v<T, bool>) return [](T x, T y) -> T { return x || !y; };
    else if constexpr (std::is_integral_v<T>) return [](T x, T y) -> T { return int_pow(x, y); };
    else return [](T x, T y) -> T { return std::pow(x, y); };
  });
}

Tensor add_cpu(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_impl(Tensor(), a, b, alpha, false); }
Tensor add__cpu(const Tensor& s, const Tensor& b, const Scalar& alpha) { return add_impl(s, s, b, alpha, false); }
Tensor sub_cpu(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_impl(Tensor(), a, b, alpha, true); }
Tensor sub__cpu(const Tensor& s, const Tensor& b, const Scalar& alpha) { return add_impl(s, s, b, alpha, true); }
Tensor mul_cpu(const Tensor& a, const Tensor& b) { return mul_impl(Tensor(), a, b); }
Tensor mul__cpu(const Tensor& s, const Tensor& b) { return mul_impl(s, s, b); }
Tensor div_cpu(const Tensor& a, const Tensor& b) { return div_impl(Tensor(), a, b); }
Tensor div__cpu(const Tensor& s, const Tensor& b) { return div_impl(s, s, b); }
Tensor pow_cpu(const Tensor& a, const Tensor& b) { return pow_impl(Tensor(), a, b); }
Tensor pow__cpu(const Tensor& s, const Tensor& b) { return pow_impl(s, s, b); }

Tensor maximum_cpu(const Tensor& a, const Tensor& b) {
  return binary_arith("maximum", Tensor(), a, b, []<class T>() {
    if constexpr (std::is_floating_point_v<T>)
      return [](T x, T y) -> T { return (std::isnan(x) || std::isnan(y)) ? x + y : (x > y ? x : y); };
    else return [](T x, T y) -> T { return x > y ? x : y; };
  });
}

Tensor minimum_cpu(const Tensor& a, const Tensor& b) {
  return binary_arith("minimum", Tensor(), a, b, []<class T>() {
    if constexpr (std::is_floating_point_v<T>)
      return [](T x, T y) -> T { return (std::isnan(x) || std::isnan(y)) ? x + y : (x < y ? x : y); };
    else return [](T x, T y) -> T { return x < y ? x : y; };
  });
}

// Python's %: the result has the sign of the divisor.
Tensor remainder_cpu(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(!(a.dtype() == DType::Bool && b.dtype() == DType::Bool), "remainder: not supported for bool tensors");
  check_int_divisor("remainder", b);
  return binary_arith("remainder", Tensor(), a, b, []<class T>() {
    return [](T x, T y) -> T { return floor_mod(x, y); };
  });
}

Tensor eq_cpu(const Tensor& a, const Tensor& b) { return compare("eq", a, b, [](auto x, auto y) { return x == y; }); }
Tensor ne_cpu(const Tensor& a, const Tensor& b) { return compare("ne", a, b, [](auto x, auto y) { return x != y; }); }
Tensor lt_cpu(const Tensor& a, const Tensor& b) { return compare("lt", a, b, [](auto x, auto y) { return x < y; }); }
Tensor le_cpu(const Tensor& a, const Tensor& b) { return compare("le", a, b, [](auto x, auto y) { return x <= y; }); }
Tensor gt_cpu(const Tensor& a, const Tensor& b) { return compare("gt", a, b, [](auto x, auto y) { return x > y; }); }
Tensor ge_cpu(const Tensor& a, const Tensor& b) { return compare("ge", a, b, [](auto x, auto y) { return x >= y; }); }

Tensor logical_and_cpu(const Tensor& a, const Tensor& b) {
  return logical("logical_and", a, b, [](bool x, bool y) { return x && y; });
}
Tensor logical_or_cpu(const Tensor& a, const Tensor& b) {
  return logical("logical_or", a, b, [](bool x, bool y) { return x || y; });
}
Tensor logical_xor_cpu(const Tensor& a, const Tensor& b) {
  return logical("logical_xor", a, b, [](bool x, bool y) { return x != y; });
}

// k ? x : y without a branch: a random condition (relu's backward is
// where(y > 0, grad, 0)) makes a branch mispredict half the time, and the
// compiler vectorises the masks.
template <class T>
T select(bool k, T x, T y) {
  using Bits = std::conditional_t<sizeof(T) == 1, uint8_t,
               std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(Bits) == sizeof(T));
  const Bits mask = static_cast<Bits>(-static_cast<Bits>(k));
  return std::bit_cast<T>(static_cast<Bits>((std::bit_cast<Bits>(x) & mask) | (std::bit_cast<Bits>(y) & ~mask)));
}

Tensor where_cpu(const Tensor& cond, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(cond.dtype() == DType::Bool, "where: expected a bool condition, got ", cond.dtype());
  ResultTypeState state;
  state.update(a);
  state.update(b);
  const DType common = state.result();
  TensorIterator::Config c;
  c.name("where").input(cond).input(a.dtype() == common ? a : a.to(common)).input(b.dtype() == common ? b : b.to(common));
  c.promote_inputs = false;
  c.common_dtype = common;
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_dtype(common, "where", [&]<class T>() {
    cpu::cpu_kernel(it, [](bool k, T x, T y) -> T { return select(k, x, y); });
  });
  return it.output();
}

// out = f(a, b) for floating results: integer inputs become float32 (as div),
// f16/bf16 compute in float and round once.
template <class F>
Tensor floating_binary(const char* name, const Tensor& out, const Tensor& a, const Tensor& b, F f) {
  TensorIterator::Config c;
  c.name(name).output(out).input(a).input(b);
  c.int_to_float = true;
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_floating(it.common_dtype(), name, [&]<class T>() {
    using M = opmath_t<T>;
    cpu::cpu_kernel(it, [f](T x, T y) -> T { return T(f(static_cast<M>(x), static_cast<M>(y))); });
  });
  it.finish();
  if (out.defined()) bump_version(out);
  return it.output();
}

Tensor atan2_impl(const Tensor& out, const Tensor& a, const Tensor& b) {
  return floating_binary("atan2", out, a, b, [](auto y, auto x) { return std::atan2(y, x); });
}
Tensor atan2_cpu(const Tensor& a, const Tensor& b) { return atan2_impl(Tensor(), a, b); }
Tensor atan2__cpu(const Tensor& s, const Tensor& b) { return atan2_impl(s, s, b); }

// max + log1p(exp(-|a - b|)); equal infinities give themselves (inf - inf would be NaN).
Tensor logaddexp_cpu(const Tensor& a, const Tensor& b) {
  return floating_binary("logaddexp", Tensor(), a, b, [](auto x, auto y) {
    if (std::isnan(x) || std::isnan(y)) return x + y;
    if (std::isinf(x) && x == y) return x;
    return std::max(x, y) + std::log1p(std::exp(-std::fabs(x - y)));
  });
}

// self + w (end - self) for |w| < 0.5, else end - (end - self)(1 - w), as
// PyTorch: either form is exact at its own end (w = 0 gives self, w = 1 end).
Tensor lerp_impl(const Tensor& out, const Tensor& self, const Tensor& end, const Tensor& weight) {
  const char* name = out.defined() ? "lerp_" : "lerp";
  EMBER_CHECK(end.dtype() == self.dtype(), name, ": expected end of self's dtype ", self.dtype(), ", got ",
              end.dtype());
  EMBER_CHECK(weight.impl()->is_wrapped_number() || weight.dtype() == self.dtype(), name,
              ": expected a weight of self's dtype ", self.dtype(), ", got ", weight.dtype());
  TensorIterator::Config c;
  c.name(name).output(out).input(self).input(end).input(weight);
  c.common_dtype = self.dtype();
  TensorIterator it = TensorIterator::build(std::move(c));
  dispatch_floating(self.dtype(), name, [&]<class T>() {
    using M = opmath_t<T>;
    cpu::cpu_kernel(it, [](T a, T b, T w) -> T {
      const M x = static_cast<M>(a), y = static_cast<M>(b), t = static_cast<M>(w);
      return T(std::fabs(t) < M(0.5) ? x + t * (y - x) : y - (y - x) * (M(1) - t));
    });
  });
  it.finish();
  if (out.defined()) bump_version(out);
  return it.output();
}
Tensor lerp_cpu(const Tensor& s, const Tensor& e, const Tensor& w) { return lerp_impl(Tensor(), s, e, w); }
Tensor lerp__cpu(const Tensor& s, const Tensor& e, const Tensor& w) { return lerp_impl(s, s, e, w); }

}  // namespace

void register_cpu_binary_kernels() {
  op::add.impl(DispatchKey::CPU, kAllDTypes, &add_cpu, "cpu::add");
  op::add_.impl(DispatchKey::CPU, kAllDTypes, &add__cpu, "cpu::add_");
  op::sub.impl(DispatchKey::CPU, kNumericDTypes, &sub_cpu, "cpu::sub");
  op::sub_.impl(DispatchKey::CPU, kNumericDTypes, &sub__cpu, "cpu::sub_");
  op::mul.impl(DispatchKey::CPU, kAllDTypes, &mul_cpu, "cpu::mul");
  op::mul_.impl(DispatchKey::CPU, kAllDTypes, &mul__cpu, "cpu::mul_");
  op::div.impl(DispatchKey::CPU, kAllDTypes, &div_cpu, "cpu::div");
  op::div_.impl(DispatchKey::CPU, kAllDTypes, &div__cpu, "cpu::div_");
  op::div_mode.impl(DispatchKey::CPU, kNumericDTypes, &div_mode_cpu, "cpu::div_mode");
  op::pow.impl(DispatchKey::CPU, kAllDTypes, &pow_cpu, "cpu::pow");
  op::pow_.impl(DispatchKey::CPU, kAllDTypes, &pow__cpu, "cpu::pow_");
  op::maximum.impl(DispatchKey::CPU, kAllDTypes, &maximum_cpu, "cpu::maximum");
  op::minimum.impl(DispatchKey::CPU, kAllDTypes, &minimum_cpu, "cpu::minimum");
  op::remainder.impl(DispatchKey::CPU, kNumericDTypes, &remainder_cpu, "cpu::remainder");
  op::eq.impl(DispatchKey::CPU, kAllDTypes, &eq_cpu, "cpu::eq");
  op::ne.impl(DispatchKey::CPU, kAllDTypes, &ne_cpu, "cpu::ne");
  op::lt.impl(DispatchKey::CPU, kAllDTypes, &lt_cpu, "cpu::lt");
  op::le.impl(DispatchKey::CPU, kAllDTypes, &le_cpu, "cpu::le");
  op::gt.impl(DispatchKey::CPU, kAllDTypes, &gt_cpu, "cpu::gt");
  op::ge.impl(DispatchKey::CPU, kAllDTypes, &ge_cpu, "cpu::ge");
  op::logical_and.impl(DispatchKey::CPU, kAllDTypes, &logical_and_cpu, "cpu::logical_and");
  op::logical_or.impl(DispatchKey::CPU, kAllDTypes, &logical_or_cpu, "cpu::logical_or");
  op::logical_xor.impl(DispatchKey::CPU, kAllDTypes, &logical_xor_cpu, "cpu::logical_xor");
  op::where.impl(DispatchKey::CPU, kAllDTypes, &where_cpu, "cpu::where");
  op::atan2.impl(DispatchKey::CPU, kAllDTypes, &atan2_cpu, "cpu::atan2");
  op::atan2_.impl(DispatchKey::CPU, kAllDTypes, &atan2__cpu, "cpu::atan2_");
  op::logaddexp.impl(DispatchKey::CPU, kFloatingDTypes, &logaddexp_cpu, "cpu::logaddexp");
  op::lerp.impl(DispatchKey::CPU, kFloatingDTypes, &lerp_cpu, "cpu::lerp");
  op::lerp_.impl(DispatchKey::CPU, kFloatingDTypes, &lerp__cpu, "cpu::lerp_");
}

}  // namespace ember
