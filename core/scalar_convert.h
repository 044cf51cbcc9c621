// A Scalar converted to a tensor's element type, checked: the one conversion
// that fill_, full, masked_fill, clamp, scatter/index_fill values and the CUDA
// fill use (Note [Scalar to dtype conversion]).
//
// Note [Scalar to dtype conversion]
// Scalar::to<T>() is a plain cast: 300 -> uint8 gives 44, 1e30 -> int64 is
// undefined. Where a Scalar becomes an element of a tensor's dtype, ember
// checks first, with PyTorch's rule, and raises
//   fill_: value 300 cannot be converted to uint8 without overflow
// The rule, per target dtype:
//  - bool: anything converts (x != 0; NaN is true).
//  - int32, int64: an integer in the type's range; a float that is finite
//    and whose truncation is in range (2.7 -> 2). NaN and ±inf raise.
//  - uint8: an integer in [-255, 255] (negative values wrap, -1 -> 255, as
//    in PyTorch, so `a + 255 * b` style arithmetic works); a float in [0, 255].
//  - float16, bfloat16, float32: a finite value beyond the type's largest
//    finite value raises (1e300 -> float32); ±inf and NaN convert. float64
//    takes anything.
// Binary ops with a Scalar operand (t + 300) do not come here: the scalar is
// a wrapped 0-d tensor and integer arithmetic wraps, as in PyTorch.
#pragma once

#include <type_traits>

#include "core/float_to_int.h"
#include "ember/dtype.h"
#include "ember/scalar.h"

namespace ember {

// Raises ember::Error "<op>: value <v> cannot be converted to <dtype> without
// overflow" when `v` does not fit `dtype` by the rule above.
void check_scalar_fits(const Scalar& v, DType dtype, const char* op);

// `v` as a T, the element type of a tensor of dtype `dtype` (checked).
template <class T>
T scalar_to(const Scalar& v, DType dtype, const char* op) {
  check_scalar_fits(v, dtype, op);
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(v.to<float>());
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    return static_cast<uint8_t>(v.to<int64_t>());  // in range: -1 -> 255, modulo 256
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return v.is_floating_point() ? float_to_int<T>(v.to<double>()) : v.to<T>();
  } else {
    return v.to<T>();
  }
}

}  // namespace ember
