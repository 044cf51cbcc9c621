// Inputs and small reference helpers for the op-info rows of the indexing and
// activation families (tests/op_info_indexing.cpp, tests/op_info_activation.cpp).
// The core families share tests/op_info_inputs.h; these are the few
// helpers the two families need.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>
#include <vector>

#include "tests/op_info.h"

namespace ember::testing::family {

// Boxed arguments.
inline IValue arg(const Tensor& t) { return IValue::Payload(t); }
inline IValue arg(const Scalar& s) { return IValue::Payload(s); }
inline IValue int_arg(int64_t v) { return IValue::Payload(v); }
inline IValue ints_arg(Shape v) { return IValue::Payload(std::move(v)); }

// The next input's seed. reseed() at the start of a row's samples makes every
// call of it give the same inputs (the thread-count test compares two calls).
inline uint64_t& input_seed() {
  static uint64_t seed = 0;
  return seed;
}
inline void reseed(std::string_view op, DType t) {
  input_seed() = std::hash<std::string_view>{}(op) ^ (static_cast<uint64_t>(t) << 48);
}

// Deterministic uniforms in [0, 1), from the next input seed.
inline std::vector<double> uniforms(int64_t n) {
  ember::manual_seed(input_seed()++);
  const Tensor r = ember::rand({std::max<int64_t>(n, 1)}, kFloat64);
  const double* p = r.data_ptr<double>();
  return std::vector<double>(p, p + n);
}

enum class Layout : uint8_t { Contiguous, Transposed, Sliced };

// A tensor of dtype t holding `values` (repeated to fill it), laid out as asked:
// contiguous, the transpose of a contiguous tensor (last two dims), or every
// other element of a wider last dim.
inline Tensor from_values(const Shape& shape, DType t, const std::vector<double>& values,
                          Layout layout = Layout::Contiguous) {
  Shape base = shape;
  if (layout == Layout::Transposed) std::swap(base[base.size() - 1], base[base.size() - 2]);
  if (layout == Layout::Sliced) base.back() = 2 * base.back() + 1;
  const int64_t n = numel_of(base);
  Tensor v = ember::empty({n}, kFloat64);
  for (int64_t k = 0; k < n; ++k) v.data_ptr<double>()[k] = values.empty() ? 0.0 : values[k % values.size()];
  const Tensor b = v.reshape(base).to(t);
  if (layout == Layout::Transposed) return b.transpose(-1, -2);
  if (layout == Layout::Sliced) return b.slice(-1, 1, std::nullopt, 2);
  return b;
}

// Values in [lo, hi) (integers: floor of that; bool: half true).
inline Tensor input(const Shape& shape, DType t, double lo = -4, double hi = 4, Layout layout = Layout::Contiguous) {
  Shape base = shape;
  if (layout == Layout::Transposed) std::swap(base[base.size() - 1], base[base.size() - 2]);
  if (layout == Layout::Sliced) base.back() = 2 * base.back() + 1;
  std::vector<double> v = uniforms(numel_of(base));
  for (double& x : v) {
    if (t == DType::Bool) x = x < 0.5 ? 0.0 : 1.0;
    else if (t == DType::UInt8) x = std::floor(20.0 * x);
    else if (!is_floating_point(t)) x = std::floor(lo + (hi - lo) * x);
    else x = lo + (hi - lo) * x;
  }
  return from_values(shape, t, v, layout);
}
inline Tensor input(const Shape& shape, DType t, Layout layout) { return input(shape, t, -4, 4, layout); }

// int64 ids in [0, n).
inline Tensor ids(const Shape& shape, int64_t n, DType t = DType::Int64) {
  std::vector<double> v = uniforms(numel_of(shape));
  for (double& x : v) x = std::floor(static_cast<double>(n) * x);
  return from_values(shape, t, v);
}

// Copies element `from` of `src` into element `to` of `dst` (same dtype).
inline void copy_element(HostTensor& dst, int64_t to, const HostTensor& src, int64_t from) {
  if (dst.floating()) dst.f[to] = src.f[from];
  else dst.i[to] = src.i[from];
}

}  // namespace ember::testing::family
