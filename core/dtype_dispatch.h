// Calling a template for a runtime dtype:
//   dispatch_dtype(t, "add", [&]<class T>() { ... });
// and opmath_t<T>, the type arithmetic on T is done in (float for f16/bf16).
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/dtype.h"
#include "ember/error.h"

namespace ember {

template <class T>
using opmath_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;

template <class F>
decltype(auto) dispatch_dtype(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Float16: return f.template operator()<Half>();
    case DType::BFloat16: return f.template operator()<BFloat16>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::Bool: return f.template operator()<bool>();
  }
  EMBER_FAIL(op, ": invalid dtype ", static_cast<int>(t));
}

// Only the floating dtypes (ops such as exp compute in floating point).
template <class F>
decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Float16: return f.template operator()<Half>();
    case DType::BFloat16: return f.template operator()<BFloat16>();
    default: EMBER_FAIL(op, ": expected a floating-point dtype, got ", t);
  }
}

inline constexpr std::initializer_list<DType> kAllDTypes = {DType::Float32, DType::Float64, DType::Float16,
                                                            DType::BFloat16, DType::Int32,   DType::Int64,
                                                            DType::UInt8,   DType::Bool};
inline constexpr std::initializer_list<DType> kFloatingDTypes = {DType::Float32, DType::Float64, DType::Float16,
                                                                 DType::BFloat16};
inline constexpr std::initializer_list<DType> kNumericDTypes = {DType::Float32, DType::Float64, DType::Float16,
                                                                DType::BFloat16, DType::Int32,   DType::Int64,
                                                                DType::UInt8};

// For kernels that only move elements (copies, gathers): calls
// f.template operator()<U>() with an unsigned type U as wide as one element.
template <class F>
void dispatch_width(size_t elem, F&& f) {
  switch (elem) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    case 8: return f.template operator()<uint64_t>();
  }
  EMBER_FAIL("internal: no element type of ", elem, " bytes");
}

}  // namespace ember
