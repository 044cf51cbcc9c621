#include "ember/dtype.h"

#include <cmath>
#include <ostream>

#include "ember/error.h"

namespace ember {

// IEEE half <-> float with round-to-nearest-even, handling subnormals, inf, NaN.
Half::Half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) {  // inf or NaN
    bits = static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    return;
  }
  if (absx >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (absx < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    // Scale into the subnormal range with a float add that rounds for us.
    float a;
    std::memcpy(&a, &absx, 4);
    a += 0.5f;  // 0.5 = 2^-1: ulp of the sum equals the half subnormal step 2^-24
    uint32_t r;
    std::memcpy(&r, &a, 4);
    bits = static_cast<uint16_t>(sign | (r - 0x3f000000u));
    return;
  }
  const uint32_t mant_odd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  bits = static_cast<uint16_t>(sign | (absx >> 13));
}

Half::operator float() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exp = (bits >> 10) & 0x1fu;
  const uint32_t mant = bits & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    const float mag = std::ldexp(static_cast<float>(mant), -24);
    std::memcpy(&out, &mag, 4);
    out |= sign;
  } else {
    out = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &out, 4);
  return f;
}

size_t element_size(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Float16: return 2;
    case DType::BFloat16: return 2;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::UInt8: return 1;
    case DType::Bool: return 1;
  }
  EMBER_FAIL("element_size: invalid dtype ", static_cast<int>(t));
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::UInt8: return "uint8";
    case DType::Bool: return "bool";
  }
  return "invalid";
}

bool is_floating_point(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
}

bool is_integral(DType t, bool include_bool) {
  return t == DType::Int32 || t == DType::Int64 || t == DType::UInt8 || (include_bool && t == DType::Bool);
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  // torch.promote_types for our eight dtypes, indexed in DType order:
  // f32 f64 f16 bf16 i32 i64 u8 b
  constexpr DType f4 = DType::Float32, f8 = DType::Float64, f2 = DType::Float16, bf = DType::BFloat16,
                  i4 = DType::Int32, i8 = DType::Int64, u1 = DType::UInt8, b1 = DType::Bool;
  static constexpr DType table[kNumDTypes][kNumDTypes] = {
      /* f32  */ {f4, f8, f4, f4, f4, f4, f4, f4},
      /* f64  */ {f8, f8, f8, f8, f8, f8, f8, f8},
      /* f16  */ {f4, f8, f2, f4, f2, f2, f2, f2},
      /* bf16 */ {f4, f8, f4, bf, bf, bf, bf, bf},
      /* i32  */ {f4, f8, f2, bf, i4, i8, i4, i4},
      /* i64  */ {f4, f8, f2, bf, i8, i8, i8, i8},
      /* u8   */ {f4, f8, f2, bf, i4, i8, u1, u1},
      /* bool */ {f4, f8, f2, bf, i4, i8, u1, b1},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

bool can_cast(DType from, DType to) {
  if (is_floating_point(from) && is_integral(to, true)) return false;
  if (from != DType::Bool && to == DType::Bool) return false;
  return true;
}

std::ostream& operator<<(std::ostream& os, DType t) { return os << dtype_name(t); }

}  // namespace ember
