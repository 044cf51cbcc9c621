// Floating-point to integer element conversion: one rule for the CPU kernels
// and the CUDA device code (kernels/cuda/cuda_loops.cuh includes this file).
//
// Note [Float to integer conversion]
// C++ leaves static_cast<int>(x) undefined for NaN and for x beyond the
// target's range, and the hardware answers differ (x86 gives INT_MIN, CUDA
// saturates), so ember defines the result of every float -> integer element
// conversion (copy_, to(), an in-place op's copy back):
//  - to int32 / int64: truncate toward zero; NaN -> 0; values beyond the
//    range (±inf included) saturate to the type's min / max.
//  - to uint8: the int64 result above, wrapped modulo 256, so -1.0 -> 255 as
//    in PyTorch and NumPy (and NaN -> 0, +inf -> 255, -inf -> 0).
//  - to bool: x != 0 (NaN -> true); not handled here.
// In range this is what C++ (and PyTorch) give; the rule only names the
// cases that are undefined there. Float16 and bfloat16 convert through
// float, which holds them exactly.
//
// The code is branch-free and never converts a value out of range: the value
// is clamped in the floating type first (NaN to 0, below the minimum to the
// minimum, which is a power of two and exact), and a value at or above 2^(bits-1) is
// replaced by the maximum after the conversion. A loop over it vectorises
// like a plain cast does. Only plain comparisons and casts: nvcc compiles it
// for the device without --expt-relaxed-constexpr.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/host_device.h"

namespace ember {

// F is float or double; I is int32_t, int64_t or uint8_t.
template <class I, class F>
EMBER_HOST_DEVICE inline I float_to_int(F v) {
  static_assert(std::is_same_v<F, float> || std::is_same_v<F, double>, "float_to_int: F is float or double");
  if constexpr (std::is_same_v<I, uint8_t>) {
    return static_cast<uint8_t>(float_to_int<int64_t>(v));  // modulo 256 (well defined for unsigned targets)
  } else {
    static_assert(std::is_same_v<I, int32_t> || std::is_same_v<I, int64_t>,
                  "float_to_int: the target is int32_t, int64_t or uint8_t");
    constexpr bool wide = std::is_same_v<I, int64_t>;
    constexpr I kMax = wide ? static_cast<I>(INT64_MAX) : static_cast<I>(INT32_MAX);
    // 2^(bits-1): the first value above the range; exact in float and double,
    // and -kLimit converts to the minimum.
    constexpr F kLimit = wide ? F(9223372036854775808.0) : F(2147483648.0);
    F c = v == v ? v : F(0);          // NaN -> 0
    c = c < -kLimit ? -kLimit : c;    // -inf and below -> the minimum, which converts exactly
    const bool above = c >= kLimit;   // +inf and at or above 2^(bits-1)
    const I r = static_cast<I>(above ? F(0) : c);
    return above ? kMax : r;
  }
}

}  // namespace ember
