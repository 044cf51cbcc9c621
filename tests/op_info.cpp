// The op-info table (see Note [The op-info table] in tests/op_info.h): host
// tensors, the table that collects every family's rows, reference arguments,
// and running a sample and comparing. The rows live in op_info_<family>.cpp;
// the helpers they share in op_info_inputs.h.
#include "tests/op_info.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "core/dispatcher.h"
#include "tests/op_info_inputs.h"

namespace ember::testing {

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

// ---------------------------------------------------------------------------
// Output-dtype rules

DType same_dtype(DType t) { return t; }
DType bool_dtype(DType) { return DType::Bool; }
DType int64_dtype(DType) { return DType::Int64; }
DType float_of_int(DType t) { return is_floating_point(t) ? t : DType::Float32; }
DType int64_of_int(DType t) { return is_floating_point(t) ? t : DType::Int64; }
DType bool_or_uint8(DType t) { return t == DType::UInt8 ? DType::UInt8 : DType::Bool; }

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
    add_advanced_index_rows(r);
    add_reduction_rows(r);
    add_shape_rows(r);
    add_linalg_rows(r);
    // Every op has a derivative but those whose results are integers or bools.
    const std::set<std::string> not_differentiable = {
        "eq",    "ne",    "lt",     "le",     "gt",  "ge",  "logical_and", "logical_or", "logical_xor", "logical_not",
        "isnan", "isinf", "argmax", "argmin", "all", "any", "nonzero",     "one_hot",
        "unique", "searchsorted", "multinomial"};
    for (OpInfo& row : r) row.differentiable = !not_differentiable.count(row.name);
    // The neural-network families (tests/op_info_<family>.cpp) set `differentiable` in their rows.
    add_activation_rows(r);
    add_attention_rows(r);
    add_conv_rows(r);
    add_fold_rows(r);
    add_indexing_rows(r);
    add_loss_rows(r);
    add_norm_rows(r);
    add_pooling_rows(r);
    add_padding_rows(r);
    add_pooling3d_rows(r);
    add_rnn_rows(r);
    add_linalg_decomposition_rows(r);
    add_linalg_factorization_rows(r);
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

// A wrapped number (a Scalar operand) is cast to a float16/bfloat16 result's
// dtype before the op, as PyTorch's TensorIterator casts it to the common dtype.
HostTensor RefArgs::tensor(size_t i) const {
  const Tensor& t = s_.args.at(i).tensor();
  HostTensor h = to_host(t);
  if (t.impl()->is_wrapped_number() && (out == DType::Float16 || out == DType::BFloat16)) {
    for (double& v : h.f) v = round_to(out, v);
  }
  return h;
}

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

// Note [Tolerances]
// A floating result is compared with the reference computed in double and
// rounded to the result's dtype. Rows whose outputs are input values moved,
// selected or compared (copies, views, cat, gather, flip, sort's values,
// amax, max with a dim, clamp, ...) set `exact`: the kernel does no
// arithmetic, so any difference is a wrong kernel. Every other row says how
// many terms one output element accumulates, K (`accumulation`, 1 when it
// gives none), and its tolerance follows from K and the unit roundoff u of
// the precision involved (2^-53 float64, 2^-24 float32, 2^-11 float16,
// 2^-8 bfloat16):
//
//   |actual - expected| <= c * u_acc * sqrt(K) * (1 + |expected|) + 2 * u_out * |expected|
//
// u_acc is the roundoff of the precision the kernel computes in: float32 for
// float16 and bfloat16 (ember's kernels widen them and round once at the
// end), the dtype itself otherwise, and for a row that sets
// `narrow_intermediates` (its float16/bfloat16 kernel stores intermediate
// results in the dtype: flash_attention_backward). Rounding errors of a sum of K terms of
// random sign grow as sqrt(K) (u * K is the worst case, which blocked and
// pairwise sums do not approach). c = kAccumulationConstant covers the few
// ulp of elementary-function kernels, the constants of blocked sums and
// terms somewhat larger than 1; the worst case in the table (float32
// batch_norm_backward, whose result cancels terms of order 10) needs c = 10.
// u_out is the output's roundoff when it is narrower than u_acc (float16,
// bfloat16; 0 otherwise): the kernel rounds its result once and the
// reference is rounded too, so the two may sit one unit in the last place
// (2 * u_out relative) apart. The accumulation term has an absolute floor,
// the 1 in 1 + |expected|, for results that cancel to near zero: their
// error scales with the terms (the samples' inputs are of order 1), not with
// the sum. The output's rounding is relative to the output alone, so a small
// bfloat16 probability 1% off fails too.
//
// So a float32 pointwise op may be off by about 1e-6 relative, a float32
// sum of 60 values by 7e-6, and a bfloat16 softmax, matmul or convolution by
// one bfloat16 ulp (0.8%) plus a float32 term far below it: a kernel 1% off
// in bfloat16 or 1e-4 off in float32 fails.

namespace {

constexpr double kAccumulationConstant = 16;

double unit_roundoff(DType t) {
  switch (t) {
    case DType::Float64: return 0x1p-53;
    case DType::Float16: return 0x1p-11;
    case DType::BFloat16: return 0x1p-8;
    default: return 0x1p-24;
  }
}

}  // namespace

Tolerance tolerance(DType t, int64_t accumulated, bool narrow_intermediates) {
  const bool narrow = t == DType::Float16 || t == DType::BFloat16;
  const double u_acc = unit_roundoff(narrow && !narrow_intermediates ? DType::Float32 : t);
  const double u_out = narrow ? unit_roundoff(t) : 0.0;
  return {kAccumulationConstant * u_acc * std::sqrt(static_cast<double>(std::max<int64_t>(accumulated, 1))),
          2 * u_out};
}

Accuracy accuracy_of(const OpInfo& row, const Sample& s) {
  return {row.exact, row.accumulation ? row.accumulation(s) : 1, row.narrow_intermediates};
}

::testing::AssertionResult matches(const HostTensor& actual, const HostTensor& expected, Accuracy accuracy) {
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
  const Tolerance tol = accuracy.exact ? Tolerance{} : tolerance(actual.dtype, accuracy.accumulated, accuracy.narrow_intermediates);
  for (int64_t k = 0; k < actual.numel(); ++k) {
    const double a = actual.f[k], e = round_to(actual.dtype, expected.f[k]);
    const bool close = std::isinf(e) || accuracy.exact ? a == e : std::fabs(a - e) <= tol.bound(e);
    const bool ok = (std::isnan(a) && std::isnan(e)) || close;
    if (!ok) {
      os.precision(17);
      os << "element " << k << ": " << a << ", expected " << e;
      if (accuracy.exact) os << " exactly";
      else os << " (tolerance " << tol.bound(e) << ", K " << accuracy.accumulated << ")";
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
