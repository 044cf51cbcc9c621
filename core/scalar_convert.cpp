// Note [Scalar to dtype conversion] (core/scalar_convert.h): the range check.
#include "core/scalar_convert.h"

#include <cmath>
#include <cstdint>

#include "ember/error.h"

namespace ember {
namespace {

// The largest finite value of a floating dtype.
double float_max(DType t) {
  switch (t) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    default: return 3.4028234663852886e38;  // float32
  }
}

bool fits(const Scalar& v, DType t) {
  if (t == DType::Bool || t == DType::Float64 || v.is_bool()) return true;
  if (is_floating_point(t)) {
    const double d = v.to<double>();
    return !std::isfinite(d) || std::fabs(d) <= float_max(t);
  }
  int64_t lo = 0, hi = 0;
  switch (t) {
    case DType::Int32: lo = INT32_MIN, hi = INT32_MAX; break;
    case DType::UInt8: lo = v.is_integral() ? -255 : 0, hi = 255; break;
    default: lo = INT64_MIN, hi = INT64_MAX; break;  // int64
  }
  if (v.is_integral()) {
    const int64_t i = v.to<int64_t>();
    return i >= lo && i <= hi;
  }
  // A float, compared before truncation, as PyTorch: 2^31 - 0.5 does not fit
  // int32. NaN and ±inf never fit. 2^63 is exact in double and
  // (double)INT64_MAX rounds up to it, so int64's bound is "below 2^63".
  const double d = v.to<double>();
  if (!std::isfinite(d)) return false;
  if (hi == INT64_MAX) return d >= -9223372036854775808.0 && d < 9223372036854775808.0;
  return d >= static_cast<double>(lo) && d <= static_cast<double>(hi);
}

}  // namespace

void check_scalar_fits(const Scalar& v, DType dtype, const char* op) {
  EMBER_CHECK(fits(v, dtype), op, ": value ", v, " cannot be converted to ", dtype, " without overflow");
}

}  // namespace ember
