// Integer division and modulo without a trap: one definition for the CPU
// kernels and the CUDA device code (kernels/cuda/cuda_binary.cu).
//
// Note [Integer division overflow]
// For a signed type, MIN / -1 is the one quotient that does not fit (it
// would be -MIN = MAX + 1): C++ leaves it undefined and x86's idiv raises
// SIGFPE, which kills the process. ember defines it as the wrapped result,
// what two's complement arithmetic gives and what PyTorch gives for int8
// (int64 and int32 trap in PyTorch 1.13 too): MIN / -1 = MIN and
// MIN % -1 = 0, for trunc and floor division and for Python's % alike.
// x / -1 is computed as a wrapping negation, so no division by -1 ever runs.
// Division by zero is checked before the kernel runs (an ember::Error).
#pragma once

#include <type_traits>

#include "core/host_device.h"

namespace ember {

// x / y rounded toward zero; y != 0.
template <class T>
EMBER_HOST_DEVICE inline T int_div_trunc(T x, T y) {
  static_assert(std::is_integral_v<T>, "int_div_trunc: T is an integer type");
  if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    if (y == T(-1)) return static_cast<T>(U(0) - static_cast<U>(x));  // wraps: MIN / -1 = MIN
  }
  return static_cast<T>(x / y);
}

// x - y * trunc(x / y) (C's %, the sign of x); y != 0.
template <class T>
EMBER_HOST_DEVICE inline T int_mod_trunc(T x, T y) {
  static_assert(std::is_integral_v<T>, "int_mod_trunc: T is an integer type");
  if constexpr (std::is_signed_v<T>) {
    if (y == T(-1)) return T(0);  // MIN % -1 would trap
  }
  return static_cast<T>(x % y);
}

// x / y rounded toward -inf (Python's //); y != 0.
template <class T>
EMBER_HOST_DEVICE inline T int_div_floor(T x, T y) {
  T q = int_div_trunc(x, y);
  if constexpr (std::is_signed_v<T>) {
    if (int_mod_trunc(x, y) != 0 && ((x < 0) != (y < 0))) q = static_cast<T>(q - 1);
  }
  return q;
}

// x - y * floor(x / y) (Python's %, the sign of y); y != 0.
template <class T>
EMBER_HOST_DEVICE inline T int_mod_floor(T x, T y) {
  T r = int_mod_trunc(x, y);
  if constexpr (std::is_signed_v<T>) {
    if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
  }
  return r;
}

}  // namespace ember
