// Tensor metadata, element access, and the small helpers of core/tensor_util.h.
#include <algorithm>
#include <ostream>

#include "core/dispatcher.h"
#include "core/tensor_util.h"
#include "core/trace_escape.h"
#include "ember/ops.h"

namespace ember {

namespace detail {
namespace {
EscapeHook escape_hook = nullptr;
AliasHook alias_hook = nullptr;
}  // namespace
void set_alias_hook(AliasHook hook) { alias_hook = hook; }
void report_alias(const Tensor& from, const Tensor& to) {
  if (alias_hook) alias_hook(from, to);
}
void set_escape_hook(EscapeHook hook) { escape_hook = hook; }
void report_escape(const Tensor& t, const char* what) {
  if (escape_hook) escape_hook(t, what);
}

void undefined_tensor(const char* method) {
  EMBER_FAIL(method, ": called on an undefined tensor (a default-constructed Tensor, or x.grad() before backward)");
}
}  // namespace detail

std::ostream& operator<<(std::ostream& os, IntArrayRef r) {
  os << '[';
  for (size_t i = 0; i < r.size(); ++i) os << (i ? ", " : "") << r[i];
  return os << ']';
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_floating_point()) return os << s.to<double>();
  if (s.is_bool()) return os << (s.to<bool>() ? "True" : "False");
  return os << s.to<int64_t>();
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    EMBER_CHECK(!__builtin_mul_overflow(s, std::max<int64_t>(sizes[i], 1), &s), "size ", sizes,
                " is too large: its contiguous strides overflow 64 bits");
  }
  return strides;
}

int64_t checked_numel(IntArrayRef sizes, std::string_view op) {
  // The product with zeros taken as ones bounds both the element count and
  // every contiguous stride: a tensor of size [0, 2^62, 2^62] is refused too.
  int64_t n = 1, extent = 1;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, op, ": negative dimension ", s, " in size ", sizes);
    EMBER_CHECK(!__builtin_mul_overflow(extent, std::max<int64_t>(s, 1), &extent), op, ": size ", sizes,
                " has too many elements (more than 2^63)");
    n *= s;  // n is 0 or extent: no overflow
  }
  return n;
}

size_t checked_nbytes(IntArrayRef sizes, DType dtype, std::string_view op) {
  int64_t bytes = 0;
  EMBER_CHECK(!__builtin_mul_overflow(checked_numel(sizes, op), static_cast<int64_t>(element_size(dtype)), &bytes), op,
              ": size ", sizes, " of ", dtype_name(dtype), " needs more than 2^63 bytes");
  return static_cast<size_t>(bytes);
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, std::string_view op) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, op, ": shapes ", a, " and ", b, " cannot be broadcast (dim ",
                static_cast<int64_t>(i) - static_cast<int64_t>(n), ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor make_empty(IntArrayRef sizes, DType dtype, Device device) {
  const size_t nbytes = checked_nbytes(sizes, dtype, "empty");
  auto storage = make_intrusive<StorageImpl>(get_allocator(device)->allocate(nbytes), nbytes);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes));
}

Tensor wrap_scalar(const Scalar& s) {
  const DType t = s.is_floating_point() ? DType::Float64 : s.is_bool() ? DType::Bool : DType::Int64;
  Tensor out = make_empty({}, t, Device::cpu());
  if (t == DType::Float64) *static_cast<double*>(out.data_ptr()) = s.to<double>();
  else if (t == DType::Int64) *static_cast<int64_t*>(out.data_ptr()) = s.to<int64_t>();
  else *static_cast<bool*>(out.data_ptr()) = s.to<bool>();
  out.impl()->set_wrapped_number(true);
  return out;
}

Tensor make_view(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  auto impl = make_intrusive<TensorImpl>(t.impl()->storage(), t.dtype(), sizes, strides, storage_offset);
  if (user_grad_mode())
    impl->set_view_base(t.impl()->view_base() ? IntrusivePtr<TensorImpl>(t.impl()->view_base()) : t.impl_ptr());
  return Tensor(std::move(impl));
}

bool& user_grad_mode() {
  thread_local bool enabled EMBER_HOT_TLS = true;
  return enabled;
}

int64_t Tensor::size(int64_t d) const { return sizes()[wrap_dim(d, dim(), "size")]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_dim(d, dim(), "stride")]; }

template <class T>
T* Tensor::data_ptr() const {
  EMBER_CHECK(defined(), "data_ptr: the tensor is undefined");
  EMBER_CHECK(dtype() == dtype_v<T>, "data_ptr<", dtype_v<T>, ">: the tensor's dtype is ", dtype());
  detail::check_escape(*this, "data_ptr");
  return reinterpret_cast<T*>(impl_->data());
}

namespace {
template <class T>
Scalar read_scalar(const void* p) {
  return Scalar(*static_cast<const T*>(p));
}
}  // namespace

Scalar Tensor::item() const {
  EMBER_CHECK(defined(), "item: the tensor is undefined");
  EMBER_CHECK(numel() == 1, "item: expected a tensor with one element, got shape ", sizes());
  detail::check_escape(*this, "item");
  const Tensor host = device().is_cpu() ? *this : cpu();
  const void* p = host.impl()->data();
  switch (dtype()) {
    case DType::Float32: return read_scalar<float>(p);
    case DType::Float64: return read_scalar<double>(p);
    case DType::Float16: return read_scalar<Half>(p);
    case DType::BFloat16: return read_scalar<BFloat16>(p);
    case DType::Int32: return read_scalar<int32_t>(p);
    case DType::Int64: return read_scalar<int64_t>(p);
    case DType::UInt8: return read_scalar<uint8_t>(p);
    case DType::Bool: return read_scalar<bool>(p);
  }
  EMBER_FAIL("item: invalid dtype");
}

template <class T>
T Tensor::item() const {
  return item().to<T>();
}

#define EMBER_INSTANTIATE(T) \
  template T* Tensor::data_ptr<T>() const;
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
EMBER_INSTANTIATE(Half)
EMBER_INSTANTIATE(BFloat16)
EMBER_INSTANTIATE(int32_t)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint8_t)
EMBER_INSTANTIATE(bool)
#undef EMBER_INSTANTIATE
template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int32_t Tensor::item<int32_t>() const;
template int64_t Tensor::item<int64_t>() const;
template uint8_t Tensor::item<uint8_t>() const;
template bool Tensor::item<bool>() const;

}  // namespace ember
