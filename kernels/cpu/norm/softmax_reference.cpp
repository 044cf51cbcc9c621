// softmax and log_softmax references (norm_reference.h): for each line along
// `dim`, m = max, s = sum exp(x - m); softmax = exp(x - m) / s, log_softmax =
// x - m - log s, in long double.
#include <cmath>
#include <limits>

#include "kernels/cpu/norm/norm_reference.h"
#include "kernels/reference_values.h"

namespace ember::cpu {

Tensor softmax_reference(std::string_view op, const Tensor& x, int64_t dim, DType dtype) {
  EMBER_CHECK(op == "softmax" || op == "log_softmax", "softmax_reference: no reference for the op ", op);
  reference::check_dtype(x, op);
  reference::Values v = reference::read(x, op);
  const int64_t d = reference::wrap_dim(dim, v.dim(), op);
  const int64_t len = v.dim() == 0 ? 1 : v.size(d);
  const int64_t stride = v.dim() == 0 ? 1 : reference::contiguous_strides(v.sizes)[d];
  // A line starts at every position whose index along `dim` is 0.
  for (int64_t start = 0; start < v.numel(); ++start) {
    if (start / stride % len != 0) continue;
    long double m = -std::numeric_limits<long double>::infinity(), s = 0;
    for (int64_t i = 0; i < len; ++i) m = std::fmax(m, static_cast<long double>(v.v[start + i * stride]));
    for (int64_t i = 0; i < len; ++i) s += std::exp(v.v[start + i * stride] - m);
    for (int64_t i = 0; i < len; ++i) {
      double& e = v.v[start + i * stride];
      e = static_cast<double>(op == "softmax" ? std::exp(e - m) / s : e - m - std::log(s));
    }
  }
  EMBER_CHECK(dtype == DType::Float32 || dtype == DType::Float64, op,
              ": the reference covers float32 and float64 results, got ", dtype);
  return reference::write(v, dtype);
}

}  // namespace ember::cpu
