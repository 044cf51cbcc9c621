// Binary elementwise CUDA kernels: arithmetic (with pow), comparisons,
// logical ops and where. Each functor mirrors the CPU kernel of the same op
// (kernels/cpu/elementwise/binary.cpp): same formulas, f16/bf16 computed in float and
// rounded once on store. Functors are shared across ops per Note [Few kernel
// instantiations] in cuda_kernels.h.
#include "core/int_division.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_loops.cuh"

namespace ember::cuda {
namespace {

template <class M>
__device__ __forceinline__ bool is_nan(M x) {
  if constexpr (std::is_floating_point_v<M>) return x != x;
  else return false;
}

// Python's %: the result takes the divisor's sign (fmod for floats). Integers
// share the CPU's helper (core/int_division.h): MIN % -1 is 0.
template <class M>
__device__ __forceinline__ M floor_mod(M a, M b) {
  if constexpr (std::is_integral_v<M>) {
    return int_mod_floor(a, b);
  } else {
    M r;
    if constexpr (std::is_same_v<M, float>) r = fmodf(a, b);
    else r = fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<M>(r + b);
    return r;
  }
}

// Integer power by squaring; negative exponents give 0 except for bases 1 and -1.
template <class T>
__device__ __forceinline__ T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  // Products wrap (in an unsigned type, where overflow is defined) instead of overflowing, as on the CPU.
  using U = std::conditional_t<sizeof(T) <= sizeof(unsigned), unsigned, unsigned long long>;
  U result = 1, b = static_cast<U>(base);
  while (exp) {
    if (exp & 1) result *= b;
    b *= b;
    exp = static_cast<T>(exp >> 1);
  }
  return static_cast<T>(result);
}

// Called, not inlined into every kernel: double pow is large (and rare on GPUs).
__device__ __noinline__ double pow_double(double x, double y) { return pow(x, y); }

// (out, a, b) all of dtype T.
template <class T>
struct BinaryOp {
  using M = opmath_t<T>;
  BinaryKind kind;
  M alpha;
  __device__ T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) {
      switch (kind) {
        case BinaryKind::Add: return a || (alpha && b);
        case BinaryKind::Mul: return a && b;
        case BinaryKind::Maximum: return a || b;
        case BinaryKind::Pow: return a || !b;
        default: return a && b;  // Minimum (Div and Remainder never see bool)
      }
    } else {
      const M x = up(a), y = up(b);
      M r;
      switch (kind) {
        case BinaryKind::Add: r = static_cast<M>(x + alpha * y); break;
        case BinaryKind::Mul: r = static_cast<M>(x * y); break;
        case BinaryKind::Div:
          if constexpr (std::is_integral_v<M>) r = int_div_trunc(x, y);  // MIN / -1 wraps, no trap
          else r = static_cast<M>(x / y);
          break;
        case BinaryKind::Maximum: r = (is_nan(x) || is_nan(y)) ? static_cast<M>(x + y) : (x > y ? x : y); break;
        case BinaryKind::Minimum: r = (is_nan(x) || is_nan(y)) ? static_cast<M>(x + y) : (x < y ? x : y); break;
        case BinaryKind::ThresholdBackward: r = y > alpha ? x : M(0); break;
        case BinaryKind::Pow:
          if constexpr (std::is_integral_v<M>) r = int_pow(x, y);
          else if constexpr (std::is_same_v<M, float>) r = powf(x, y);
          else r = pow_double(x, y);
          break;
        default: r = floor_mod(x, y); break;  // Remainder
      }
      return down<T>(r);
    }
  }
};

// bool out; inputs in T, compared in opmath_t<T>.
template <class T>
struct CompareOp {
  CompareKind kind;
  __device__ bool operator()(T a, T b) const {
    const opmath_t<T> x = up(a), y = up(b);
    switch (kind) {
      case CompareKind::Eq: return x == y;
      case CompareKind::Ne: return x != y;
      case CompareKind::Lt: return x < y;
      case CompareKind::Le: return x <= y;
      case CompareKind::Gt: return x > y;
      default: return x >= y;
    }
  }
};

struct LogicalOp {
  LogicalKind kind;
  __device__ bool operator()(bool a, bool b) const {
    switch (kind) {
      case LogicalKind::And: return a && b;
      case LogicalKind::Or: return a || b;
      default: return a != b;
    }
  }
};

struct LogicalNotOp {
  __device__ bool operator()(bool a) const { return !a; }
};

// Moves bits: U is an unsigned integer of the dtype's size.
template <class U>
struct WhereOp {
  __device__ U operator()(bool c, U a, U b) const { return c ? a : b; }
};

template <class M>
M scalar_to(const Scalar& s) {
  return s.to<M>();
}

}  // namespace

void launch_binary(BinaryKind kind, const ElementwiseArgs& a, const Scalar& alpha) {
  dispatch_device_dtype(a.dtypes[0], "binary", [&]<class T>() {
    using M = opmath_t<T>;
    M s{};
    if (kind == BinaryKind::Add || kind == BinaryKind::ThresholdBackward) s = scalar_to<M>(alpha);
    launch_elementwise(a, BinaryOp<T>{kind, s}, "binary");
  });
}

void launch_compare(CompareKind kind, const ElementwiseArgs& a) {
  dispatch_device_dtype(a.dtypes[1], "compare", [&]<class T>() {
    launch_elementwise(a, CompareOp<T>{kind}, "compare");
  });
}

void launch_logical(LogicalKind kind, const ElementwiseArgs& a) {
  if (kind == LogicalKind::Not) launch_elementwise(a, LogicalNotOp{}, "logical_not");
  else launch_elementwise(a, LogicalOp{kind}, "logical");
}

void launch_where(const ElementwiseArgs& a) {
  switch (element_size(a.dtypes[0])) {
    case 1: launch_elementwise(a, WhereOp<uint8_t>{}, "where"); break;
    case 2: launch_elementwise(a, WhereOp<uint16_t>{}, "where"); break;
    case 4: launch_elementwise(a, WhereOp<uint32_t>{}, "where"); break;
    default: launch_elementwise(a, WhereOp<uint64_t>{}, "where"); break;
  }
}

}  // namespace ember::cuda
