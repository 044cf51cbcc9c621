// The op-info table (see Note [The op-info table] in tests/op_info.h).
//
// Layout of this file: host tensors and inputs; sample sets shared by op
// families; reference helpers (broadcasting, reductions, indexing); the
// rows, family by family; running a sample and comparing.
#include "tests/op_info.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>
#include <type_traits>

#include "core/dispatcher.h"
#include "core/tensor_util.h"

namespace ember::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const std::vector<DType> kAll = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                 DType::Int32,   DType::Int64,   DType::UInt8,   DType::Bool};
const std::vector<DType> kFloating = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
const std::vector<DType> kNumeric = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                     DType::Int32,   DType::Int64,   DType::UInt8};
const std::vector<DType> kIntegral = {DType::Int32, DType::Int64, DType::UInt8, DType::Bool};  // with bool

// The value a C++ conversion of the integer v to dtype t gives.
int64_t wrap_to(DType t, int64_t v) {
  switch (t) {
    case DType::Int32: return static_cast<int32_t>(v);
    case DType::UInt8: return static_cast<uint8_t>(v);
    case DType::Bool: return v != 0;
    default: return v;
  }
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void store(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Writes v, converted to dtype t, at p.
void store_as(DType t, char* p, double v) {
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

}  // namespace

// ---------------------------------------------------------------------------
// Host tensors

HostTensor::HostTensor(std::vector<int64_t> s, DType t) : shape(std::move(s)), dtype(t) {
  if (floating()) f.assign(static_cast<size_t>(numel()), 0.0);
  else i.assign(static_cast<size_t>(numel()), 0);
}

int64_t HostTensor::numel() const { return numel_of(shape); }

void HostTensor::set(int64_t k, double v) {
  if (floating()) f[k] = v;
  else if (dtype == DType::Bool) i[k] = v != 0;
  else i[k] = wrap_to(dtype, static_cast<int64_t>(std::trunc(v)));
}

void HostTensor::set_int(int64_t k, int64_t v) {
  if (floating()) f[k] = static_cast<double>(v);
  else i[k] = wrap_to(dtype, v);
}

HostTensor to_host(const Tensor& t) {
  HostTensor h(t.sizes().vec(), t.dtype());
  const int64_t n = h.numel(), nd = t.dim();
  if (n == 0) return h;
  const char* base = static_cast<const char*>(t.data_ptr());
  const int64_t es = static_cast<int64_t>(t.element_size());
  Shape idx(static_cast<size_t>(nd), 0);
  int64_t off = 0;  // in elements
  for (int64_t k = 0; k < n; ++k) {
    const char* p = base + off * es;
    switch (t.dtype()) {
      case DType::Float32: h.f[k] = load<float>(p); break;
      case DType::Float64: h.f[k] = load<double>(p); break;
      case DType::Float16: h.f[k] = static_cast<float>(load<Half>(p)); break;
      case DType::BFloat16: h.f[k] = static_cast<float>(load<BFloat16>(p)); break;
      case DType::Int32: h.i[k] = load<int32_t>(p); break;
      case DType::Int64: h.i[k] = load<int64_t>(p); break;
      case DType::UInt8: h.i[k] = load<uint8_t>(p); break;
      case DType::Bool: h.i[k] = load<uint8_t>(p) != 0; break;
    }
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < t.size(d)) {
        off += t.stride(d);
        break;
      }
      off -= (t.size(d) - 1) * t.stride(d);
      idx[d] = 0;
    }
  }
  return h;
}

namespace {

// ---------------------------------------------------------------------------
// Inputs: deterministic values from ember's generator, mapped into a domain.

enum class Domain : uint8_t {
  Any,       // floats in [-4, 4), ints in [-9, 9], uint8 in [0, 19], bool half true
  Positive,  // floats in [0.1, 5), integers in [1, 9], bool true
  Unit,      // floats in (-0.9, 0.9), ints in [-1, 1]
  NonZero,   // floats with 0.5 <= |x| < 4, integers in +-[1, 9]
  Exponent,  // floats in [-3, 3), ints in [-2, 3], uint8 in [0, 3]
};
enum class Layout : uint8_t { Contiguous, Transposed, Sliced };

uint64_t g_input_seed = 0;

double draw(DType t, Domain d, double u) {
  const double half = u < 0.5 ? -1.0 : 1.0, v = std::fmod(u * 2.0, 1.0);  // a sign and a second uniform
  if (is_floating_point(t)) {
    switch (d) {
      case Domain::Any: return 8.0 * u - 4.0;
      case Domain::Positive: return 0.1 + 4.9 * u;
      case Domain::Unit: return 1.8 * u - 0.9;
      case Domain::NonZero: return half * (0.5 + 3.5 * v);
      case Domain::Exponent: return 6.0 * u - 3.0;
    }
  }
  if (t == DType::Bool) return d == Domain::Positive || d == Domain::NonZero ? 1.0 : (u < 0.5 ? 0.0 : 1.0);
  const bool u8 = t == DType::UInt8;
  switch (d) {
    case Domain::Any: return u8 ? std::floor(20.0 * u) : std::floor(19.0 * u) - 9.0;
    case Domain::Positive: return 1.0 + std::floor(9.0 * u);
    case Domain::Unit: return u8 ? std::floor(2.0 * u) : std::floor(3.0 * u) - 1.0;
    case Domain::NonZero: return u8 ? 1.0 + std::floor(9.0 * u) : half * (1.0 + std::floor(9.0 * v));
    case Domain::Exponent: return u8 ? std::floor(4.0 * u) : std::floor(6.0 * u) - 2.0;
  }
  return 0.0;
}

// n uniforms in [0, 1) from ember's generator, from the next input seed.
std::vector<double> uniforms(int64_t n) {
  ember::manual_seed(g_input_seed++);
  const Tensor r = ember::rand({n}, kFloat64);
  const double* p = r.data_ptr<double>();
  return std::vector<double>(p, p + n);
}

// A contiguous tensor holding `values`, repeated to fill it.
Tensor from_values(const Shape& shape, DType t, const std::vector<double>& values) {
  Tensor out = ember::empty(shape, t);
  char* p = static_cast<char*>(out.data_ptr());
  const int64_t es = static_cast<int64_t>(out.element_size());
  for (int64_t k = 0; k < out.numel(); ++k) store_as(t, p + k * es, values[static_cast<size_t>(k) % values.size()]);
  return out;
}

// A tensor of logical shape `shape`: contiguous, the transpose of a contiguous
// tensor (last two dims), or every other element of the last dim starting at 1
// (a storage offset and a stride of 2).
Tensor make_input(const Shape& shape, DType t, Domain d = Domain::Any, Layout layout = Layout::Contiguous) {
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
Tensor make_input(const Shape& shape, DType t, Layout layout) { return make_input(shape, t, Domain::Any, layout); }

// 0, -0, +-inf, NaN and a few ordinary values (exact in every floating dtype).
const std::vector<double> kSpecials = {0.0, -0.0, kInf, -kInf, kNaN, 1.0, -1.0, 0.5, -2.5, 2.5, 3.75, -0.375};
const int64_t kNumSpecials = static_cast<int64_t>(kSpecials.size());

Scalar scalar_of(DType t, double v) {
  if (is_floating_point(t)) return Scalar(v);
  if (t == DType::Bool) return Scalar(v != 0);
  return Scalar(static_cast<int64_t>(v));
}

// Boxed arguments.
IValue arg(const Tensor& t) { return IValue::Payload(t); }
IValue arg(const Scalar& s) { return IValue::Payload(s); }
IValue arg(const TensorList& l) { return IValue::Payload(l); }
IValue int_arg(int64_t v) { return IValue::Payload(v); }
IValue float_arg(double v) { return IValue::Payload(v); }
IValue bool_arg(bool v) { return IValue::Payload(v); }
IValue ints_arg(Shape v) { return IValue::Payload(std::move(v)); }
IValue dtype_arg(DType t) { return IValue::Payload(t); }
IValue str_arg(std::string s) { return IValue::Payload(std::move(s)); }
IValue none_arg() { return IValue(); }
IValue opt_int_arg(std::optional<int64_t> v) { return v ? int_arg(*v) : none_arg(); }

Stack concat(Stack a, const Stack& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---------------------------------------------------------------------------
// Sample sets shared by op families.

// self, then `extra`: contiguous, transposed, sliced, 3-d, empty, 0-d and special values.
std::vector<Sample> unary_samples(DType t, SampleSize size, Domain d, const Stack& extra = {}, bool special = true) {
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
std::vector<Sample> binary_samples(DType t, SampleSize size, Domain da, Domain db, bool in_place,
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
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
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
int64_t source_index(const Shape& idx, const Shape& in) {
  const size_t lead = idx.size() - in.size();
  int64_t k = 0;
  for (size_t d = 0; d < in.size(); ++d) k = k * in[d] + (in[d] == 1 ? 0 : idx[lead + d]);
  return k;
}

// A dim in [-n, n) (a 0-d tensor takes 0 and -1), wrapped; nullopt when out of range.
std::optional<int64_t> wrap(int64_t dim, int64_t ndim) {
  const int64_t n = std::max<int64_t>(ndim, 1);
  if (dim < -n || dim >= n) return std::nullopt;
  return dim < 0 ? dim + n : dim;
}

template <class V>
void put(HostTensor& r, int64_t k, V v) {
  if constexpr (std::is_floating_point_v<V>) r.set(k, static_cast<double>(v));
  else r.set_int(k, static_cast<int64_t>(v));
}

// out[k] = f(a[k]) in double when a or the output is floating, else in int64.
// f is generic: f(double) or f(int64_t).
template <class F>
Expected map1(const HostTensor& a, DType out, F f) {
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
Expected map2(const HostTensor& a, const HostTensor& b, DType out, F f, bool in_place = false) {
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
std::optional<std::vector<bool>> dim_mask(const Shape& dims, int64_t ndim) {
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
HostTensor reduce_ref(const HostTensor& in, const std::vector<bool>& mask, bool keepdim, DType out, Fold fold) {
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

}  // namespace

// ---------------------------------------------------------------------------
// Output-dtype rules

DType same_dtype(DType t) { return t; }
DType bool_dtype(DType) { return DType::Bool; }
DType int64_dtype(DType) { return DType::Int64; }
DType float_of_int(DType t) { return is_floating_point(t) ? t : DType::Float32; }
DType int64_of_int(DType t) { return is_floating_point(t) ? t : DType::Int64; }
DType bool_or_uint8(DType t) { return t == DType::UInt8 ? DType::UInt8 : DType::Bool; }

namespace {

std::vector<Sample> prefixed(std::vector<Sample> samples, const std::string& prefix) {
  for (Sample& s : samples) s.name = prefix + s.name;
  return samples;
}

std::vector<Sample> joined(std::vector<Sample> a, std::vector<Sample> b) {
  for (Sample& s : b) a.push_back(std::move(s));
  return a;
}

// ---------------------------------------------------------------------------
// Rows: binary elementwise ops

using BinaryFn = std::function<Expected(const RefArgs&, bool in_place)>;

// A binary op, and its in-place form `name_` when in_place is set.
struct BinarySpec {
  std::string name{};
  std::vector<DType> dtypes{};
  DType (*out)(DType) = same_dtype;
  Domain da = Domain::Any, db = Domain::Any;
  bool alpha = false;     // takes `Scalar alpha` after other
  bool in_place = false;  // has a `name_` form
  std::vector<DType> in_place_rejects{};
  BinaryFn ref{};
  std::vector<Divergence> divergences{};
};

void add_binary(std::vector<OpInfo>& rows, const BinarySpec& b) {
  for (const bool ip : {false, true}) {
    if (ip && !b.in_place) break;
    OpInfo r;
    r.name = ip ? b.name + "_" : b.name;
    r.dtypes = b.dtypes;
    r.rejects = ip ? b.in_place_rejects : std::vector<DType>{};
    r.out_dtype = ip ? same_dtype : b.out;
    r.kind = ip ? OpKind::InPlace : OpKind::Functional;
    r.samples = [b, ip](DType t, SampleSize size) {
      const Stack extra = b.alpha ? Stack{arg(Scalar(1))} : Stack{};
      std::vector<Sample> s = binary_samples(t, size, b.da, b.db, ip, extra);
      if (size == SampleSize::Large) return s;
      if (b.alpha) {
        const Scalar alpha = is_floating_point(t) ? Scalar(0.5) : t == DType::Bool ? Scalar(true) : Scalar(2);
        s.push_back({"alpha", {arg(make_input({3, 5}, t, b.da)), arg(make_input({3, 5}, t, b.db)), arg(alpha)}});
      }
      if (!is_floating_point(t)) {
        // An integer or bool tensor with a float Scalar computes in float32, which self cannot hold in place.
        Sample f{"scalar_float", concat({arg(make_input({2, 3}, t, b.da)), arg(wrap_scalar(Scalar(2.5)))}, extra)};
        if (ip) f.error = b.name;
        else f.out_dtype = b.out(DType::Float32);
        s.push_back(std::move(f));
      }
      return s;
    };
    r.reference = [ref = b.ref, ip](const RefArgs& a) { return ref(a, ip); };
    r.divergences = b.divergences;
    rows.push_back(std::move(r));
  }
}

// A reference for out = f(self, other).
template <class F>
BinaryFn binary_ref(F f) {
  return [f](const RefArgs& a, bool ip) { return map2(a.tensor(0), a.tensor(1), a.out, f, ip); };
}

// Python's %: the result takes the divisor's sign.
template <class V>
V floor_mod(V x, V y) {
  V r;
  if constexpr (std::is_floating_point_v<V>) r = std::fmod(x, y);
  else r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

// floor(x / y) as PyTorch defines it for floats: x / y for a zero divisor,
// NaN for an infinite x, 0 or -1 for an infinite y, and a zero keeps the
// quotient's sign.
double floor_divide(double x, double y) {
  if (y == 0) return x / y;
  if (std::isnan(x) || std::isnan(y) || std::isinf(x)) return kNaN;
  if (std::isinf(y)) return x == 0 || (x < 0) == (y < 0) ? std::copysign(0.0, x / y) : -1.0;
  const double q = std::floor(x / y);
  return q == 0 ? std::copysign(0.0, x / y) : q;
}

// Integer power; negative exponents give 0 except for bases 1 and -1 (PyTorch's tensor-tensor rule).
int64_t int_pow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? (e % 2 == 0 ? 1 : -1) : 0;
  int64_t r = 1;
  for (int64_t k = 0; k < e; ++k) r *= base;
  return r;
}

void add_binary_rows(std::vector<OpInfo>& rows) {
  // alpha is exact in double for the samples' values.
  auto add_sub = [](double sign) {
    return [sign](const RefArgs& a, bool ip) {
      const double al = sign * a.number(2);
      const int64_t ai = static_cast<int64_t>(sign) * a.integer(2);
      return map2(a.tensor(0), a.tensor(1), a.out, [al, ai](auto x, auto y) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return x + al * y;
        else return x + ai * y;
      }, ip);
    };
  };
  add_binary(rows, {.name = "add", .dtypes = kAll, .alpha = true, .in_place = true, .ref = add_sub(1)});
  add_binary(rows, {.name = "sub", .dtypes = kNumeric, .alpha = true, .in_place = true, .ref = add_sub(-1)});
  add_binary(rows, {.name = "mul", .dtypes = kAll, .in_place = true,
                    .ref = binary_ref([](auto x, auto y) { return x * y; })});
  add_binary(rows, {.name = "div", .dtypes = kAll, .out = float_of_int, .db = Domain::NonZero, .in_place = true,
                    .in_place_rejects = kIntegral,
                    .ref = binary_ref([](auto x, auto y) { return static_cast<double>(x) / static_cast<double>(y); })});
  // div(rounding_mode="floor" | "trunc"): integers stay integers, and an integer zero divisor is an error.
  rows.push_back({
      .name = "div_mode",
      .dtypes = kNumeric,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = binary_samples(t, size, Domain::Any, Domain::NonZero, false, {str_arg("floor")});
        if (size == SampleSize::Large) return s;
        s = joined(s, prefixed(binary_samples(t, size, Domain::Any, Domain::NonZero, false, {str_arg("trunc")}),
                               "trunc_"));
        s.push_back({"bad_mode", {arg(make_input({3}, t)), arg(make_input({3}, t, Domain::NonZero)), str_arg("round")},
                     {}, "rounding_mode"});
        if (!is_floating_point(t)) {
          s.push_back({"zero_divisor", {arg(make_input({3}, t)), arg(from_values({3}, t, {1, 0, 2})), str_arg("floor")},
                       {}, "zero"});
        }
        return s;
      },
      .reference = [](const RefArgs& a) {
        const bool floor_mode = a.str(2) == "floor";
        return map2(a.tensor(0), a.tensor(1), a.out, [floor_mode](auto x, auto y) {
          const double q = static_cast<double>(x) / static_cast<double>(y);
          if constexpr (std::is_floating_point_v<decltype(x)>) return floor_mode ? floor_divide(x, y) : std::trunc(q);
          else return static_cast<int64_t>(floor_mode ? std::floor(q) : std::trunc(q));  // exact for small integers
        });
      },
  });
  add_binary(rows, {.name = "pow", .dtypes = kAll, .db = Domain::Exponent, .in_place = true,
                    .ref = binary_ref([](auto x, auto y) {
                      if constexpr (std::is_floating_point_v<decltype(x)>) return std::pow(x, y);
                      else return int_pow(x, y);
                    })});
  add_binary(rows, {.name = "maximum", .dtypes = kAll, .ref = binary_ref([](auto x, auto y) -> decltype(x) {
                      if (x != x || y != y) return x + y;  // NaN propagates
                      return x > y ? x : y;
                    })});
  add_binary(rows, {.name = "minimum", .dtypes = kAll, .ref = binary_ref([](auto x, auto y) -> decltype(x) {
                      if (x != x || y != y) return x + y;
                      return x < y ? x : y;
                    })});
  add_binary(rows, {.name = "remainder", .dtypes = kNumeric, .db = Domain::NonZero,
                    .ref = binary_ref([](auto x, auto y) { return floor_mod(x, y); })});
  // Comparisons in double (exact for every dtype's values here) or int64.
  auto compare = [&](std::string name, auto f) {
    add_binary(rows, {.name = std::move(name), .dtypes = kAll, .out = bool_dtype, .ref = binary_ref(f)});
  };
  compare("eq", [](auto x, auto y) { return x == y; });
  compare("ne", [](auto x, auto y) { return x != y; });
  compare("lt", [](auto x, auto y) { return x < y; });
  compare("le", [](auto x, auto y) { return x <= y; });
  compare("gt", [](auto x, auto y) { return x > y; });
  compare("ge", [](auto x, auto y) { return x >= y; });
  add_binary(rows, {.name = "logical_and", .dtypes = kAll, .out = bool_dtype,
                    .ref = binary_ref([](auto x, auto y) { return x != 0 && y != 0; })});
  add_binary(rows, {.name = "logical_or", .dtypes = kAll, .out = bool_dtype,
                    .ref = binary_ref([](auto x, auto y) { return x != 0 || y != 0; })});
  add_binary(rows, {.name = "logical_xor", .dtypes = kAll, .out = bool_dtype,
                    .ref = binary_ref([](auto x, auto y) { return (x != 0) != (y != 0); })});

  // where(condition, self, other): self where the condition holds, all three broadcast.
  rows.push_back({
      .name = "where",
      .dtypes = kAll,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> out;
        auto add = [&](std::string name, Shape c, const Tensor& a, const Tensor& b) {
          out.push_back({std::move(name), {arg(make_input(c, DType::Bool)), arg(a), arg(b)}, {}});
        };
        if (size == SampleSize::Large) {
          add("large", {256, 400}, make_input({256, 400}, t), make_input({256, 400}, t, kTransposed));
          return out;
        }
        add("contiguous", {3, 5}, make_input({3, 5}, t), make_input({3, 5}, t));
        add("broadcast", {3, 1}, make_input({1, 4}, t), make_input({2, 3, 4}, t));
        add("transposed", {3, 5}, make_input({3, 5}, t, kTransposed), make_input({3, 5}, t, kSliced));
        add("empty", {0, 3}, make_input({0, 3}, t), make_input({1, 3}, t));
        add("0d", {}, make_input({}, t), make_input({}, t));
        add("scalar_other", {2, 3}, make_input({2, 3}, t), wrap_scalar(scalar_of(t, 1)));
        add("scalar_self", {2, 40}, wrap_scalar(scalar_of(t, 1)), make_input({2, 40}, t));
        add("bad_broadcast", {3, 5}, make_input({3, 5}, t), make_input({4, 5}, t));
        if (is_floating_point(t)) add("special", {12}, from_values({12}, t, kSpecials), make_input({12}, t));
        return out;
      },
      .reference = [](const RefArgs& a) -> Expected {
        const HostTensor c = a.tensor(0), x = a.tensor(1), y = a.tensor(2);
        const std::optional<Shape> s1 = broadcast(c.shape, x.shape);
        const std::optional<Shape> s = s1 ? broadcast(*s1, y.shape) : std::nullopt;
        if (!s) return Expected::raises("");
        HostTensor r(*s, a.out);
        for_each_index(*s, [&](const Shape& idx, int64_t k) {
          const HostTensor& from = c.i[source_index(idx, c.shape)] ? x : y;
          const int64_t j = source_index(idx, from.shape);
          if (from.floating()) r.set(k, from.f[j]);
          else r.set_int(k, from.i[j]);
        });
        return {{r}, false, ""};
      },
  });
}

// ---------------------------------------------------------------------------
// Rows: unary elementwise ops (each with an in-place form name_)

struct UnarySpec {
  const char* name;
  Domain domain;
  bool to_float;               // integer and bool inputs give float32 (exp); in place they are refused
  std::vector<DType> rejects;  // refused by both forms
  double (*fd)(double);
  int64_t (*fi)(int64_t);  // for integer and bool inputs of ops that keep the dtype
  std::vector<Divergence> divergences{};
};

double sign_d(double x) { return static_cast<double>((x > 0) - (x < 0)); }  // sign(NaN) = 0 in PyTorch 1.13
int64_t identity_i(int64_t x) { return x; }

const std::vector<Divergence> kSiluNegInf = {
    {"special", {}, "silu(-inf): torch 1.13 gives nan (-inf / inf); ember gives -0"}};

// abs, sign and the rounding ops keep bool as it is; torch 1.13 has no bool
// kernel for abs, floor, ceil, round and trunc (ember is more permissive).

const std::vector<UnarySpec>& unary_specs() {
  static const std::vector<UnarySpec> specs = {
      {"neg", Domain::Any, false, {DType::Bool}, [](double x) { return -x; }, [](int64_t x) { return -x; }, {}},
      {"abs", Domain::Any, false, {}, [](double x) { return std::fabs(x); },
       [](int64_t x) { return x < 0 ? -x : x; }, {}},
      {"sign", Domain::Any, false, {}, sign_d, [](int64_t x) -> int64_t { return (x > 0) - (x < 0); }, {}},
      {"exp", Domain::Any, true, {}, [](double x) { return std::exp(x); }, nullptr, {}},
      {"exp2", Domain::Any, true, {}, [](double x) { return std::exp2(x); }, nullptr, {}},
      {"log", Domain::Positive, true, {}, [](double x) { return std::log(x); }, nullptr, {}},
      {"log2", Domain::Positive, true, {}, [](double x) { return std::log2(x); }, nullptr, {}},
      {"log1p", Domain::Positive, true, {}, [](double x) { return std::log1p(x); }, nullptr, {}},
      {"expm1", Domain::Any, true, {}, [](double x) { return std::expm1(x); }, nullptr, {}},
      {"sqrt", Domain::Positive, true, {}, [](double x) { return std::sqrt(x); }, nullptr, {}},
      {"rsqrt", Domain::Positive, true, {}, [](double x) { return 1.0 / std::sqrt(x); }, nullptr, {}},
      {"reciprocal", Domain::NonZero, true, {}, [](double x) { return 1.0 / x; }, nullptr, {}},
      {"sin", Domain::Any, true, {}, [](double x) { return std::sin(x); }, nullptr, {}},
      {"cos", Domain::Any, true, {}, [](double x) { return std::cos(x); }, nullptr, {}},
      {"tan", Domain::Unit, true, {}, [](double x) { return std::tan(x); }, nullptr, {}},
      {"tanh", Domain::Any, true, {}, [](double x) { return std::tanh(x); }, nullptr, {}},
      {"sigmoid", Domain::Any, true, {}, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr, {}},
      {"relu", Domain::Any, false, {DType::Bool}, [](double x) { return x > 0 || x != x ? x : 0.0; },
       [](int64_t x) { return x > 0 ? x : 0; }, {}},
      {"silu", Domain::Any, true, kIntegral, [](double x) { return x / (1.0 + std::exp(-x)); }, nullptr,
       kSiluNegInf},
      {"erf", Domain::Any, true, {}, [](double x) { return std::erf(x); }, nullptr, {}},
      {"floor", Domain::Any, false, {}, [](double x) { return std::floor(x); }, identity_i, {}},
      {"ceil", Domain::Any, false, {}, [](double x) { return std::ceil(x); }, identity_i, {}},
      {"round", Domain::Any, false, {}, [](double x) { return std::nearbyint(x); }, identity_i, {}},  // half to even
      {"trunc", Domain::Any, false, {}, [](double x) { return std::trunc(x); }, identity_i, {}},
  };
  return specs;
}

void add_unary_rows(std::vector<OpInfo>& rows) {
  for (const UnarySpec& u : unary_specs()) {
    for (const bool ip : {false, true}) {
      OpInfo r;
      r.name = ip ? std::string(u.name) + "_" : u.name;
      r.dtypes = kAll;
      r.rejects = u.rejects;
      if (ip && u.to_float) r.rejects = kIntegral;  // the float result cannot be written into self
      r.out_dtype = u.to_float && !ip ? float_of_int : same_dtype;
      r.kind = ip ? OpKind::InPlace : OpKind::Functional;
      r.samples = [d = u.domain](DType t, SampleSize size) { return unary_samples(t, size, d); };
      r.reference = [fd = u.fd, fi = u.fi](const RefArgs& a) {
        return map1(a.tensor(0), a.out, [fd, fi](auto x) {
          if constexpr (std::is_floating_point_v<decltype(x)>) return fd(x);
          else return fi(x);
        });
      };
      r.divergences = u.divergences;
      rows.push_back(std::move(r));
    }
  }
}

// ---------------------------------------------------------------------------
// Rows: other elementwise ops (gelu, softplus, predicates, clamp, masked_fill)

void add_elementwise_rows(std::vector<OpInfo>& rows) {
  rows.push_back({
      .name = "gelu",
      .dtypes = kFloating,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = unary_samples(t, size, Domain::Any, {str_arg("none")});
        if (size == SampleSize::Small) {
          s = joined(s, prefixed(unary_samples(t, size, Domain::Any, {str_arg("tanh")}), "tanh_"));
          s.push_back({"bad_approximate", {arg(make_input({3}, t)), str_arg("sigmoid")}, {}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        const std::string mode = a.str(1);
        if (mode != "none" && mode != "tanh") return Expected::raises("approximate");
        return map1(a.tensor(0), a.out, [tanh = mode == "tanh"](double x) {
          if (tanh) return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
          return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        });
      },
      .divergences = {{"special", {}, "gelu(-inf): torch 1.13 gives nan (-inf * 0); ember gives -0"},
                      {"tanh_special", {}, "gelu(-inf, 'tanh'): torch 1.13 gives nan; ember gives -0"}},
  });
  rows.push_back({
      .name = "softplus",
      .dtypes = kFloating,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = unary_samples(t, size, Domain::Any, {arg(Scalar(1)), arg(Scalar(20))});
        if (size == SampleSize::Small)
          s = joined(s, prefixed(unary_samples(t, size, Domain::Any, {arg(Scalar(2)), arg(Scalar(1.5))}), "beta2_"));
        return s;
      },
      .reference = [](const RefArgs& a) {
        const double beta = a.number(1), threshold = a.number(2);
        return map1(a.tensor(0), a.out, [=](double x) {
          return x * beta > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
        });
      },
  });
  rows.push_back({.name = "isnan", .dtypes = kAll, .out_dtype = bool_dtype,
                  .samples = [](DType t, SampleSize size) { return unary_samples(t, size, Domain::Any); },
                  .reference = [](const RefArgs& a) {
                    return map1(a.tensor(0), a.out, [](auto x) { return x != x; });
                  }});
  rows.push_back({.name = "isinf", .dtypes = kAll, .out_dtype = bool_dtype,
                  .samples = [](DType t, SampleSize size) { return unary_samples(t, size, Domain::Any); },
                  .reference = [](const RefArgs& a) {
                    return map1(a.tensor(0), a.out, [](auto x) { return std::isinf(static_cast<double>(x)); });
                  }});
  rows.push_back({.name = "logical_not", .dtypes = kAll, .out_dtype = bool_dtype,
                  .samples = [](DType t, SampleSize size) { return unary_samples(t, size, Domain::Any); },
                  .reference = [](const RefArgs& a) {
                    return map1(a.tensor(0), a.out, [](auto x) { return x == 0; });
                  }});

  // clamp(self, min?, max?): NaN stays NaN; min is applied first, so min > max gives max.
  for (const bool ip : {false, true}) {
    rows.push_back({
        .name = ip ? "clamp_" : "clamp",
        .dtypes = kNumeric,
        .out_dtype = same_dtype,
        .kind = ip ? OpKind::InPlace : OpKind::Functional,
        .samples = [ip](DType t, SampleSize size) {
          const double lo_v = is_floating_point(t) ? -1.5 : t == DType::UInt8 ? 2 : -3;
          const double hi_v = is_floating_point(t) ? 2.0 : t == DType::UInt8 ? 11 : 4;
          const IValue lo = arg(scalar_of(t, lo_v)), hi = arg(scalar_of(t, hi_v));
          std::vector<Sample> s = unary_samples(t, size, Domain::Any, {lo, hi});
          if (size == SampleSize::Large) return s;
          s.push_back({"min_only", {arg(make_input({3, 5}, t)), lo, none_arg()}, {}});
          s.push_back({"max_only", {arg(make_input({3, 5}, t, kTransposed)), none_arg(), hi}, {}});
          s.push_back({"min_above_max", {arg(make_input({3, 5}, t)), hi, lo}, {}});
          s.push_back({"no_bounds", {arg(make_input({3, 5}, t)), none_arg(), none_arg()}, {}});
          if (!is_floating_point(t)) {  // float bounds promote an integer tensor to float32 (an error in place)
            Sample f{"float_bounds", {arg(make_input({3, 5}, t)), arg(Scalar(-1.5)), arg(Scalar(2.5))}};
            if (ip) f.error = "clamp";
            else f.out_dtype = DType::Float32;
            s.push_back(std::move(f));
          }
          return s;
        },
        .reference = [](const RefArgs& a) -> Expected {
          if (a.is_none(1) && a.is_none(2)) return Expected::raises("min");
          const bool has_lo = !a.is_none(1), has_hi = !a.is_none(2);
          const double lo = has_lo ? a.number(1) : 0, hi = has_hi ? a.number(2) : 0;
          return map1(a.tensor(0), a.out, [=](auto x) {
            using V = decltype(x);
            if (x != x) return x;
            if (has_lo && x < static_cast<V>(lo)) x = static_cast<V>(lo);
            if (has_hi && x > static_cast<V>(hi)) x = static_cast<V>(hi);
            return x;
          });
        },
    });
  }

  // masked_fill(self, mask, value): value where the (broadcast) mask is true.
  for (const bool ip : {false, true}) {
    rows.push_back({
        .name = ip ? "masked_fill_" : "masked_fill",
        .dtypes = kAll,
        .out_dtype = same_dtype,
        .kind = ip ? OpKind::InPlace : OpKind::Functional,
        .samples = [](DType t, SampleSize size) {
          std::vector<Sample> out;
          const Scalar value = scalar_of(t, is_floating_point(t) ? -7.25 : t == DType::Bool ? 1 : 7);
          auto add = [&](std::string name, const Tensor& self, Shape mask, const Scalar& v) {
            out.push_back({std::move(name), {arg(self), arg(make_input(mask, DType::Bool)), arg(v)}});
          };
          if (size == SampleSize::Large) {
            add("large", make_input({256, 400}, t), {256, 400}, value);
            return out;
          }
          add("contiguous", make_input({3, 5}, t), {3, 5}, value);
          add("broadcast_mask", make_input({2, 3, 5}, t), {3, 1}, value);
          add("transposed", make_input({3, 5}, t, kTransposed), {5}, value);
          add("sliced", make_input({3, 5}, t, kSliced), {3, 5}, value);
          add("empty", make_input({0, 5}, t), {5}, value);
          add("0d", make_input({}, t), {}, value);
          add("0d_mask", make_input({2, 3}, t), {}, value);
          add("mask_grows_self", make_input({1, 5}, t), {3, 5}, value);  // the result grows; an error in place
          if (is_floating_point(t)) add("nan_value", make_input({3, 5}, t), {3, 5}, Scalar(kNaN));
          else add("float_value", make_input({3, 5}, t), {3, 5}, Scalar(2.5));  // truncates toward zero
          return out;
        },
        .reference = [ip](const RefArgs& a) -> Expected {
          const HostTensor self = a.tensor(0), mask = a.tensor(1);
          const double v = a.number(2);
          const int64_t vi = a.integer(2);
          const std::optional<Shape> s = broadcast(self.shape, mask.shape);
          if (!s || (ip && *s != self.shape)) return Expected::raises("");
          HostTensor r(*s, a.out);
          for_each_index(*s, [&](const Shape& idx, int64_t k) {
            const int64_t j = source_index(idx, self.shape);
            if (mask.i[source_index(idx, mask.shape)]) {
              if (r.floating()) r.set(k, v);
              else r.set_int(k, vi);
            } else if (r.floating()) {
              r.set(k, self.f[j]);
            } else {
              r.set_int(k, self.i[j]);
            }
          });
          return {{r}, false, ""};
        },
    });
  }
}

// ---------------------------------------------------------------------------
// Rows: copies, fills, random fills

// src converted to self's dtype as a C++ cast does (floats truncate toward
// zero, bool is "nonzero"), broadcast to self's shape.
Expected copy_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0), src = a.tensor(1);
  const std::optional<Shape> s = broadcast(self.shape, src.shape);
  if (!s || *s != self.shape) return Expected::raises("");
  HostTensor r(self.shape, a.out);
  for_each_index(self.shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = source_index(idx, src.shape);
    if (src.floating()) r.set(k, src.f[j]);
    else r.set_int(k, src.i[j]);
  });
  return {{r}, false, ""};
}

std::vector<Sample> copy_samples(DType t, SampleSize size) {
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& self, const Tensor& src) {
    out.push_back({std::move(name), {arg(self), arg(src)}, {}});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t), make_input({256, 400}, t));
    add("large_transposed", make_input({256, 400}, t), make_input({256, 400}, t, kTransposed));
    add("large_convert", make_input({256, 400}, t),
        make_input({256, 400}, t == DType::Float64 ? DType::Float32 : DType::Float64, Domain::Positive));
    return out;
  }
  add("contiguous", make_input({3, 5}, t), make_input({3, 5}, t));
  add("broadcast", make_input({3, 5}, t), make_input({5}, t));
  add("transposed", make_input({3, 5}, t, kTransposed), make_input({3, 5}, t));
  add("sliced", make_input({3, 5}, t, kSliced), make_input({3, 5}, t, kTransposed));
  for (DType from : kAll) {
    if (from == t) continue;
    // Negative floats have no uint8 value (the C++ conversion is undefined).
    const Domain d = t == DType::UInt8 && is_floating_point(from) ? Domain::Positive : Domain::Any;
    add("from_" + std::string(dtype_name(from)), make_input({2, 3}, t), make_input({2, 3}, from, d));
  }
  add("empty", make_input({0, 3}, t), make_input({0, 3}, t));
  add("0d", make_input({}, t), make_input({}, t));
  add("0d_src", make_input({2, 3}, t), make_input({}, t));
  add("bad_broadcast", make_input({3, 5}, t), make_input({4}, t));
  if (is_floating_point(t)) add("special", make_input({12}, t), from_values({12}, DType::Float64, kSpecials));
  return out;
}

std::vector<Sample> fill_samples(DType t, SampleSize size) {
  const Scalar v = scalar_of(t, is_floating_point(t) ? -2.75 : t == DType::Bool ? 1 : 7);
  std::vector<Sample> s = unary_samples(t, size, Domain::Any, {arg(v)}, false);
  if (size == SampleSize::Large) return s;
  if (!is_floating_point(t)) s.push_back({"float_value", {arg(make_input({2, 3}, t)), arg(Scalar(2.75))}, {}});
  if (t != DType::Bool) s.push_back({"bool_value", {arg(make_input({2, 3}, t)), arg(Scalar(true))}, {}});
  if (is_floating_point(t)) {
    s.push_back({"nan_value", {arg(make_input({2, 3}, t)), arg(Scalar(kNaN))}, {}});
    s.push_back({"inf_value", {arg(make_input({2, 3}, t, kTransposed)), arg(Scalar(-kInf))}, {}});
  }
  return s;
}

Expected fill_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0);
  const Scalar& v = std::get<Scalar>(a.sample().args[1].payload());
  HostTensor r(self.shape, a.out);
  for (int64_t k = 0; k < r.numel(); ++k) {
    if (r.floating()) r.set(k, v.to_double());
    else if (r.dtype == DType::Bool) r.set_int(k, v.to<bool>());
    else r.set_int(k, v.to_int());  // a float value truncates toward zero
  }
  return {{r}, false, ""};
}

// self, low, high, seed, offset: the shapes the property checks look at.
std::vector<Sample> random_samples(DType t, SampleSize size, IValue low, IValue high) {
  std::vector<Sample> out;
  int64_t seed = 1000;
  auto add = [&](std::string name, const Tensor& self) {
    out.push_back({std::move(name), {arg(self), low, high, int_arg(seed++), int_arg(7)}, {}});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t));
    return out;
  }
  add("contiguous", make_input({64, 64}, t));
  add("transposed", make_input({64, 64}, t, kTransposed));
  add("sliced", make_input({40, 32}, t, kSliced));
  add("empty", make_input({0, 3}, t));
  add("0d", make_input({}, t));
  return out;
}

enum class Dist : uint8_t { Uniform, Normal, Integers };

// Properties of a random fill: the values lie in the range (and are integers
// for random_), the moments fit the distribution, the same seed and offset
// give the same values in any layout, and another offset gives others.
::testing::AssertionResult check_random(const std::string& op, Dist dist, const Sample& s, const TensorList& outs) {
  const Tensor& self = s.args[0].tensor();
  if (outs.size() != 1 || !outs[0].is_same(self)) return ::testing::AssertionFailure() << "did not return self";
  const HostTensor h = to_host(self);
  const RefArgs args(s, self.dtype());
  const double lo = args.number(1), hi = args.number(2);
  double sum = 0, sum2 = 0, mn = kInf, mx = -kInf;
  for (int64_t k = 0; k < h.numel(); ++k) {
    const double v = h.at(k);
    if (dist == Dist::Uniform && !(v >= lo && v <= hi))  // == hi only by rounding to a narrow dtype
      return ::testing::AssertionFailure() << "value " << v << " outside [" << lo << ", " << hi << ")";
    if (dist == Dist::Integers && !(v >= lo && v < hi && v == std::floor(v)))
      return ::testing::AssertionFailure() << "value " << v << " is not an integer in [" << lo << ", " << hi << ")";
    if (!std::isfinite(v)) return ::testing::AssertionFailure() << "value " << v;
    sum += v;
    sum2 += v * v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  const double n = static_cast<double>(h.numel());
  if (n >= 1000) {
    const double mean = sum / n, sd = std::sqrt(std::max(0.0, sum2 / n - mean * mean));
    double want_mean = (lo + hi) / 2, want_sd = (hi - lo) / std::sqrt(12.0);
    if (dist == Dist::Normal) want_mean = lo, want_sd = hi;  // normal_(mean, std)
    if (dist == Dist::Integers) want_sd = std::sqrt(((hi - lo) * (hi - lo) - 1) / 12.0), want_mean = (lo + hi - 1) / 2;
    if (std::fabs(mean - want_mean) > 0.1 * want_sd || std::fabs(sd - want_sd) > 0.1 * want_sd)
      return ::testing::AssertionFailure() << "mean " << mean << " sd " << sd << ", expected about " << want_mean
                                           << " and " << want_sd;
    if (dist != Dist::Normal && (mn > lo + 0.05 * (hi - lo) || mx < hi - 0.05 * (hi - lo) - 1))
      return ::testing::AssertionFailure() << "values span [" << mn << ", " << mx << "] of [" << lo << ", " << hi
                                           << ")";
  }
  // The same seed and offset on a fresh contiguous tensor: the same values.
  Sample again = copy_sample(s);
  again.args[0] = arg(ember::zeros(self.sizes().vec(), self.dtype()));
  run_sample(op, again);
  const HostTensor h2 = to_host(again.args[0].tensor());
  if (h2.f != h.f || h2.i != h.i) return ::testing::AssertionFailure() << "another run with the same seed differs";
  if (h.numel() > 1) {
    Sample other = copy_sample(s);
    other.args[4] = int_arg(std::get<int64_t>(s.args[4].payload()) + 1);
    run_sample(op, other);
    const HostTensor h3 = to_host(other.args[0].tensor());
    if (h3.f == h.f && h3.i == h.i) return ::testing::AssertionFailure() << "another offset gave the same values";
  }
  return ::testing::AssertionSuccess();
}

void add_copy_and_random_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "copy_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = copy_samples, .reference = copy_ref});
  rows.push_back({.name = "fill_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = fill_samples, .reference = fill_ref});
  rows.push_back({.name = "clone", .dtypes = kAll, .out_dtype = same_dtype,
                  .samples = [](DType t, SampleSize size) { return unary_samples(t, size, Domain::Any); },
                  .reference = [](const RefArgs& a) { return map1(a.tensor(0), a.out, [](auto x) { return x; }); }});
  rows.push_back({
      .name = "uniform_", .dtypes = kFloating, .out_dtype = same_dtype, .kind = OpKind::Random,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = random_samples(t, size, float_arg(-2.0), float_arg(3.0));
        if (size == SampleSize::Small) {
          s.push_back({"low_above_high", {arg(make_input({4}, t)), float_arg(3.0), float_arg(-2.0), int_arg(1),
                                          int_arg(0)}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        if (a.number(1) > a.number(2)) return Expected::raises("");
        return {};
      },
      .check = [](const Sample& s, const TensorList& outs) { return check_random("uniform_", Dist::Uniform, s, outs); },
  });
  rows.push_back({
      .name = "normal_", .dtypes = kFloating, .out_dtype = same_dtype, .kind = OpKind::Random,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = random_samples(t, size, float_arg(1.5), float_arg(2.0));
        if (size == SampleSize::Small) {
          s.push_back({"negative_std", {arg(make_input({4}, t)), float_arg(0.0), float_arg(-1.0), int_arg(1),
                                        int_arg(0)}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        if (a.number(2) < 0) return Expected::raises("");
        return {};
      },
      .check = [](const Sample& s, const TensorList& outs) { return check_random("normal_", Dist::Normal, s, outs); },
  });
  rows.push_back({
      .name = "random_", .dtypes = kNumeric, .out_dtype = same_dtype, .kind = OpKind::Random,
      .samples = [](DType t, SampleSize size) {
        const int64_t lo = t == DType::UInt8 ? 3 : -5, hi = t == DType::UInt8 ? 200 : 7;
        std::vector<Sample> s = random_samples(t, size, int_arg(lo), int_arg(hi));
        if (size == SampleSize::Small) {
          s.push_back({"low_above_high", {arg(make_input({4}, t)), int_arg(hi), int_arg(lo), int_arg(1), int_arg(0)}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        if (a.integer(1) >= a.integer(2)) return Expected::raises("low");
        return {};
      },
      .check = [](const Sample& s, const TensorList& outs) { return check_random("random_", Dist::Integers, s, outs); },
  });
}

// ---------------------------------------------------------------------------
// Rows: views. Each reference maps an output index to an input index.

// out[idx] = in[src(idx)], where src gives a multi-index into `in`.
template <class Src>
Expected gather(const HostTensor& in, const Shape& out_shape, DType out, Src src) {
  HostTensor r(out_shape, out);
  for_each_index(out_shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = linear_index(src(idx), in.shape);
    if (in.floating()) r.set(k, in.f[j]);
    else r.set_int(k, in.i[j]);
  });
  return {{r}, false, ""};
}

Sample view_sample(std::string name, const Tensor& self, Stack rest, std::string error = "") {
  return {std::move(name), concat({arg(self)}, rest), {}, std::move(error)};
}

Expected view_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  Shape size = a.ints(1);
  int64_t known = 1, infer = -1;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] == -1) infer = static_cast<int64_t>(d);
    else known *= size[d];
  }
  if (infer >= 0 && known != 0) size[infer] = in.numel() / known;
  if (numel_of(size) != in.numel()) return Expected::raises("");
  return gather(in, size, a.out, [&](const Shape& idx) {  // the same row-major order
    Shape src(in.shape.size());
    int64_t k = linear_index(idx, size);
    for (int64_t d = in.dim() - 1; d >= 0; --d) {
      src[d] = k % in.shape[d];
      k /= in.shape[d];
    }
    return src;
  });
}

Expected permute_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const Shape dims = a.ints(1);
  if (static_cast<int64_t>(dims.size()) != in.dim()) return Expected::raises("");
  Shape perm, out_shape;
  std::vector<bool> seen(dims.size(), false);
  for (int64_t d : dims) {
    const std::optional<int64_t> w = wrap(d, in.dim());
    if (!w || seen[*w]) return Expected::raises("");
    seen[*w] = true;
    perm.push_back(*w);
    out_shape.push_back(in.shape[*w]);
  }
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src(in.shape.size());
    for (size_t i = 0; i < perm.size(); ++i) src[perm[i]] = idx[i];
    return src;
  });
}

Expected transpose_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d0 = wrap(a.integer(1), in.dim()), d1 = wrap(a.integer(2), in.dim());
  if (!d0 || !d1) return Expected::raises("");
  if (in.dim() == 0) return {{in}, false, ""};
  Shape out_shape = in.shape;
  std::swap(out_shape[*d0], out_shape[*d1]);
  return gather(in, out_shape, a.out, [&](Shape idx) {
    std::swap(idx[*d0], idx[*d1]);
    return idx;
  });
}

// Python's slicing: bounds clamp to the dim, step > 0.
Expected slice_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const int64_t step = a.integer(4);
  if (in.dim() == 0 || step <= 0) return Expected::raises("");
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
  if (!d) return Expected::raises("");
  const int64_t n = in.shape[*d];
  int64_t s = a.is_none(2) ? 0 : a.integer(2), e = a.is_none(3) ? n : a.integer(3);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  Shape out_shape = in.shape;
  out_shape[*d] = (e - s + step - 1) / step;
  return gather(in, out_shape, a.out, [&](Shape idx) {
    idx[*d] = s + idx[*d] * step;
    return idx;
  });
}

Expected select_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  if (in.dim() == 0) return Expected::raises("");
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
  if (!d) return Expected::raises("");
  const int64_t n = in.shape[*d];
  int64_t index = a.integer(2);
  if (index < -n || index >= n) return Expected::raises("out of range");
  if (index < 0) index += n;
  Shape out_shape = in.shape;
  out_shape.erase(out_shape.begin() + *d);
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src = idx;
    src.insert(src.begin() + *d, index);
    return src;
  });
}

// Drops the size-1 dims in `drop` (all size-1 dims when it is empty and `all`).
Expected squeeze_ref(const HostTensor& in, DType out, std::optional<int64_t> only) {
  Shape out_shape;
  std::vector<bool> dropped(in.shape.size(), false);
  for (size_t d = 0; d < in.shape.size(); ++d) {
    dropped[d] = in.shape[d] == 1 && (!only || *only == static_cast<int64_t>(d));
    if (!dropped[d]) out_shape.push_back(in.shape[d]);
  }
  return gather(in, out_shape, out, [&](const Shape& idx) {
    Shape src(in.shape.size(), 0);
    size_t k = 0;
    for (size_t d = 0; d < in.shape.size(); ++d) src[d] = dropped[d] ? 0 : idx[k++];
    return src;
  });
}

Expected unsqueeze_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim() + 1);
  if (!d) return Expected::raises("");
  Shape out_shape = in.shape;
  out_shape.insert(out_shape.begin() + *d, 1);
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src = idx;
    src.erase(src.begin() + *d);
    return src;
  });
}

Expected expand_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const Shape size = a.ints(1);
  if (size.size() < in.shape.size()) return Expected::raises("");
  const size_t lead = size.size() - in.shape.size();
  Shape out_shape(size.size());
  for (size_t d = 0; d < size.size(); ++d) {
    const int64_t cur = d < lead ? 1 : in.shape[d - lead];
    int64_t want = size[d];
    if (want == -1) {
      if (d < lead) return Expected::raises("");
      want = cur;
    }
    if (want != cur && cur != 1) return Expected::raises("");
    out_shape[d] = want;
  }
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src(in.shape.size());
    for (size_t d = 0; d < src.size(); ++d) src[d] = in.shape[d] == 1 ? 0 : idx[d + lead];
    return src;
  });
}

Expected diagonal_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  if (in.dim() < 2) return Expected::raises("");
  const int64_t off = a.integer(1);
  const std::optional<int64_t> d1 = wrap(a.integer(2), in.dim()), d2 = wrap(a.integer(3), in.dim());
  if (!d1 || !d2 || *d1 == *d2) return Expected::raises("");
  const int64_t n1 = in.shape[*d1], n2 = in.shape[*d2];
  const int64_t len = std::max<int64_t>(0, off >= 0 ? std::min(n1, n2 - off) : std::min(n1 + off, n2));
  Shape out_shape;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (d != *d1 && d != *d2) out_shape.push_back(in.shape[d]);
  }
  out_shape.push_back(len);
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src(in.shape.size());
    size_t k = 0;
    for (int64_t d = 0; d < in.dim(); ++d) {
      if (d != *d1 && d != *d2) src[d] = idx[k++];
    }
    const int64_t i = idx.back();
    src[*d1] = i + (off < 0 ? -off : 0);
    src[*d2] = i + (off > 0 ? off : 0);
    return src;
  });
}

// as_strided reads the storage; the samples' inputs are fresh contiguous tensors, so storage = values.
Expected as_strided_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const Shape size = a.ints(1), stride = a.ints(2);
  const int64_t off = a.is_none(3) ? 0 : a.integer(3);
  if (size.size() != stride.size()) return Expected::raises("");
  int64_t last = off;
  for (size_t d = 0; d < size.size(); ++d) last += (size[d] - 1) * stride[d];
  if (numel_of(size) > 0 && last >= in.numel()) return Expected::raises("");
  HostTensor r(size, a.out);
  for_each_index(size, [&](const Shape& idx, int64_t k) {
    int64_t j = off;
    for (size_t d = 0; d < size.size(); ++d) j += idx[d] * stride[d];
    if (in.floating()) r.set(k, in.f[j]);
    else r.set_int(k, in.i[j]);
  });
  return {{r}, false, ""};
}

void add_view_rows(std::vector<OpInfo>& rows) {
  auto view_row = [&](std::string name, std::function<std::vector<Sample>(DType)> small,
                      std::function<Sample(DType)> large, std::function<Expected(const RefArgs&)> ref,
                      std::vector<Divergence> divergences = {}) {
    rows.push_back({.name = std::move(name), .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::View,
                    .samples = [small, large](DType t, SampleSize size) {
                      return size == SampleSize::Large ? std::vector<Sample>{large(t)} : small(t);
                    },
                    .reference = std::move(ref), .divergences = std::move(divergences)});
  };
  view_row("view", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({2, 3, 4}, t), {ints_arg({6, 4})}),
            view_sample("infer", make_input({2, 3, 4}, t), {ints_arg({-1, 3})}),
            view_sample("flatten", make_input({2, 3, 4}, t), {ints_arg({24})}),
            view_sample("transposed_split", make_input({3, 4}, t, kTransposed), {ints_arg({3, 2, 2})}),
            view_sample("sliced_split", make_input({3, 4}, t, kSliced), {ints_arg({3, 2, 2})}),
            view_sample("empty", make_input({0, 4}, t), {ints_arg({4, 0})}),
            view_sample("empty_infer", make_input({0, 4}, t), {ints_arg({-1})}),
            view_sample("0d", make_input({}, t), {ints_arg({1})}),
            view_sample("to_0d", make_input({1}, t), {ints_arg({})}),
            view_sample("transposed_flatten", make_input({3, 4}, t, kTransposed), {ints_arg({12})}, "view"),
            view_sample("bad_numel", make_input({2, 3}, t), {ints_arg({4})}, "view")};
  }, [=](DType t) { return view_sample("large", make_input({256, 400}, t), {ints_arg({400, -1})}); }, view_ref);
  view_row("permute", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({2, 3, 4}, t), {ints_arg({2, 0, 1})}),
            view_sample("negative", make_input({2, 3, 4}, t), {ints_arg({-1, 0, 1})}),
            view_sample("transposed", make_input({3, 4}, t, kTransposed), {ints_arg({1, 0})}),
            view_sample("empty", make_input({0, 2, 3}, t), {ints_arg({2, 0, 1})}),
            view_sample("0d", make_input({}, t), {ints_arg({})}),
            view_sample("repeated", make_input({2, 3, 4}, t), {ints_arg({0, 0, 1})}, "permute"),
            view_sample("too_few", make_input({2, 3, 4}, t), {ints_arg({0, 1})}, "permute")};
  }, [=](DType t) { return view_sample("large", make_input({64, 40, 40}, t), {ints_arg({2, 0, 1})}); }, permute_ref);
  view_row("transpose", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({2, 3, 4}, t), {int_arg(0), int_arg(2)}),
            view_sample("negative", make_input({2, 3, 4}, t), {int_arg(-1), int_arg(-2)}),
            view_sample("same_dim", make_input({2, 3}, t), {int_arg(1), int_arg(1)}),
            view_sample("sliced", make_input({3, 4}, t, kSliced), {int_arg(0), int_arg(1)}),
            view_sample("empty", make_input({0, 3}, t), {int_arg(0), int_arg(1)}),
            view_sample("0d", make_input({}, t), {int_arg(0), int_arg(-1)}),
            view_sample("0d_bad_dim", make_input({}, t), {int_arg(0), int_arg(1)}, "transpose"),
            view_sample("bad_dim", make_input({2, 3}, t), {int_arg(0), int_arg(2)}, "transpose")};
  }, [=](DType t) { return view_sample("large", make_input({256, 400}, t), {int_arg(0), int_arg(1)}); }, transpose_ref);
  view_row("slice", [=](DType t) -> std::vector<Sample> {
    auto s = [&](std::string n, const Tensor& x, int64_t d, std::optional<int64_t> b, std::optional<int64_t> e,
                 int64_t st, std::string err = "") {
      return view_sample(std::move(n), x, {int_arg(d), opt_int_arg(b), opt_int_arg(e), int_arg(st)}, std::move(err));
    };
    return {s("step2", make_input({5, 6}, t), 1, 1, 5, 2),
            s("all", make_input({5, 6}, t), 0, std::nullopt, std::nullopt, 1),
            s("negative", make_input({5, 6}, t), -1, -4, -1, 1),
            s("end_beyond", make_input({5, 6}, t), 0, 2, 100, 3),
            s("start_after_end", make_input({5, 6}, t), 1, 4, 2, 1),
            s("transposed", make_input({5, 6}, t, kTransposed), 0, 1, std::nullopt, 2),
            s("empty", make_input({0, 6}, t), 0, 0, 1, 1),
            s("0d", make_input({}, t), 0, 0, 1, 1, "slice"),
            s("zero_step", make_input({5, 6}, t), 0, 0, 4, 0, "slice")};
  }, [=](DType t) {
    return view_sample("large", make_input({256, 800}, t), {int_arg(1), int_arg(1), none_arg(), int_arg(2)});
  }, slice_ref);
  view_row("select", [=](DType t) -> std::vector<Sample> {
    return {view_sample("dim0", make_input({3, 4}, t), {int_arg(0), int_arg(1)}),
            view_sample("negative_index", make_input({3, 4}, t), {int_arg(1), int_arg(-1)}),
            view_sample("transposed", make_input({3, 4}, t, kTransposed), {int_arg(-1), int_arg(3)}),
            view_sample("to_0d", make_input({4}, t), {int_arg(0), int_arg(2)}),
            view_sample("empty", make_input({0, 4}, t), {int_arg(1), int_arg(2)}),
            view_sample("out_of_range", make_input({3, 4}, t), {int_arg(0), int_arg(3)}, "select"),
            view_sample("0d", make_input({}, t), {int_arg(0), int_arg(0)}, "select")};
  }, [=](DType t) { return view_sample("large", make_input({4, 256, 400}, t), {int_arg(0), int_arg(2)}); }, select_ref);
  view_row("squeeze", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({1, 3, 1, 4}, t), {}),
            view_sample("all_ones", make_input({1, 1}, t), {}),
            view_sample("transposed", make_input({1, 4}, t, kTransposed), {}),
            view_sample("empty", make_input({0, 1}, t), {}),
            view_sample("0d", make_input({}, t), {})};
  }, [=](DType t) { return view_sample("large", make_input({1, 256, 1, 400}, t), {}); },
           [](const RefArgs& a) { return squeeze_ref(a.tensor(0), a.out, std::nullopt); });
  view_row("squeeze_dim", [=](DType t) -> std::vector<Sample> {
    return {view_sample("dim0", make_input({1, 3, 1}, t), {int_arg(0)}),
            view_sample("negative", make_input({1, 3, 1}, t), {int_arg(-1)}),
            view_sample("not_one", make_input({1, 3, 1}, t), {int_arg(1)}),
            view_sample("empty", make_input({0, 1}, t), {int_arg(1)}),
            view_sample("0d", make_input({}, t), {int_arg(-1)}),
            view_sample("bad_dim", make_input({1, 3, 1}, t), {int_arg(3)}, "squeeze")};
  }, [=](DType t) { return view_sample("large", make_input({256, 1, 400}, t), {int_arg(1)}); },
           [](const RefArgs& a) -> Expected {
             const HostTensor in = a.tensor(0);
             const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
             if (!d) return Expected::raises("");
             return squeeze_ref(in, a.out, in.dim() == 0 ? std::nullopt : d);
           });
  view_row("unsqueeze", [=](DType t) -> std::vector<Sample> {
    return {view_sample("dim0", make_input({3, 4}, t), {int_arg(0)}),
            view_sample("middle", make_input({3, 4}, t, kTransposed), {int_arg(1)}),
            view_sample("last", make_input({3, 4}, t, kSliced), {int_arg(2)}),
            view_sample("negative", make_input({3, 4}, t), {int_arg(-1)}),
            view_sample("negative_first", make_input({3, 4}, t), {int_arg(-3)}),
            view_sample("empty", make_input({0, 4}, t), {int_arg(1)}),
            view_sample("0d", make_input({}, t), {int_arg(0)}),
            view_sample("bad_dim", make_input({3, 4}, t), {int_arg(3)}, "unsqueeze")};
  }, [=](DType t) { return view_sample("large", make_input({256, 400}, t), {int_arg(1)}); }, unsqueeze_ref);
  view_row("expand", [=](DType t) -> std::vector<Sample> {
    return {view_sample("new_dims", make_input({3, 1}, t), {ints_arg({2, 3, 4})}),
            view_sample("keep", make_input({3, 1}, t), {ints_arg({-1, 5})}),
            view_sample("vector", make_input({4}, t, kSliced), {ints_arg({3, 4})}),
            view_sample("0d", make_input({}, t), {ints_arg({2, 2})}),
            view_sample("empty", make_input({0, 1}, t), {ints_arg({0, 3})}),
            view_sample("to_empty", make_input({1, 3}, t), {ints_arg({0, 3})}),
            view_sample("not_one", make_input({3, 2}, t), {ints_arg({3, 4})}, "expand"),
            view_sample("infer_new_dim", make_input({3}, t), {ints_arg({-1, 3})}, "expand")};
  }, [=](DType t) { return view_sample("large", make_input({256, 1}, t), {ints_arg({256, 400})}); }, expand_ref);
  view_row("diagonal", [=](DType t) -> std::vector<Sample> {
    auto s = [&](std::string n, const Tensor& x, int64_t off, int64_t d1, int64_t d2, std::string err = "") {
      return view_sample(std::move(n), x, {int_arg(off), int_arg(d1), int_arg(d2)}, std::move(err));
    };
    return {s("main", make_input({4, 5}, t), 0, 0, 1), s("above", make_input({4, 5}, t), 1, 0, 1),
            s("below", make_input({4, 5}, t), -2, 0, 1), s("swapped_dims", make_input({4, 5}, t, kTransposed), 2, 1, 0),
            s("batched", make_input({2, 3, 4}, t), 0, 1, 2),
            s("outer_dims", make_input({2, 3, 4}, t, kSliced), 1, -1, 0),
            s("beyond", make_input({4, 5}, t), 7, 0, 1), s("empty", make_input({0, 3}, t), 0, 0, 1),
            s("1d", make_input({4}, t), 0, 0, 1, "diagonal"),
            s("same_dims", make_input({4, 5}, t), 0, 1, 1, "diagonal")};
  }, [=](DType t) { return view_sample("large", make_input({400, 400}, t), {int_arg(1), int_arg(0), int_arg(1)}); },
           diagonal_ref);
  view_row("as_strided", [=](DType t) -> std::vector<Sample> {
    auto s = [&](std::string n, Shape shape, Shape size, Shape stride, std::optional<int64_t> off,
                 std::string err = "") {
      return view_sample(std::move(n), make_input(shape, t), {ints_arg(size), ints_arg(stride), opt_int_arg(off)},
                         std::move(err));
    };
    return {s("rows", {4, 5}, {3, 3}, {5, 1}, std::nullopt), s("columns", {4, 5}, {2, 2}, {1, 5}, 3),
            s("overlapping", {4, 5}, {3, 3}, {1, 1}, 2), s("zero_stride", {4, 5}, {2, 3}, {0, 1}, 1),
            s("empty", {4, 5}, {0, 3}, {1, 1}, 0), s("0d", {4, 5}, {}, {}, 7),
            s("beyond_storage", {4, 5}, {5, 5}, {5, 1}, 1, "as_strided"),
            s("rank_mismatch", {4, 5}, {2, 2}, {1}, 0, "as_strided")};
  }, [=](DType t) {
    return view_sample("large", make_input({256, 400}, t), {ints_arg({255, 400}), ints_arg({400, 1}), int_arg(400)});
  }, as_strided_ref);
}

// ---------------------------------------------------------------------------
// Rows: advanced indexing

Tensor int64_values(const Shape& shape, const std::vector<double>& v) { return from_values(shape, DType::Int64, v); }

// Where each element of self[indices] comes from (Note [Advanced indexing] in
// kernels/cpu/index.cpp states the rules; they are NumPy's).
struct IndexPlan {
  Shape out_shape;
  std::vector<int64_t> src;  // per output element, the linear index into self
  bool error = false;
};

IndexPlan index_plan(const HostTensor& self, const std::vector<std::optional<HostTensor>>& indices) {
  IndexPlan plan;
  std::vector<std::optional<HostTensor>> idx;  // one entry per dim of self: an int index or none
  for (const std::optional<HostTensor>& e : indices) {
    if (!e || (e->dtype != DType::Bool && e->dtype != DType::UInt8)) {
      idx.push_back(e);
      continue;
    }
    // A mask over dims d..d+k-1 becomes k index tensors: its nonzero positions, row-major.
    const size_t d = idx.size();
    if (d + e->shape.size() > self.shape.size()) return {{}, {}, true};
    for (size_t j = 0; j < e->shape.size(); ++j) {
      if (e->shape[j] != self.shape[d + j]) return {{}, {}, true};
    }
    std::vector<Shape> pos;
    for_each_index(e->shape, [&](const Shape& p, int64_t k) {
      if (e->i[k]) pos.push_back(p);
    });
    for (size_t j = 0; j < e->shape.size(); ++j) {
      HostTensor t({static_cast<int64_t>(pos.size())}, DType::Int64);
      for (size_t p = 0; p < pos.size(); ++p) t.i[p] = pos[p][j];
      idx.push_back(t);
    }
  }
  if (idx.size() > self.shape.size()) return {{}, {}, true};
  idx.resize(self.shape.size());
  std::vector<size_t> indexed, rest;
  for (size_t d = 0; d < idx.size(); ++d) (idx[d] ? indexed : rest).push_back(d);
  Shape b;
  for (size_t d : indexed) {
    const std::optional<Shape> s = broadcast(b, idx[d]->shape);
    if (!s) return {{}, {}, true};
    b = *s;
  }
  // Adjacent indexed dims: B replaces them in place; separated: B goes first.
  const bool adjacent = indexed.empty() || indexed.back() - indexed.front() + 1 == indexed.size();
  const size_t first = adjacent && !indexed.empty() ? indexed.front() : 0;
  for (size_t k = 0; k < first; ++k) plan.out_shape.push_back(self.shape[rest[k]]);
  if (!indexed.empty()) plan.out_shape.insert(plan.out_shape.end(), b.begin(), b.end());
  for (size_t k = first; k < rest.size(); ++k) plan.out_shape.push_back(self.shape[rest[k]]);
  const size_t nb = indexed.empty() ? 0 : b.size();
  for_each_index(plan.out_shape, [&](const Shape& o, int64_t) {
    Shape s(self.shape.size());
    const Shape bidx(o.begin() + static_cast<int64_t>(first), o.begin() + static_cast<int64_t>(first + nb));
    for (size_t k = 0; k < rest.size(); ++k) s[rest[k]] = o[k < first ? k : k + nb];
    for (size_t d : indexed) {
      int64_t v = idx[d]->at_int(source_index(bidx, idx[d]->shape));
      const int64_t n = self.shape[d];
      if (v < -n || v >= n) plan.error = true;
      s[d] = v < 0 ? v + n : v;
    }
    plan.src.push_back(plan.error ? 0 : linear_index(s, self.shape));
  });
  return plan;
}

Tensor undefined() { return Tensor(); }

std::vector<Sample> index_samples(DType t, SampleSize size, bool put) {
  std::vector<Sample> out;
  // index: (self, indices); index_put_: (self, indices, values of the result's shape, accumulate).
  auto add = [&](std::string name, const Tensor& self, TensorList idx, Shape values = {}, bool acc = false,
                 std::string error = "") {
    Stack a = {arg(self), arg(idx)};
    if (put) a.insert(a.end(), {arg(make_input(values, t)), bool_arg(acc)});
    out.push_back({std::move(name), std::move(a), {}, std::move(error)});
  };
  const Tensor none = undefined();
  if (size == SampleSize::Large) {
    std::vector<double> rows;
    for (int64_t k = 0; k < 300; ++k) rows.push_back(static_cast<double>((k * 7) % 400));  // distinct
    add("large", make_input({400, 256}, t), {int64_values({300}, rows)}, {300, 256});
    if (put) {
      add("large_accumulate", make_input({400, 256}, t), {int64_values({300}, {3, 1, 4, 1, 5, 9, 2, 6})}, {300, 256},
          true);
    }
    return out;
  }
  add("dim0", make_input({5, 4}, t), {int64_values({3}, {4, 0, -1})}, {3, 4});
  add("dim1", make_input({5, 4}, t), {none, int64_values({2, 2}, {1, 3, 0, -4})}, {5, 2, 2});
  add("two_adjacent", make_input({5, 4, 3}, t), {int64_values({3}, {0, 2, 4}), int64_values({3}, {1, 2, -1})}, {3, 3});
  add("broadcast_indices", make_input({5, 4}, t), {int64_values({2, 1}, {0, 4}), int64_values({3}, {0, 1, 3})}, {2, 3});
  add("separated", make_input({5, 4, 3}, t), {int64_values({2}, {1, 3}), none, int64_values({2}, {0, 2})}, {2, 4});
  add("int32_index", make_input({5, 4}, t, kSliced), {from_values({2}, DType::Int32, {1, 2})}, {2, 4});
  add("mask", make_input({3, 4}, t), {from_values({3, 4}, DType::Bool, {1, 0, 0, 1, 1})}, {7});
  add("mask_dim1", make_input({3, 4}, t, kTransposed), {none, from_values({4}, DType::Bool, {0, 1, 1, 0})}, {3, 2});
  add("transposed", make_input({4, 5}, t, kTransposed), {int64_values({2}, {3, 1})}, {2, 5});
  add("empty_index", make_input({5, 4}, t), {int64_values({0}, {0})}, {0, 4});
  add("empty_self", make_input({0, 4}, t), {none, int64_values({1}, {2})}, {0, 1});
  add("out_of_range", make_input({5, 4}, t), {int64_values({2}, {1, 5})}, {2, 4}, false, "index");
  add("too_many", make_input({5}, t), {int64_values({1}, {1}), int64_values({1}, {0})}, {1}, false, "too many");
  if (put) {
    add("broadcast_values", make_input({5, 4}, t), {int64_values({2}, {1, 3})}, {4});
    add("scalar_value", make_input({3, 4}, t), {from_values({3, 4}, DType::Bool, {0, 1, 1})}, {});
    add("accumulate_repeated", make_input({5, 4}, t), {int64_values({4}, {1, 1, 3, 1})}, {4, 4}, true);
    add("accumulate_mask", make_input({3, 4}, t, kTransposed), {from_values({3, 4}, DType::Bool, {1, 0, 1})}, {}, true);
    add("bad_values", make_input({5, 4}, t), {int64_values({2}, {1, 3})}, {3}, false, "shape mismatch");
  }
  return out;
}

Expected index_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0);
  const IndexPlan plan = index_plan(self, a.tensors(1));
  if (plan.error) return Expected::raises("");
  HostTensor r(plan.out_shape, a.out);
  for (size_t k = 0; k < plan.src.size(); ++k) {
    if (self.floating()) r.set(static_cast<int64_t>(k), self.f[plan.src[k]]);
    else r.set_int(static_cast<int64_t>(k), self.i[plan.src[k]]);
  }
  return {{r}, false, ""};
}

// self[indices] = values (broadcast to the result's shape); repeated
// positions take the last value, or the sum of all with accumulate.
Expected index_put_ref(const RefArgs& a) {
  HostTensor r = a.tensor(0);
  const HostTensor values = a.tensor(2);
  const bool acc = a.flag(3);
  const IndexPlan plan = index_plan(r, a.tensors(1));
  if (plan.error) return Expected::raises("");
  const std::optional<Shape> s = broadcast(plan.out_shape, values.shape);
  if (!s || *s != plan.out_shape) return Expected::raises("");
  for_each_index(plan.out_shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = plan.src[k], v = source_index(idx, values.shape);
    if (r.floating()) r.set(j, acc ? r.f[j] + values.f[v] : values.f[v]);
    else r.set_int(j, acc ? r.i[j] + values.i[v] : values.i[v]);
  });
  return {{r}, false, ""};
}

void add_index_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "index", .dtypes = kAll, .out_dtype = same_dtype,
                  .samples = [](DType t, SampleSize size) { return index_samples(t, size, false); },
                  .reference = index_ref});
  rows.push_back({.name = "index_put_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = [](DType t, SampleSize size) { return index_samples(t, size, true); },
                  .reference = index_put_ref});
  rows.push_back({
      .name = "nonzero", .dtypes = kAll, .out_dtype = int64_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = unary_samples(t, size, Domain::Unit);
        if (size == SampleSize::Small) s.push_back({"all_zero", {arg(ember::zeros({2, 3}, t))}, {}, ""});
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        const HostTensor in = a.tensor(0);
        std::vector<Shape> pos;
        for_each_index(in.shape, [&](const Shape& p, int64_t k) {
          if (in.at(k) != 0 || std::isnan(in.at(k))) pos.push_back(p);
        });
        HostTensor r({static_cast<int64_t>(pos.size()), in.dim()}, DType::Int64);
        for (size_t p = 0; p < pos.size(); ++p) {
          for (int64_t d = 0; d < in.dim(); ++d) r.i[p * in.dim() + d] = pos[p][d];
        }
        return {{r}, false, ""};
      },
  });
}

// ---------------------------------------------------------------------------
// Rows: reductions and scans

// How a reduction's schema lists its arguments.
enum class RedStyle : uint8_t {
  Dims,        // (self, int[] dim, bool keepdim): mean amax amin logsumexp all any
  DimsDtype,   // (self, int[] dim, bool keepdim, ScalarType? dtype): sum prod
  Correction,  // (self, int[] dim, int correction, bool keepdim): var std
  Norm,        // (self, Scalar p, int[] dim, bool keepdim)
  OneDim,      // (self, int dim, bool keepdim): max_dim min_dim
  OptDim,      // (self, int? dim, bool keepdim): argmax argmin
  Scan,        // (self, int dim, ScalarType? dtype): cumsum cumprod
};

bool single_dim(RedStyle st) { return st == RedStyle::OneDim || st == RedStyle::OptDim || st == RedStyle::Scan; }

Stack red_args(RedStyle st, const Tensor& self, const Shape& dims, bool keepdim) {
  switch (st) {
    case RedStyle::Dims: return {arg(self), ints_arg(dims), bool_arg(keepdim)};
    case RedStyle::DimsDtype: return {arg(self), ints_arg(dims), bool_arg(keepdim), none_arg()};
    case RedStyle::Correction: return {arg(self), ints_arg(dims), int_arg(1), bool_arg(keepdim)};
    case RedStyle::Norm: return {arg(self), arg(Scalar(2)), ints_arg(dims), bool_arg(keepdim)};
    case RedStyle::OneDim: return {arg(self), int_arg(dims.at(0)), bool_arg(keepdim)};
    case RedStyle::OptDim: return {arg(self), dims.empty() ? none_arg() : int_arg(dims[0]), bool_arg(keepdim)};
    case RedStyle::Scan: return {arg(self), int_arg(dims.at(0)), none_arg()};
  }
  return {};
}

// Pairs of special values: row i*12+j holds (specials[i], specials[j]).
Tensor special_pairs(DType t) {
  std::vector<double> v;
  for (double x : kSpecials) {
    for (double y : kSpecials) v.insert(v.end(), {x, y});
  }
  const int64_t n = static_cast<int64_t>(kSpecials.size());
  return from_values({n * n, 2}, t, v);
}

std::vector<Sample> reduction_samples(RedStyle st, DType t, SampleSize size, Domain d = Domain::Any) {
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& self, Shape dims, bool keepdim = false, std::string error = "") {
    if (single_dim(st) && dims.size() != 1 && !(st == RedStyle::OptDim && dims.empty())) return;
    out.push_back({std::move(name), red_args(st, self, dims, keepdim), {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large_dim1", make_input({256, 400}, t, d), {1});
    add("large_dim0", make_input({256, 400}, t, d), {0});
    add("large_all", make_input({256, 400}, t, d), {});
    add("large_transposed", make_input({256, 400}, t, d, kTransposed), {1});
    return out;
  }
  add("all", make_input({3, 4, 5}, t, d), {});
  add("all_keepdim", make_input({3, 4, 5}, t, d), {}, true);
  add("dim1", make_input({3, 4, 5}, t, d), {1});
  add("dims02", make_input({3, 4, 5}, t, d), {0, 2});
  add("neg_dim", make_input({3, 4, 5}, t, d), {-1});
  add("keepdim", make_input({3, 4, 5}, t, d), {1}, true);
  add("transposed", make_input({4, 6}, t, d, kTransposed), {0});
  add("sliced", make_input({3, 5}, t, d, kSliced), {1});
  add("empty_reduced", make_input({0, 4}, t, d), {0});
  add("empty_kept", make_input({0, 4}, t, d), {1});
  add("empty_all", make_input({0, 4}, t, d), {});
  add("0d", make_input({}, t, d), {});
  add("0d_dim", make_input({}, t, d), {0});
  add("bad_dim", make_input({3, 4}, t, d), {2}, false, "dim");
  if (!single_dim(st)) add("repeated_dim", make_input({3, 4}, t, d), {1, -1}, false, "dim");
  if (is_floating_point(t)) add("special_pairs", special_pairs(t), {1});
  return out;
}

struct Reduction {
  HostTensor in;
  std::optional<std::vector<bool>> mask;  // nullopt: a bad dim
  bool keepdim = false;
};

Reduction read_reduction(const RefArgs& a, RedStyle st) {
  Reduction r{a.tensor(0), {}, false};
  Shape dims;
  switch (st) {
    case RedStyle::Dims:
    case RedStyle::DimsDtype: dims = a.ints(1), r.keepdim = a.flag(2); break;
    case RedStyle::Correction: dims = a.ints(1), r.keepdim = a.flag(3); break;
    case RedStyle::Norm: dims = a.ints(2), r.keepdim = a.flag(3); break;
    case RedStyle::OneDim: dims = {a.integer(1)}, r.keepdim = a.flag(2); break;
    case RedStyle::OptDim: dims = a.is_none(1) ? Shape{} : Shape{a.integer(1)}, r.keepdim = a.flag(2); break;
    case RedStyle::Scan: dims = {a.integer(1)}; break;
  }
  r.mask = dim_mask(dims, r.in.dim());
  return r;
}

// The reduced values of one output element, as doubles and as int64.
struct Group {
  const HostTensor& in;
  const std::vector<int64_t>& elems;
  double d(size_t k) const { return in.at(elems[k]); }
  int64_t i(size_t k) const { return in.at_int(elems[k]); }
  size_t size() const { return elems.size(); }
  bool has_nan() const {
    for (size_t k = 0; k < size(); ++k) {
      if (std::isnan(d(k))) return true;
    }
    return false;
  }
};

// A reduction row: fold(group, out, k) writes output element k.
using Fold = std::function<void(const Group&, HostTensor&, int64_t)>;

std::function<Expected(const RefArgs&)> reduction_ref(RedStyle st, Fold fold, bool needs_elements = false) {
  return [st, fold, needs_elements](const RefArgs& a) -> Expected {
    const Reduction red = read_reduction(a, st);
    if (!red.mask) return Expected::raises("dim");
    bool empty_group = false;
    auto each = [&](HostTensor& out, int64_t k, const std::vector<int64_t>& e) {
      empty_group |= e.empty();
      if (!e.empty() || !needs_elements) fold(Group{red.in, e}, out, k);
    };
    HostTensor r = reduce_ref(red.in, *red.mask, red.keepdim, a.out, each);
    // An empty reduction with no identity is an error even when the result is empty.
    if (needs_elements) {
      for (size_t d = 0; d < red.in.shape.size(); ++d) {
        if ((*red.mask)[d] && red.in.shape[d] == 0) empty_group = true;
      }
      if (empty_group) return Expected::raises("");
    }
    return {{r}, false, ""};
  };
}

void sum_fold(const Group& g, HostTensor& r, int64_t k) {
  if (r.floating() || g.in.floating()) {
    double s = 0;
    for (size_t j = 0; j < g.size(); ++j) s += g.d(j);
    r.set(k, s);
  } else {
    int64_t s = 0;
    for (size_t j = 0; j < g.size(); ++j) s += g.i(j);
    r.set_int(k, s);
  }
}

void prod_fold(const Group& g, HostTensor& r, int64_t k) {
  if (r.floating() || g.in.floating()) {
    double s = 1;
    for (size_t j = 0; j < g.size(); ++j) s *= g.d(j);
    r.set(k, s);
  } else {
    int64_t s = 1;
    for (size_t j = 0; j < g.size(); ++j) s *= g.i(j);
    r.set_int(k, s);
  }
}

// The position (in the group) of the max (kMax) or min: NaN wins, the first of ties.
template <bool kMax>
size_t arg_extreme(const Group& g) {
  size_t best = 0;
  for (size_t j = 0; j < g.size(); ++j) {
    if (std::isnan(g.d(j))) return j;
    const bool better = g.in.floating() ? (kMax ? g.d(j) > g.d(best) : g.d(j) < g.d(best))
                                        : (kMax ? g.i(j) > g.i(best) : g.i(j) < g.i(best));
    if (better) best = j;
  }
  return best;
}

template <bool kMax>
void extreme_fold(const Group& g, HostTensor& r, int64_t k) {
  const size_t j = arg_extreme<kMax>(g);
  if (g.in.floating()) r.set(k, g.d(j));
  else r.set_int(k, g.i(j));
}

template <bool kMax>
void arg_fold(const Group& g, HostTensor& r, int64_t k) {
  r.set_int(k, static_cast<int64_t>(arg_extreme<kMax>(g)));
}

template <bool kMax>
Expected extreme_dim_ref(const RefArgs& a) {
  Expected values = reduction_ref(RedStyle::OneDim, extreme_fold<kMax>, true)(a);
  if (values.fails) return values;
  RefArgs indices_args(a.sample(), DType::Int64);
  const Expected indices = reduction_ref(RedStyle::OneDim, arg_fold<kMax>, true)(indices_args);
  values.outputs.push_back(indices.outputs.at(0));
  return values;
}

template <bool kAll>
void logical_fold(const Group& g, HostTensor& r, int64_t k) {
  bool v = kAll;
  for (size_t j = 0; j < g.size(); ++j) {
    const bool nz = g.d(j) != 0;  // NaN is nonzero
    v = kAll ? v && nz : v || nz;
  }
  r.set_int(k, v);
}

// var and std: the sum of squared deviations over max(0, N - correction).
Fold variance_fold(int64_t correction, bool take_sqrt) {
  return [correction, take_sqrt](const Group& g, HostTensor& r, int64_t k) {
    const double n = static_cast<double>(g.size());
    double mean = 0, m2 = 0;
    for (size_t j = 0; j < g.size(); ++j) mean += g.d(j);
    mean /= n;
    for (size_t j = 0; j < g.size(); ++j) m2 += (g.d(j) - mean) * (g.d(j) - mean);
    const double var = m2 / std::max(0.0, n - static_cast<double>(correction));
    r.set(k, take_sqrt ? std::sqrt(var) : var);
  };
}

// The vector norm of order p (torch.linalg.vector_norm).
Fold norm_fold(double p) {
  return [p](const Group& g, HostTensor& r, int64_t k) {
    if (std::isinf(p)) {
      double m = p > 0 ? 0.0 : kInf;
      for (size_t j = 0; j < g.size(); ++j) {
        const double v = std::fabs(g.d(j));
        if (std::isnan(v)) return r.set(k, kNaN);
        m = p > 0 ? std::max(m, v) : std::min(m, v);
      }
      return r.set(k, m);
    }
    double s = 0;
    for (size_t j = 0; j < g.size(); ++j) {
      const double v = std::fabs(g.d(j));
      s += p == 0 ? (v != 0) : std::pow(v, p);
    }
    r.set(k, p == 0 ? s : p == 1 ? s : std::pow(s, 1.0 / p));
  };
}

void logsumexp_fold(const Group& g, HostTensor& r, int64_t k) {
  double m = -kInf;
  for (size_t j = 0; j < g.size(); ++j) m = std::max(m, g.d(j));
  if (g.has_nan()) return r.set(k, kNaN);
  if (std::isinf(m)) return r.set(k, m);  // all -inf, or some +inf
  double s = 0;
  for (size_t j = 0; j < g.size(); ++j) s += std::exp(g.d(j) - m);
  r.set(k, m + std::log(s));
}

// cumsum/cumprod along one dim; the input converts to the output dtype first.
Expected scan_ref(const RefArgs& a, bool prod) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
  if (!d) return Expected::raises("dim");
  HostTensor r(in.shape, a.out);
  for_each_index(in.shape, [&](const Shape& idx, int64_t k) {
    Shape p = idx;
    double ds = prod ? 1 : 0;
    int64_t is = prod ? 1 : 0;
    const int64_t upto = in.dim() == 0 ? 0 : idx[*d];
    for (int64_t j = 0; j <= upto; ++j) {
      if (in.dim() > 0) p[*d] = j;
      const int64_t e = linear_index(p, in.shape);
      if (r.floating()) ds = prod ? ds * in.at(e) : ds + in.at(e);
      else is = prod ? is * in.at_int(e) : is + in.at_int(e);
    }
    if (r.floating()) r.set(k, ds);
    else r.set_int(k, is);
  });
  return {{r}, false, ""};
}

void add_reduction_rows(std::vector<OpInfo>& rows) {
  const double kRedTol = 10;  // sums of up to 60 values in float32
  // Products of integers take values in [-1, 1]: a product of 60 values in [-9, 9] overflows int64.
  auto red_row = [&](std::string name, std::vector<DType> rejects, DType (*out)(DType), RedStyle st,
                     std::function<Expected(const RefArgs&)> ref,
                     std::function<std::vector<Sample>(DType, SampleSize)> extra = nullptr) {
    const Domain int_domain = name == "prod" || name == "cumprod" ? Domain::Unit : Domain::Any;
    rows.push_back({.name = std::move(name), .dtypes = kAll, .rejects = std::move(rejects), .out_dtype = out,
                    .samples = [st, extra, int_domain](DType t, SampleSize size) {
                      const Domain d = is_floating_point(t) ? Domain::Any : int_domain;
                      std::vector<Sample> s = reduction_samples(st, t, size, d);
                      return extra ? joined(s, extra(t, size)) : s;
                    },
                    .reference = std::move(ref), .tolerance_scale = kRedTol});
  };
  // sum(dtype=float64) converts first; the result has that dtype.
  auto dtype_sample = [](DType t, SampleSize size) -> std::vector<Sample> {
    if (size == SampleSize::Large) return {};
    return {{"dtype_float64", {arg(make_input({3, 4}, t)), ints_arg({1}), bool_arg(false), dtype_arg(DType::Float64)},
             DType::Float64, ""}};
  };
  red_row("sum", {}, int64_of_int, RedStyle::DimsDtype, reduction_ref(RedStyle::DimsDtype, sum_fold), dtype_sample);
  red_row("prod", {}, int64_of_int, RedStyle::DimsDtype, reduction_ref(RedStyle::DimsDtype, prod_fold), dtype_sample);
  const Fold mean_fold = [](const Group& g, HostTensor& r, int64_t k) {
    double s = 0;
    for (size_t j = 0; j < g.size(); ++j) s += g.d(j);
    r.set(k, s / static_cast<double>(g.size()));  // 0/0: NaN for an empty mean
  };
  red_row("mean", kIntegral, same_dtype, RedStyle::Dims, reduction_ref(RedStyle::Dims, mean_fold));
  red_row("amax", {}, same_dtype, RedStyle::Dims, reduction_ref(RedStyle::Dims, extreme_fold<true>, true));
  red_row("amin", {}, same_dtype, RedStyle::Dims, reduction_ref(RedStyle::Dims, extreme_fold<false>, true));
  red_row("max_dim", {}, same_dtype, RedStyle::OneDim, extreme_dim_ref<true>);
  red_row("min_dim", {}, same_dtype, RedStyle::OneDim, extreme_dim_ref<false>);
  red_row("argmax", {}, int64_dtype, RedStyle::OptDim, reduction_ref(RedStyle::OptDim, arg_fold<true>, true));
  red_row("argmin", {}, int64_dtype, RedStyle::OptDim, reduction_ref(RedStyle::OptDim, arg_fold<false>, true));
  for (const bool take_sqrt : {false, true}) {
    red_row(take_sqrt ? "std" : "var", kIntegral, same_dtype, RedStyle::Correction,
            [take_sqrt](const RefArgs& a) {
              return reduction_ref(RedStyle::Correction, variance_fold(a.integer(2), take_sqrt))(a);
            },
            [](DType t, SampleSize size) -> std::vector<Sample> {
              if (size == SampleSize::Large) return {};
              return {{"correction0", {arg(make_input({3, 4}, t)), ints_arg({1}), int_arg(0), bool_arg(false)}, {}, ""},
                      {"correction2", {arg(make_input({3, 4}, t)), ints_arg({}), int_arg(2), bool_arg(true)}, {}, ""},
                      {"single", {arg(make_input({3, 1}, t)), ints_arg({1}), int_arg(1), bool_arg(false)}, {}, ""}};
            });
  }
  red_row("norm", kIntegral, same_dtype, RedStyle::Norm,
          [](const RefArgs& a) {
            const double p = a.number(1);
            return reduction_ref(RedStyle::Norm, norm_fold(p), p < 0 || std::isinf(p))(a);
          },
          [](DType t, SampleSize size) -> std::vector<Sample> {
            std::vector<Sample> s;
            if (size == SampleSize::Large) return s;
            const std::pair<const char*, double> orders[] = {{"p1", 1.0},     {"pinf", kInf}, {"pneginf", -kInf},
                                                             {"p0", 0.0},     {"p3", 3.0},    {"p0_5", 0.5},
                                                             {"pneg1", -1.0}};
            for (const auto& [name, p] : orders) {
              auto add = [&](std::string n, const Tensor& x, Shape dims) {
                s.push_back({std::move(n), {arg(x), arg(Scalar(p)), ints_arg(std::move(dims)), bool_arg(false)}});
              };
              add(name, make_input({3, 4}, t), {1});
              if (is_floating_point(t)) add(std::string("special_") + name, special_pairs(t), {1});
              if (p < 0 || std::isinf(p)) add(std::string("empty_") + name, make_input({0, 4}, t), {0});  // an error
            }
            return s;
          });
  red_row("logsumexp", {}, float_of_int, RedStyle::Dims, reduction_ref(RedStyle::Dims, logsumexp_fold));
  red_row("all", {}, bool_or_uint8, RedStyle::Dims, reduction_ref(RedStyle::Dims, logical_fold<true>));
  red_row("any", {}, bool_or_uint8, RedStyle::Dims, reduction_ref(RedStyle::Dims, logical_fold<false>));
  for (const bool prod : {false, true}) {
    red_row(prod ? "cumprod" : "cumsum", {}, int64_of_int, RedStyle::Scan,
            [prod](const RefArgs& a) { return scan_ref(a, prod); },
            [](DType t, SampleSize size) -> std::vector<Sample> {
              if (size == SampleSize::Large) return {};
              return {{"dtype_float64", {arg(make_input({3, 4}, t)), int_arg(1), dtype_arg(DType::Float64)},
                       DType::Float64}};
            });
  }
}

// ---------------------------------------------------------------------------
// Rows: triangles, one-hot, sorting, cat

std::function<Expected(const RefArgs&)> triangle_ref(bool lower) {
  return [lower](const RefArgs& a) -> Expected {
    const HostTensor in = a.tensor(0);
    if (in.dim() < 2) return Expected::raises("");
    const int64_t diag = a.integer(1);
    HostTensor r(in.shape, a.out);
    for_each_index(in.shape, [&](const Shape& idx, int64_t k) {
      const int64_t off = idx[idx.size() - 1] - idx[idx.size() - 2];  // column - row
      const bool keep = lower ? off <= diag : off >= diag;
      if (!keep) return;
      if (in.floating()) r.set(k, in.f[k]);
      else r.set_int(k, in.i[k]);
    });
    return {{r}, false, ""};
  };
}

std::vector<Sample> triangle_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& x, int64_t diag, std::string err = "") -> Sample {
    return {std::move(n), {arg(x), int_arg(diag)}, {}, std::move(err)};
  };
  if (size == SampleSize::Large) return {s("large", make_input({256, 400}, t), 3)};
  return {s("main", make_input({4, 5}, t), 0),          s("above", make_input({4, 5}, t), 1),
          s("below", make_input({4, 5}, t), -2),        s("beyond", make_input({4, 5}, t), 10),
          s("below_all", make_input({4, 5}, t), -10),   s("batched", make_input({2, 3, 4}, t), 0),
          s("transposed", make_input({4, 5}, t, kTransposed), 1), s("sliced", make_input({4, 5}, t, kSliced), 0),
          s("empty", make_input({0, 3}, t), 0),         s("1d", make_input({4}, t), 0, "")};
}

// Orders (value, index) pairs as sort and topk do: NaN above every number,
// equal values by index.
bool ascending_before(double a, int64_t ia, double b, int64_t ib) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? ia < ib : std::isnan(b);
  return a < b || (a == b && ia < ib);
}
bool descending_before(double a, int64_t ia, double b, int64_t ib) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? ia < ib : std::isnan(a);
  return a > b || (a == b && ia < ib);
}

// values and int64 indices of the first k of each row along `dim`, ordered by `before`.
Expected ordered_ref(const RefArgs& a, int64_t dim, int64_t k, bool descending) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d = wrap(dim, in.dim());
  if (!d) return Expected::raises("dim");
  const int64_t n = in.dim() == 0 ? 1 : in.shape[*d];
  if (k < 0 || k > n) return Expected::raises("");
  Shape out_shape = in.shape;
  if (in.dim() > 0) out_shape[*d] = k;
  HostTensor values(out_shape, a.out), indices(out_shape, DType::Int64);
  Shape rows = in.shape;
  if (in.dim() > 0) rows[*d] = 1;
  for_each_index(rows, [&](const Shape& row, int64_t) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto at = [&](int64_t j) {
      Shape p = row;
      if (in.dim() > 0) p[*d] = j;
      return linear_index(p, in.shape);
    };
    std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return descending ? descending_before(in.at(at(x)), x, in.at(at(y)), y)
                        : ascending_before(in.at(at(x)), x, in.at(at(y)), y);
    });
    for (int64_t j = 0; j < (in.dim() == 0 ? 1 : k); ++j) {
      Shape p = row;
      if (in.dim() > 0) p[*d] = j;
      const int64_t o = linear_index(p, out_shape), src = at(order[j]);
      if (in.floating()) values.set(o, in.f[src]);
      else values.set_int(o, in.i[src]);
      indices.set_int(o, order[j]);
    }
  });
  return {{values, indices}, false, ""};
}

Tensor with_ties(const Shape& shape, DType t) {
  return from_values(shape, t, {2, 1, 2, 0, 1, 2, 0, 0, 3});
}

std::vector<Sample> sort_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& x, int64_t dim, bool desc, bool stable = false) -> Sample {
    return {std::move(n), {arg(x), int_arg(dim), bool_arg(desc), bool_arg(stable)}, {}, ""};
  };
  if (size == SampleSize::Large) {
    return {s("large", make_input({256, 400}, t), -1, false), s("large_dim0", make_input({256, 400}, t), 0, true)};
  }
  std::vector<Sample> out = {
      s("last_dim", make_input({3, 6}, t), -1, false),   s("dim0", make_input({4, 3}, t), 0, false),
      s("descending", make_input({3, 6}, t), 1, true),   s("stable", make_input({3, 6}, t), 1, false, true),
      s("ties", with_ties({3, 6}, t), 1, false, true),   s("ties_descending", with_ties({6, 3}, t), 0, true, true),
      s("transposed", make_input({3, 6}, t, kTransposed), 1, false),
      s("sliced", make_input({3, 6}, t, kSliced), 0, true),
      s("empty", make_input({0, 3}, t), 1, false),       s("0d", make_input({}, t), 0, false),
      s("bad_dim", make_input({3, 6}, t), 2, false)};
  if (is_floating_point(t)) {
    out.push_back(s("special", from_values({12}, t, kSpecials), 0, false));
    out.push_back(s("special_descending", from_values({2, 12}, t, kSpecials), 1, true));
  }
  return out;
}

std::vector<Sample> topk_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& x, int64_t k, int64_t dim, bool largest, std::string err = "") -> Sample {
    return {std::move(n), {arg(x), int_arg(k), int_arg(dim), bool_arg(largest), bool_arg(true)}, {}, std::move(err)};
  };
  if (size == SampleSize::Large)
    return {s("large", make_input({256, 400}, t), 5, -1, true),
            s("large_many", make_input({256, 400}, t), 100, 0, false)};
  std::vector<Sample> out = {
      s("largest", make_input({4, 6}, t), 3, -1, true),  s("smallest", make_input({4, 6}, t), 3, 1, false),
      s("dim0", make_input({4, 6}, t), 2, 0, true),      s("k0", make_input({4, 6}, t), 0, 1, true),
      s("all", make_input({4, 6}, t), 6, 1, false),      s("ties", with_ties({3, 6}, t), 4, 1, true),
      s("ties_smallest", with_ties({3, 6}, t), 4, 1, false),
      s("transposed", make_input({4, 6}, t, kTransposed), 2, 1, true),
      s("sliced", make_input({4, 6}, t, kSliced), 5, 0, false),
      s("empty", make_input({0, 4}, t), 2, 1, true),     s("0d", make_input({}, t), 1, 0, true),
      s("k_too_large", make_input({4, 6}, t), 7, 1, true, "topk")};
  if (is_floating_point(t)) {
    out.push_back(s("special", from_values({12}, t, kSpecials), 5, 0, true));
    out.push_back(s("special_smallest", from_values({12}, t, kSpecials), 5, 0, false));
  }
  return out;
}

std::vector<Sample> cat_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, TensorList xs, int64_t dim, std::optional<DType> out = std::nullopt,
               std::string err = "") -> Sample { return {std::move(n), {arg(xs), int_arg(dim)}, out, std::move(err)}; };
  if (size == SampleSize::Large)
    return {s("large", {make_input({256, 200}, t), make_input({256, 200}, t, kTransposed)}, 1)};
  return {s("dim0", {make_input({2, 3}, t), make_input({4, 3}, t)}, 0),
          s("dim1", {make_input({2, 3}, t), make_input({2, 1}, t), make_input({2, 4}, t)}, 1),
          s("neg_dim", {make_input({2, 3, 2}, t), make_input({2, 3, 1}, t)}, -1),
          s("with_empty", {make_input({2, 3}, t), make_input({0, 3}, t)}, 0),
          s("noncontiguous", {make_input({2, 3}, t, kTransposed), make_input({2, 3}, t, kSliced)}, 0),
          s("single", {make_input({2, 3}, t)}, 1),
          s("mixed_dtype", {make_input({2, 3}, t), make_input({1, 3}, DType::Float64)}, 0,
            promote_types(t, DType::Float64)),
          s("0d", {make_input({}, t), make_input({}, t)}, 0, std::nullopt, "zero-dim"),
          s("size_mismatch", {make_input({2, 3}, t), make_input({2, 4}, t)}, 0, std::nullopt, "cat"),
          s("bad_dim", {make_input({2, 3}, t), make_input({2, 3}, t)}, 2, std::nullopt, "cat")};
}

Expected cat_ref(const RefArgs& a) {
  const std::vector<std::optional<HostTensor>> xs = a.tensors(0);
  if (xs.empty()) return Expected::raises("");
  const HostTensor& first = *xs[0];
  const std::optional<int64_t> d = wrap(a.integer(1), first.dim());
  if (!d || first.dim() == 0) return Expected::raises("");
  Shape out_shape = first.shape;
  out_shape[*d] = 0;
  for (const auto& x : xs) {
    if (x->dim() != first.dim()) return Expected::raises("");
    for (int64_t j = 0; j < first.dim(); ++j) {
      if (j != *d && x->shape[j] != first.shape[j]) return Expected::raises("");
    }
    out_shape[*d] += x->shape[*d];
  }
  HostTensor r(out_shape, a.out);
  int64_t start = 0;
  for (const auto& x : xs) {
    for_each_index(x->shape, [&](const Shape& idx, int64_t k) {
      Shape o = idx;
      o[*d] += start;
      const int64_t j = linear_index(o, out_shape);
      if (x->floating()) r.set(j, x->f[k]);
      else r.set_int(j, x->i[k]);
    });
    start += x->shape[*d];
  }
  return {{r}, false, ""};
}

void add_shape_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "tril", .dtypes = kAll, .out_dtype = same_dtype, .samples = triangle_samples,
                  .reference = triangle_ref(true)});
  rows.push_back({.name = "triu", .dtypes = kAll, .out_dtype = same_dtype, .samples = triangle_samples,
                  .reference = triangle_ref(false)});
  rows.push_back({
      .name = "one_hot", .dtypes = {DType::Int64}, .out_dtype = int64_dtype,
      .samples = [](DType, SampleSize size) -> std::vector<Sample> {
        auto s = [](std::string n, const Tensor& x, int64_t classes, std::string err = "") -> Sample {
          return {std::move(n), {arg(x), int_arg(classes)}, {}, std::move(err)};
        };
        if (size == SampleSize::Large) {
          return {s("large", make_input({4000}, DType::Int64, Domain::Positive), 25)};
        }
        return {s("inferred", int64_values({5}, {0, 3, 1, 1, 2}), -1),
                s("given", int64_values({2, 3}, {4, 0, 5}), 6),
                s("transposed", int64_values({3, 2}, {2, 0, 1}).transpose(0, 1), 3),
                s("0d", int64_values({}, {2}), 4),
                s("empty", int64_values({0}, {0}), 3),
                s("empty_inferred", int64_values({0}, {0}), -1, "one_hot"),
                s("negative", int64_values({2}, {1, -1}), 3, "one_hot"),
                s("too_large", int64_values({2}, {1, 5}), 3, "one_hot")};
      },
      .reference = [](const RefArgs& a) -> Expected {
        const HostTensor in = a.tensor(0);
        const int64_t given = a.integer(1);
        int64_t mx = -1;
        for (int64_t v : in.i) mx = std::max(mx, v);
        const int64_t classes = given == -1 ? mx + 1 : given;
        Shape shape = in.shape;
        shape.push_back(classes);
        HostTensor r(shape, DType::Int64);
        for (int64_t k = 0; k < in.numel(); ++k) r.i[k * classes + in.i[k]] = 1;
        return {{r}, false, ""};
      },
  });
  rows.push_back({.name = "sort", .dtypes = kAll, .out_dtype = same_dtype, .samples = sort_samples,
                  .reference = [](const RefArgs& a) -> Expected {
                    const HostTensor in = a.tensor(0);
                    const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
                    if (!d) return Expected::raises("dim");
                    return ordered_ref(a, a.integer(1), in.dim() == 0 ? 1 : in.shape[*d], a.flag(2));
                  }});
  rows.push_back({.name = "topk", .dtypes = kAll, .out_dtype = same_dtype, .samples = topk_samples,
                  .reference = [](const RefArgs& a) { return ordered_ref(a, a.integer(2), a.integer(1), a.flag(3)); }});
  rows.push_back({.name = "cat", .dtypes = kAll, .out_dtype = same_dtype, .samples = cat_samples,
                  .reference = cat_ref});
}

// ---------------------------------------------------------------------------
// Rows: linear algebra

// (n, k) @ (k, m) in double, or int64 for integer dtypes; beta * self + alpha * product for addmm.
HostTensor matmul_ref(const HostTensor& a, const HostTensor& b, DType out, int64_t batch_a, int64_t batch_b,
                      int64_t n, int64_t k, int64_t m, Shape out_shape) {
  HostTensor r(std::move(out_shape), out);
  const int64_t batches = n * m == 0 ? 0 : numel_of(r.shape) / (n * m);
  for (int64_t bt = 0; bt < batches; ++bt) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double ds = 0;
        int64_t is = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t x = bt * batch_a + i * k + p, y = bt * batch_b + p * m + j;
          if (r.floating()) ds += a.at(x) * b.at(y);
          else is += a.at_int(x) * b.at_int(y);
        }
        const int64_t o = bt * n * m + i * m + j;
        if (r.floating()) r.set(o, ds);
        else r.set_int(o, is);
      }
    }
  }
  return r;
}

Expected mm_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 2 || y.dim() != 2 || x.shape[1] != y.shape[0] || x.dtype != y.dtype) return Expected::raises("");
  return {{matmul_ref(x, y, a.out, 0, 0, x.shape[0], x.shape[1], y.shape[1], {x.shape[0], y.shape[1]})}, false, ""};
}

Expected bmm_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 3 || y.dim() != 3 || x.shape[0] != y.shape[0] || x.shape[2] != y.shape[1]) return Expected::raises("");
  const int64_t n = x.shape[1], k = x.shape[2], m = y.shape[2];
  return {{matmul_ref(x, y, a.out, n * k, k * m, n, k, m, {x.shape[0], n, m})}, false, ""};
}

Expected addmm_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0), x = a.tensor(1), y = a.tensor(2);
  if (x.dim() != 2 || y.dim() != 2 || x.shape[1] != y.shape[0]) return Expected::raises("");
  const Shape out_shape = {x.shape[0], y.shape[1]};
  const std::optional<Shape> s = broadcast(out_shape, self.shape);
  if (!s || *s != out_shape) return Expected::raises("");
  const HostTensor p = matmul_ref(x, y, a.out, 0, 0, x.shape[0], x.shape[1], y.shape[1], out_shape);
  const double beta = a.number(3), alpha = a.number(4);
  const int64_t ibeta = a.integer(3), ialpha = a.integer(4);
  HostTensor r(out_shape, a.out);
  for_each_index(out_shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = source_index(idx, self.shape);
    if (r.floating()) r.set(k, (beta == 0 ? 0.0 : beta * self.at(j)) + alpha * p.f[k]);  // beta 0 ignores NaN in self
    else r.set_int(k, ibeta * self.at_int(j) + ialpha * p.i[k]);
  });
  return {{r}, false, ""};
}

Expected dot_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 1 || y.dim() != 1 || x.shape[0] != y.shape[0]) return Expected::raises("");
  return {{matmul_ref(x, y, a.out, 0, 0, 1, x.shape[0], 1, {})}, false, ""};
}

Expected mv_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 2 || y.dim() != 1 || x.shape[1] != y.shape[0]) return Expected::raises("");
  return {{matmul_ref(x, y, a.out, 0, 0, x.shape[0], x.shape[1], 1, {x.shape[0]})}, false, ""};
}

std::vector<Sample> matmul_samples(const std::string& op, DType t, SampleSize size) {
  std::vector<Sample> out;
  const Layout T = kTransposed, S = kSliced;
  auto add = [&](std::string n, Stack args, std::string err = "") {
    out.push_back({std::move(n), std::move(args), {}, std::move(err)});
  };
  auto in = [&](Shape s, Layout l = Layout::Contiguous) { return arg(make_input(s, t, l)); };
  const Scalar one = scalar_of(t, 1);
  const DType other = t == DType::Float64 ? DType::Float32 : DType::Float64;
  if (op == "mm") {
    if (size == SampleSize::Large) return {{"large", {in({200, 96}), in({96, 500}, T)}, {}, ""}};
    add("contiguous", {in({3, 4}), in({4, 5})});
    add("transposed", {in({3, 4}, T), in({4, 5})});
    add("sliced", {in({3, 4}), in({4, 5}, S)});
    add("both_transposed", {in({3, 4}, T), in({4, 5}, T)});
    add("empty_k", {in({3, 0}), in({0, 5})});
    add("empty_m", {in({0, 4}), in({4, 5})});
    add("vector", {in({4}), in({4, 5})}, "mm");
    add("mismatch", {in({3, 4}), in({5, 2})}, "mm");
    add("mixed_dtype", {in({3, 4}), arg(make_input({4, 5}, other))}, "mm");
  } else if (op == "bmm") {
    if (size == SampleSize::Large) return {{"large", {in({8, 64, 48}), in({8, 48, 200}, T)}, {}, ""}};
    add("contiguous", {in({2, 3, 4}), in({2, 4, 5})});
    add("transposed", {in({2, 3, 4}, T), in({2, 4, 5}, S)});
    add("empty_batch", {in({0, 3, 4}), in({0, 4, 5})});
    add("empty_k", {in({2, 3, 0}), in({2, 0, 5})});
    add("batch_mismatch", {in({2, 3, 4}), in({3, 4, 5})}, "bmm");
    add("matrices", {in({3, 4}), in({4, 5})}, "bmm");
  } else if (op == "addmm") {
    if (size == SampleSize::Large) return {{"large", {in({500}), in({200, 96}), in({96, 500}, T), arg(one), arg(one)}}};
    const bool fp = is_floating_point(t);
    const Scalar beta = scalar_of(t, fp ? 0.5 : 2), alpha = scalar_of(t, fp ? -1.5 : 3);
    add("contiguous", {in({3, 5}), in({3, 4}), in({4, 5}), arg(one), arg(one)});
    add("broadcast_row", {in({5}), in({3, 4}, T), in({4, 5}), arg(one), arg(one)});
    add("broadcast_0d", {in({}), in({3, 4}), in({4, 5}, S), arg(one), arg(one)});
    add("scaled", {in({3, 5}, T), in({3, 4}), in({4, 5}), arg(beta), arg(alpha)});
    add("empty_k", {in({3, 5}), in({3, 0}), in({0, 5}), arg(beta), arg(alpha)});
    add("bad_self", {in({4}), in({3, 4}), in({4, 5}), arg(one), arg(one)}, "addmm");
    if (is_floating_point(t))
      add("beta0_nan_self", {arg(from_values({3, 5}, t, {kNaN})), in({3, 4}), in({4, 5}), arg(Scalar(0.0)),
                             arg(alpha)});
  } else if (op == "dot") {
    if (size == SampleSize::Large) return {{"large", {in({100000}), in({100000})}, {}, ""}};
    add("contiguous", {in({7}), in({7})});
    add("sliced", {in({7}, S), in({7})});
    add("empty", {in({0}), in({0})});
    add("matrix", {in({2, 3}), in({6})}, "dot");
    add("mismatch", {in({3}), in({4})}, "dot");
  } else if (op == "mv") {
    if (size == SampleSize::Large) return {{"large", {in({400, 256}, T), in({256})}, {}, ""}};
    add("contiguous", {in({3, 4}), in({4})});
    add("transposed", {in({3, 4}, T), in({4}, S)});
    add("empty_rows", {in({0, 4}), in({4})});
    add("empty_k", {in({3, 0}), in({0})});
    add("mismatch", {in({3, 4}), in({3})}, "mv");
  }
  return out;
}

void add_linalg_rows(std::vector<OpInfo>& rows) {
  const std::pair<const char*, std::function<Expected(const RefArgs&)>> ops[] = {
      {"mm", mm_ref}, {"bmm", bmm_ref}, {"addmm", addmm_ref}, {"dot", dot_ref}, {"mv", mv_ref}};
  for (const auto& [name, ref] : ops) {
    rows.push_back({.name = name, .dtypes = kNumeric, .out_dtype = same_dtype,
                    .samples = [op = std::string(name)](DType t, SampleSize size) {
                      return matmul_samples(op, t, size);
                    },
                    .reference = ref, .tolerance_scale = 10});
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// The table

const std::vector<OpInfo>& op_infos() {
  static const std::vector<OpInfo> rows = [] {
    std::vector<OpInfo> r;
    add_binary_rows(r);
    add_unary_rows(r);
    add_elementwise_rows(r);
    add_copy_and_random_rows(r);
    add_view_rows(r);
    add_index_rows(r);
    add_reduction_rows(r);
    add_shape_rows(r);
    add_linalg_rows(r);
    // Every op has a derivative but those whose results are integers or bools.
    const std::set<std::string> not_differentiable = {
        "eq",    "ne",    "lt",     "le",     "gt",  "ge",  "logical_and", "logical_or", "logical_xor", "logical_not",
        "isnan", "isinf", "argmax", "argmin", "all", "any", "nonzero",     "one_hot"};
    for (OpInfo& row : r) row.differentiable = !not_differentiable.count(row.name);
    // The neural-network families (tests/op_info_<family>.cpp) set `differentiable` in their rows.
    add_activation_rows(r);
    add_attention_rows(r);
    add_conv_rows(r);
    add_indexing_rows(r);
    add_loss_rows(r);
    add_norm_rows(r);
    add_pooling_rows(r);
    return r;
  }();
  return rows;
}

const OpInfo* find_op_info(std::string_view name) {
  for (const OpInfo& r : op_infos()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

std::vector<Sample> OpInfo::make_samples(DType dtype, SampleSize size) const {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the name: each op gets its own inputs
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  g_input_seed = h + 131 * static_cast<uint64_t>(dtype) + (size == SampleSize::Large ? 7 : 0);
  return samples(dtype, size);
}

bool OpInfo::rejects_dtype(DType t) const { return std::find(rejects.begin(), rejects.end(), t) != rejects.end(); }

const Divergence* OpInfo::divergence(const std::string& sample, DType t) const {
  for (const Divergence& d : divergences) {
    if (d.sample == sample && (d.dtypes.empty() || std::find(d.dtypes.begin(), d.dtypes.end(), t) != d.dtypes.end()))
      return &d;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// Reference arguments

HostTensor RefArgs::tensor(size_t i) const { return to_host(s_.args.at(i).tensor()); }

std::vector<std::optional<HostTensor>> RefArgs::tensors(size_t i) const {
  std::vector<std::optional<HostTensor>> out;
  for (const Tensor& t : s_.args.at(i).tensor_list()) {
    if (t.defined()) out.emplace_back(to_host(t));
    else out.emplace_back();
  }
  return out;
}

double RefArgs::number(size_t i) const {
  const IValue::Payload& p = s_.args.at(i).payload();
  if (const auto* s = std::get_if<Scalar>(&p)) return s->to_double();
  if (const auto* d = std::get_if<double>(&p)) return *d;
  if (const auto* v = std::get_if<int64_t>(&p)) return static_cast<double>(*v);
  return std::get<bool>(p) ? 1.0 : 0.0;
}

int64_t RefArgs::integer(size_t i) const {
  const IValue::Payload& p = s_.args.at(i).payload();
  if (const auto* s = std::get_if<Scalar>(&p)) return s->to_int();
  if (const auto* b = std::get_if<bool>(&p)) return *b;
  return std::get<int64_t>(p);
}

bool RefArgs::flag(size_t i) const { return std::get<bool>(s_.args.at(i).payload()); }
std::vector<int64_t> RefArgs::ints(size_t i) const { return std::get<std::vector<int64_t>>(s_.args.at(i).payload()); }
std::string RefArgs::str(size_t i) const { return std::get<std::string>(s_.args.at(i).payload()); }
std::optional<DType> RefArgs::dtype_arg(size_t i) const {
  if (s_.args.at(i).is_none()) return std::nullopt;
  return std::get<DType>(s_.args.at(i).payload());
}

// ---------------------------------------------------------------------------
// Running and comparing

TensorList run_sample(const std::string& op, const Sample& s) {
  const OpEntry* entry = Dispatcher::instance().find(op);
  EMBER_CHECK(entry != nullptr, "op-info: no dispatched op named ", op);
  Stack stack = s.args;
  Dispatcher::call_boxed(*entry, Dispatcher::boxed_key_set(stack), stack);
  TensorList out;
  for (const IValue& v : stack) {
    if (v.is_tensor()) out.push_back(v.tensor());
    else if (v.is_tensor_list()) out.insert(out.end(), v.tensor_list().begin(), v.tensor_list().end());
  }
  return out;
}

TensorList run_sample(const OpInfo& op, const Sample& s) { return run_sample(op.name, s); }

Sample copy_sample(const Sample& s) {
  Sample c = s;
  for (IValue& v : c.args) {
    if (v.is_tensor() && v.tensor().defined()) v = IValue::Payload(v.tensor().clone());
  }
  return c;
}

::testing::AssertionResult matches(const HostTensor& actual, const HostTensor& expected, double scale) {
  std::ostringstream os;
  if (actual.shape != expected.shape) {
    os << "shape " << IntArrayRef(actual.shape) << ", expected " << IntArrayRef(expected.shape);
    return ::testing::AssertionFailure() << os.str();
  }
  if (actual.dtype != expected.dtype)
    return ::testing::AssertionFailure() << "dtype " << actual.dtype << ", expected " << expected.dtype;
  if (!actual.floating()) {
    for (int64_t k = 0; k < actual.numel(); ++k) {
      if (actual.i[k] != expected.i[k])
        return ::testing::AssertionFailure() << "element " << k << ": " << actual.i[k] << ", expected "
                                             << expected.i[k];
    }
    return ::testing::AssertionSuccess();
  }
  double rtol = 1e-5;
  switch (actual.dtype) {
    case DType::Float64: rtol = 1e-12; break;
    case DType::Float16:
    case DType::BFloat16: rtol = 1e-2; break;
    default: break;
  }
  rtol *= scale;
  for (int64_t k = 0; k < actual.numel(); ++k) {
    const double a = actual.f[k], e = round_to(actual.dtype, expected.f[k]);
    const bool close = std::isinf(e) ? a == e : std::fabs(a - e) <= rtol * (1 + std::fabs(e));
    const bool ok = (std::isnan(a) && std::isnan(e)) || close;
    if (!ok) {
      os.precision(17);
      os << "element " << k << ": " << a << ", expected " << e << " (rtol " << rtol << ")";
      return ::testing::AssertionFailure() << os.str();
    }
  }
  return ::testing::AssertionSuccess();
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  const HostTensor x = to_host(a), y = to_host(b);  // f16/bf16 widen exactly, so bits compare as doubles
  return x.i == y.i && x.f.size() == y.f.size() &&
         (x.f.empty() || std::memcmp(x.f.data(), y.f.data(), x.f.size() * sizeof(double)) == 0);
}

}  // namespace ember::testing
