// Helpers shared by the core op-info families (tests/op_info_<family>.cpp):
// host values and conversions, deterministic inputs by domain, sample sets
// shared between families, and host reference helpers (broadcasting,
// elementwise maps, reductions). See Note [The op-info table] in op_info.h.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "core/tensor_util.h"
#include "tests/op_info.h"

namespace ember::testing {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline const std::vector<DType> kAll = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                 DType::Int32,   DType::Int64,   DType::UInt8,   DType::Bool};
inline const std::vector<DType> kFloating = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
inline const std::vector<DType> kNumeric = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                     DType::Int32,   DType::Int64,   DType::UInt8};
inline const std::vector<DType> kIntegral = {DType::Int32, DType::Int64, DType::UInt8, DType::Bool};  // with bool

// The value a C++ conversion of the integer v to dtype t gives.
inline int64_t wrap_to(DType t, int64_t v) {
  switch (t) {
    case DType::Int32: return static_cast<int32_t>(v);
    case DType::UInt8: return static_cast<uint8_t>(v);
    case DType::Bool: return v != 0;
    default: return v;
  }
}

template <class T>
inline T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
inline void store(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Writes v, converted to dtype t, at p.
inline void store_as(DType t, char* p, double v) {
  switch (t) {
    case DType::Float32: return store(p, static_cast<float>(v));
    case DType::Float64: return store(p, v);
    case DType::Float16: return store(p, Half(static_cast<float>(v)));
    case DType::BFloat16: return store(p, BFloat16(static_cast<float>(v)));
    case DType::Int32: return store(p, static_cast<int32_t>(v));
    case DType::Int64: return store(p, static_cast<int64_t>(v));
    case DType::UInt8: return store(p, static_cast<uint8_t>(v));
    case DType::Bool: return store(p, static_cast<uint8_t>(v != 0));
  }
}

// ---------------------------------------------------------------------------
// Inputs: deterministic values from ember's generator, mapped into a domain.

enum class Domain : uint8_t {
  Any,       // floats in [-4, 4), ints in [-9, 9], uint8 in [0, 19], bool half true
  Positive,  // floats in [0.1, 5), integers in [1, 9], bool true
  Unit,      // floats in (-0.9, 0.9), ints in [-1, 1]
  NonZero,   // floats with 0.5 <= |x| < 4, integers in +-[1, 9]
  Exponent,  // floats in [-3, 3), ints in [-2, 3], uint8 in [0, 3]
  AboveOne,  // floats in [1.1, 5), integers in [1, 9], bool true (acosh)
};
enum class Layout : uint8_t { Contiguous, Transposed, Sliced };

inline uint64_t g_input_seed = 0;

inline double draw(DType t, Domain d, double u) {
  const double half = u < 0.5 ? -1.0 : 1.0, v = std::fmod(u * 2.0, 1.0);  // a sign and a second uniform
  if (is_floating_point(t)) {
    switch (d) {
      case Domain::Any: return 8.0 * u - 4.0;
      case Domain::Positive: return 0.1 + 4.9 * u;
      case Domain::Unit: return 1.8 * u - 0.9;
      case Domain::NonZero: return half * (0.5 + 3.5 * v);
      case Domain::Exponent: return 6.0 * u - 3.0;
      case Domain::AboveOne: return 1.1 + 3.9 * u;
    }
  }
  if (t == DType::Bool) {
    return d == Domain::Positive || d == Domain::NonZero || d == Domain::AboveOne ? 1.0 : (u < 0.5 ? 0.0 : 1.0);
  }
  const bool u8 = t == DType::UInt8;
  switch (d) {
    case Domain::Any: return u8 ? std::floor(20.0 * u) : std::floor(19.0 * u) - 9.0;
    case Domain::Positive:
    case Domain::AboveOne: return 1.0 + std::floor(9.0 * u);
    case Domain::Unit: return u8 ? std::floor(2.0 * u) : std::floor(3.0 * u) - 1.0;
    case Domain::NonZero: return u8 ? 1.0 + std::floor(9.0 * u) : half * (1.0 + std::floor(9.0 * v));
    case Domain::Exponent: return u8 ? std::floor(4.0 * u) : std::floor(6.0 * u) - 2.0;
  }
  return 0.0;
}

// n uniforms in [0, 1) from ember's generator, from the next input seed.
inline std::vector<double> uniforms(int64_t n) {
  ember::manual_seed(g_input_seed++);
  const Tensor r = ember::rand({n}, kFloat64);
  const double* p = r.data_ptr<double>();
  return std::vector<double>(p, p + n);
}

// A contiguous tensor holding `values`, repeated to fill it.
inline Tensor from_values(const Shape& shape, DType t, const std::vector<double>& values) {
  Tensor out = ember::empty(shape, t);
  char* p = static_cast<char*>(out.data_ptr());
  const int64_t es = static_cast<int64_t>(out.element_size());
  for (int64_t k = 0; k < out.numel(); ++k) store_as(t, p + k * es, values[static_cast<size_t>(k) % values.size()]);
  return out;
}

// A tensor of logical shape `shape`: contiguous, the transpose of a contiguous
// tensor (last two dims), or every other element of the last dim starting at 1
// (a storage offset and a stride of 2).
inline Tensor int64_values(const Shape& shape, const std::vector<double>& v) {
  return from_values(shape, DType::Int64, v);
}

inline Tensor make_input(const Shape& shape, DType t, Domain d = Domain::Any, Layout layout = Layout::Contiguous) {
  Shape base = shape;
  if (layout == Layout::Transposed) std::swap(base[base.size() - 1], base[base.size() - 2]);
  if (layout == Layout::Sliced) base.back() = 2 * base.back() + 1;
  const std::vector<double> u = uniforms(numel_of(base));
  std::vector<double> v(u.size());
  for (size_t k = 0; k < u.size(); ++k) v[k] = draw(t, d, u[k]);
  if (v.empty()) v.push_back(0.0);
  const Tensor b = from_values(base, t, v);
  if (layout == Layout::Transposed) return b.transpose(-1, -2);
  if (layout == Layout::Sliced) return b.slice(-1, 1, std::nullopt, 2);
  return b;
}

constexpr Layout kTransposed = Layout::Transposed, kSliced = Layout::Sliced;
inline Tensor make_input(const Shape& shape, DType t, Layout layout) {
  return make_input(shape, t, Domain::Any, layout);
}

// 0, -0, +-inf, NaN and a few ordinary values (exact in every floating dtype).
inline const std::vector<double> kSpecials = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 0.5, -2.5, 2.5, 3.75, -0.375};
const int64_t kNumSpecials = static_cast<int64_t>(kSpecials.size());

inline Scalar scalar_of(DType t, double v) {
  if (is_floating_point(t)) return Scalar(v);
  if (t == DType::Bool) return Scalar(v != 0);
  return Scalar(static_cast<int64_t>(v));
}

// Boxed arguments.
inline IValue arg(const Tensor& t) { return IValue::Payload(t); }
inline IValue arg(const Scalar& s) { return IValue::Payload(s); }
inline IValue arg(const TensorList& l) { return IValue::Payload(l); }
inline IValue int_arg(int64_t v) { return IValue::Payload(v); }
inline IValue float_arg(double v) { return IValue::Payload(v); }
inline IValue bool_arg(bool v) { return IValue::Payload(v); }
inline IValue ints_arg(Shape v) { return IValue::Payload(std::move(v)); }
inline IValue dtype_arg(DType t) { return IValue::Payload(t); }
inline IValue str_arg(std::string s) { return IValue::Payload(std::move(s)); }
inline IValue none_arg() { return IValue(); }
inline IValue opt_int_arg(std::optional<int64_t> v) { return v ? int_arg(*v) : none_arg(); }

inline Stack concat(Stack a, const Stack& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---------------------------------------------------------------------------
// Sample sets shared by op families.

// self, then `extra`: contiguous, transposed, sliced, 3-d, empty, 0-d and special values.
inline std::vector<Sample> unary_samples(DType t, SampleSize size, Domain d, const Stack& extra = {},
                                         bool special = true) {
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& self) {
    out.push_back({std::move(name), concat({arg(self)}, extra), {}});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t, d));
    add("large_transposed", make_input({256, 400}, t, d, kTransposed));
    return out;
  }
  add("contiguous", make_input({3, 5}, t, d));
  add("transposed", make_input({4, 6}, t, d, kTransposed));
  add("sliced", make_input({3, 4}, t, d, kSliced));
  add("3d", make_input({2, 3, 4}, t, d));
  add("empty", make_input({0, 4}, t, d));
  add("0d", make_input({}, t, d));
  if (special && is_floating_point(t)) add("special", from_values({kNumSpecials}, t, kSpecials));
  return out;
}

// self, other, then `extra`. In-place ops need self to have the broadcast shape.
inline std::vector<Sample> binary_samples(DType t, SampleSize size, Domain da, Domain db, bool in_place,
                                   const Stack& extra = {}, bool special = true) {
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& a, const Tensor& b) {
    out.push_back({std::move(name), concat({arg(a), arg(b)}, extra), {}});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t, da), make_input({256, 400}, t, db));
    add("large_broadcast", make_input({256, 400}, t, da, kTransposed), make_input({400}, t, db));
    return out;
  }
  add("contiguous", make_input({3, 5}, t, da), make_input({3, 5}, t, db));
  add("broadcast", make_input(in_place ? Shape{2, 4, 5} : Shape{2, 1, 5}, t, da), make_input({4, 1}, t, db));
  add("transposed", make_input({3, 5}, t, da, kTransposed), make_input({3, 5}, t, db, kTransposed));
  add("sliced", make_input({3, 5}, t, da, kSliced), make_input({3, 5}, t, db));
  add("sliced_other", make_input({3, 5}, t, da), make_input({3, 5}, t, db, kSliced));
  add("empty", make_input({0, 3}, t, da), make_input({0, 3}, t, db));
  if (!in_place) add("empty_broadcast", make_input({0, 1}, t, da), make_input({1, 3}, t, db));
  add("0d", make_input({}, t, da), make_input({}, t, db));
  add("0d_other", make_input({2, 3}, t, da), make_input({}, t, db));
  add("scalar_other", make_input({2, 3}, t, da), wrap_scalar(scalar_of(t, draw(t, db, 0.77))));
  if (in_place) add("self_grows", make_input({1, 3}, t, da), make_input({2, 3}, t, db));  // an error
  else add("scalar_self", wrap_scalar(scalar_of(t, draw(t, da, 0.31))), make_input({2, 3}, t, db));
  if (special && is_floating_point(t)) {
    // Every pair of special values: self (n, 1) or, in place, (n, n) with rows of one value; other (1, n).
    const int64_t n = kNumSpecials;
    std::vector<double> rows;
    for (double v : kSpecials) rows.insert(rows.end(), kSpecials.size(), v);
    const Tensor a = in_place ? from_values({n, n}, t, rows) : from_values({n, 1}, t, kSpecials);
    add("special", a, from_values({1, n}, t, kSpecials));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Reference helpers

// NumPy broadcasting of two shapes; nullopt when they do not broadcast.
inline std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t k = 0; k < n; ++k) {
    const int64_t x = k < n - a.size() ? 1 : a[k - (n - a.size())];
    const int64_t y = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[k] = x == 1 ? y : x;
  }
  return out;
}

// The linear index into a tensor of shape `in` (broadcast to the output) of the output element at `idx`.
inline int64_t source_index(const Shape& idx, const Shape& in) {
  const size_t lead = idx.size() - in.size();
  int64_t k = 0;
  for (size_t d = 0; d < in.size(); ++d) k = k * in[d] + (in[d] == 1 ? 0 : idx[lead + d]);
  return k;
}

// A dim in [-n, n) (a 0-d tensor takes 0 and -1), wrapped; nullopt when out of range.
inline std::optional<int64_t> wrap(int64_t dim, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n) return std::nullopt;
  return dim < 0 ? dim + n : dim;
}

template <class V>
inline void put(HostTensor& r, int64_t k, V v) {
  if constexpr (std::is_floating_point_v<V>) r.set(k, static_cast<double>(v));
  else r.set_int(k, static_cast<int64_t>(v));
}

// out[k] = f(a[k]) in double when a or the output is floating, else in int64.
// f is generic: f(double) or f(int64_t).
template <class F>
inline Expected map1(const HostTensor& a, DType out, F f) {
  HostTensor r(a.shape, out);
  const bool use_float = a.floating() || is_floating_point(out);
  for (int64_t k = 0; k < a.numel(); ++k) {
    if (use_float) put(r, k, f(a.at(k)));
    else put(r, k, f(a.at_int(k)));
  }
  return {{r}, false, ""};
}

// out = f(a, b) broadcast, computed as map1. In place, the result must keep a's shape.
template <class F>
inline Expected map2(const HostTensor& a, const HostTensor& b, DType out, F f, bool in_place = false) {
  const std::optional<Shape> s = broadcast(a.shape, b.shape);
  if (!s || (in_place && *s != a.shape)) return Expected::raises("");
  HostTensor r(*s, out);
  const bool use_float = a.floating() || b.floating() || is_floating_point(out);
  for_each_index(*s, [&](const Shape& idx, int64_t k) {
    const int64_t ia = source_index(idx, a.shape), ib = source_index(idx, b.shape);
    if (use_float) put(r, k, f(a.at(ia), b.at(ib)));
    else put(r, k, f(a.at_int(ia), b.at_int(ib)));
  });
  return {{r}, false, ""};
}

// The reduced dims as a mask, or nullopt for an out-of-range or repeated dim. Empty `dims`: all dims.
inline std::optional<std::vector<bool>> dim_mask(const Shape& dims, int64_t ndim) {
  std::vector<bool> mask(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    const std::optional<int64_t> w = wrap(d, ndim);
    if (!w) return std::nullopt;
    if (ndim == 0) continue;
    if (mask[*w]) return std::nullopt;
    mask[*w] = true;
  }
  return mask;
}

// A reduction's result: fold(elements) per output element, where `elements`
// holds the linear indices into `in` of the reduced elements, row-major.
template <class Fold>
inline HostTensor reduce_ref(const HostTensor& in, const std::vector<bool>& mask, bool keepdim, DType out, Fold fold) {
  Shape kept, reduced, out_shape;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    (mask[d] ? reduced : kept).push_back(in.shape[d]);
    if (!mask[d]) out_shape.push_back(in.shape[d]);
    else if (keepdim) out_shape.push_back(1);
  }
  HostTensor r(out_shape, out);
  std::vector<int64_t> elems;
  for_each_index(kept, [&](const Shape& kidx, int64_t k) {
    elems.clear();
    for_each_index(reduced, [&](const Shape& ridx, int64_t) {
      Shape idx(in.shape.size());
      size_t a = 0, b = 0;
      for (size_t d = 0; d < in.shape.size(); ++d) idx[d] = mask[d] ? ridx[b++] : kidx[a++];
      elems.push_back(linear_index(idx, in.shape));
    });
    fold(r, k, elems);
  });
  return r;
}

inline std::vector<Sample> prefixed(std::vector<Sample> samples, const std::string& prefix) {
  for (Sample& s : samples) s.name = prefix + s.name;
  return samples;
}

inline std::vector<Sample> joined(std::vector<Sample> a, std::vector<Sample> b) {
  for (Sample& s : b) a.push_back(std::move(s));
  return a;
}

}  // namespace ember::testing
