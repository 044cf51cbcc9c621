#include "distributed/dtype_convert.h"

namespace ember::distributed {

DType reduction_dtype(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 ? DType::Float32 : dtype;
}

void widen_to_f32(const void* src, DType dtype, float* dst, size_t n) {
  if (dtype == DType::Float16) {
    const auto* s = static_cast<const Half*>(src);
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
  } else {
    const auto* s = static_cast<const BFloat16*>(src);
    for (size_t i = 0; i < n; ++i) dst[i] = static_cast<float>(s[i]);
  }
}

void narrow_from_f32(const float* src, DType dtype, void* dst, size_t n) {
  if (dtype == DType::Float16) {
    auto* d = static_cast<Half*>(dst);
    for (size_t i = 0; i < n; ++i) d[i] = Half(src[i]);
  } else {
    auto* d = static_cast<BFloat16*>(dst);
    for (size_t i = 0; i < n; ++i) d[i] = BFloat16(src[i]);
  }
}

void divide_in_place(void* data, DType dtype, size_t n, int divisor) {
  if (dtype == DType::Float64) {
    auto* d = static_cast<double*>(data);
    for (size_t i = 0; i < n; ++i) d[i] /= divisor;
  } else {
    auto* d = static_cast<float*>(data);
    for (size_t i = 0; i < n; ++i) d[i] /= static_cast<float>(divisor);
  }
}

}  // namespace ember::distributed
