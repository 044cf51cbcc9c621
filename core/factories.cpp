// Factories: empty, zeros, ones, full, arange, linspace, eye, rand*, from_blob, tensor.
// They allocate with make_empty and fill through dispatched ops, so they work
// on every device; arange/linspace/eye/tensor compute on the CPU and copy.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/memory_overlap.h"
#include "core/op_decls.h"
#include "core/random_fill.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

namespace {
// Applies the options' requires_grad to a finished factory result.
Tensor with_requires_grad(Tensor t, const TensorOptions& o) {
  if (o.requires_grad_) t.requires_grad_(true);
  return t;
}
}  // namespace

Tensor empty(IntArrayRef sizes, TensorOptions o) {
  return with_requires_grad(make_empty(sizes, o.dtype_, o.device_), o);
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions o) {
  EMBER_CHECK(sizes.size() == strides.size(), "empty_strided: sizes ", sizes, " and strides ", strides,
              " differ in length");
  checked_numel(sizes, "empty_strided");
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    EMBER_CHECK(strides[i] >= 0, "empty_strided: negative stride in ", strides);
    if (sizes[i] == 0) extent = 0;
    int64_t reach = 0;  // (size - 1) * stride, checked like every product of sizes
    EMBER_CHECK(!__builtin_mul_overflow(std::max<int64_t>(sizes[i] - 1, 0), strides[i], &reach) &&
                    !__builtin_add_overflow(extent, reach, &reach),
                "empty_strided: sizes ", sizes, " with strides ", strides, " reach past 2^63 elements");
    if (extent) extent = reach;
  }
  Tensor base = make_empty({extent}, o.dtype_, o.device_);
  // Not a view: nothing else can see `base`.
  return with_requires_grad(Tensor(make_intrusive<TensorImpl>(base.impl()->storage(), o.dtype_, sizes, strides, 0)), o);
}

// zeros and ones take the options' dtype (float32 unless set); full infers it from the value.
Tensor zeros(IntArrayRef sizes, TensorOptions o) { return full(sizes, 0, o.dtype(o.dtype_)); }
Tensor ones(IntArrayRef sizes, TensorOptions o) { return full(sizes, 1, o.dtype(o.dtype_)); }

Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions o) {
  Tensor t = make_empty(sizes, o.dtype_set_ ? o.dtype_ : (value.is_floating_point() ? DType::Float32 : value.default_dtype()), o.device_);
  op::fill_.call(t, value);
  return with_requires_grad(t, o);
}

namespace {

TensorOptions like(const Tensor& t, const std::optional<TensorOptions>& o) {
  if (!o) return t.options();
  TensorOptions r = *o;
  if (!r.dtype_set_) r = r.dtype(t.dtype());
  return r;
}

// Fills a CPU tensor of `dtype` from a function of the index, then moves it.
template <class F>
Tensor from_index_fn(int64_t n, IntArrayRef sizes, DType dtype, Device device, F value_at) {
  Tensor host = make_empty(sizes, DType::Float64, Device::cpu());
  double* p = host.data_ptr<double>();
  for (int64_t i = 0; i < n; ++i) p[i] = value_at(i);
  return host.to(dtype).to(device);
}

}  // namespace

Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o) { return empty(t.sizes(), like(t, o)); }
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o) { return zeros(t.sizes(), like(t, o)); }
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o) { return ones(t.sizes(), like(t, o)); }
Tensor full_like(const Tensor& t, const Scalar& v, std::optional<TensorOptions> o) {
  return full(t.sizes(), v, like(t, o));
}

Tensor arange(const Scalar& end, TensorOptions o) { return arange(0, end, 1, o); }

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions o) {
  const bool any_float = start.is_floating_point() || end.is_floating_point() || step.is_floating_point();
  const DType dtype = o.dtype_set_ ? o.dtype_ : (any_float ? DType::Float32 : DType::Int64);
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(st != 0, "arange: step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound and larger bound inconsistent with step sign (start ",
              s, ", end ", e, ", step ", st, ")");
  int64_t n;
  if (!any_float) {
    const int64_t is = start.to_int(), ie = end.to_int(), ist = step.to_int();
    n = (ie - is + ist - (ist > 0 ? 1 : -1)) / ist;
    const int64_t count = n;
    if (is_integral(dtype)) {
      Tensor host = make_empty({count}, DType::Int64, Device::cpu());
      int64_t* p = host.data_ptr<int64_t>();
      for (int64_t i = 0; i < count; ++i) p[i] = is + i * ist;
      return with_requires_grad(host.to(dtype).to(o.device_), o);
    }
  } else {
    n = static_cast<int64_t>(std::ceil((e - s) / st));
  }
  return with_requires_grad(
      from_index_fn(n, {n}, dtype, o.device_, [&](int64_t i) { return s + static_cast<double>(i) * st; }), o);
}

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions o) {
  EMBER_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  const DType dtype = o.dtype_set_ ? o.dtype_ : DType::Float32;
  const double s = start.to_double(), e = end.to_double();
  const double step = steps > 1 ? (e - s) / static_cast<double>(steps - 1) : 0.0;
  // Symmetric like PyTorch: the second half counts back from the end.
  const int64_t half = steps / 2;
  return with_requires_grad(from_index_fn(steps, {steps}, dtype, o.device_,
                                           [&](int64_t i) {
                                             return i < half ? s + step * static_cast<double>(i)
                                                             : e - step * static_cast<double>(steps - 1 - i);
                                           }),
                            o);
}

Tensor eye(int64_t n, std::optional<int64_t> m, TensorOptions o) {
  const int64_t cols = m.value_or(n);
  EMBER_CHECK(n >= 0 && cols >= 0, "eye: n and m must be non-negative, got ", n, " and ", cols);
  const DType dtype = o.dtype_set_ ? o.dtype_ : DType::Float32;
  return with_requires_grad(
      from_index_fn(n * cols, {n, cols}, dtype, o.device_, [&](int64_t i) { return i / cols == i % cols ? 1.0 : 0.0; }),
      o);
}

namespace {
// Floating fills draw in float64 for float64 tensors and in float32 otherwise.
uint64_t blocks_for(const Tensor& t) {
  return t.dtype() == DType::Float64 ? cpu::blocks_needed_uniform<double>(t.numel())
                                     : cpu::blocks_needed_uniform<float>(t.numel());
}
}  // namespace

Tensor& uniform_(Tensor& t, double low, double high, Generator* g) {
  EMBER_CHECK(low <= high, "uniform_: expected low <= high, got ", low, " and ", high);
  assert_no_internal_overlap(t, "uniform_");
  Generator& gen = g ? *g : default_generator();
  const uint64_t offset = gen.reserve(blocks_for(t));
  op::uniform_.call(t, low, high, static_cast<int64_t>(gen.seed()), static_cast<int64_t>(offset));
  return t;
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* g) {
  EMBER_CHECK(std >= 0, "normal_: expected std >= 0, got ", std);
  assert_no_internal_overlap(t, "normal_");
  Generator& gen = g ? *g : default_generator();
  const uint64_t offset = gen.reserve(blocks_for(t));
  op::normal_.call(t, mean, std, static_cast<int64_t>(gen.seed()), static_cast<int64_t>(offset));
  return t;
}

Tensor rand(IntArrayRef sizes, TensorOptions o, Generator* g) {
  EMBER_CHECK(!o.dtype_set_ || is_floating_point(o.dtype_), "rand: expected a floating dtype, got ", o.dtype_);
  Tensor t = make_empty(sizes, o.dtype_, o.device_);
  return with_requires_grad(uniform_(t, 0.0, 1.0, g), o);
}

Tensor randn(IntArrayRef sizes, TensorOptions o, Generator* g) {
  EMBER_CHECK(!o.dtype_set_ || is_floating_point(o.dtype_), "randn: expected a floating dtype, got ", o.dtype_);
  Tensor t = make_empty(sizes, o.dtype_, o.device_);
  return with_requires_grad(normal_(t, 0.0, 1.0, g), o);
}

Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions o, Generator* g) {
  EMBER_CHECK(low < high, "randint: expected low < high, got ", low, " and ", high);
  Tensor t = make_empty(sizes, o.dtype_set_ ? o.dtype_ : DType::Int64, o.device_);
  Generator& gen = g ? *g : default_generator();
  const uint64_t offset = gen.reserve(cpu::blocks_needed_randint(t.numel()));
  op::random_.call(t, low, high, static_cast<int64_t>(gen.seed()), static_cast<int64_t>(offset));
  return with_requires_grad(t, o);
}

Tensor rand_like(const Tensor& t, Generator* g) { return rand(t.sizes(), t.options(), g); }
Tensor randn_like(const Tensor& t, Generator* g) { return randn(t.sizes(), t.options(), g); }

namespace {
struct BlobOwner {
  std::function<void(void*)> deleter;
};
}  // namespace

Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions o, std::function<void(void*)> deleter) {
  return from_blob(data, sizes, contiguous_strides(sizes), o, std::move(deleter));
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions o,
                 std::function<void(void*)> deleter) {
  EMBER_CHECK(sizes.size() == strides.size(), "from_blob: sizes ", sizes, " and strides ", strides,
              " differ in length");
  int64_t extent = checked_numel(sizes, "from_blob") == 0 ? 0 : 1;
  for (size_t i = 0; i < sizes.size() && extent; ++i) extent += (sizes[i] - 1) * strides[i];
  const size_t nbytes = static_cast<size_t>(extent) * element_size(o.dtype_);
  auto* owner = new BlobOwner{std::move(deleter)};
  DataPtr ptr(data, owner,
              [](void* ctx, void* p) {
                auto* own = static_cast<BlobOwner*>(ctx);
                if (own->deleter) own->deleter(p);
                delete own;
              },
              o.device_);
  auto storage = make_intrusive<StorageImpl>(std::move(ptr), nbytes);
  return with_requires_grad(Tensor(make_intrusive<TensorImpl>(std::move(storage), o.dtype_, sizes, strides, 0)), o);
}

namespace {
template <class T>
Tensor tensor_from_values(std::initializer_list<T> values, TensorOptions o) {
  const int64_t n = static_cast<int64_t>(values.size());
  Tensor host = make_empty({n}, dtype_v<T>, Device::cpu());
  std::copy(values.begin(), values.end(), host.data_ptr<T>());
  return with_requires_grad(host.to(o.device_, o.dtype_), o);
}
}  // namespace

Tensor tensor(std::initializer_list<float> v, TensorOptions o) { return tensor_from_values(v, o); }
Tensor tensor(std::initializer_list<double> v, TensorOptions o) { return tensor_from_values(v, o); }
Tensor tensor(std::initializer_list<int64_t> v, TensorOptions o) { return tensor_from_values(v, o); }
Tensor tensor(std::initializer_list<bool> v, TensorOptions o) { return tensor_from_values(v, o); }
Tensor tensor(std::initializer_list<int> v, TensorOptions o) {
  Tensor host = make_empty({static_cast<int64_t>(v.size())}, DType::Int32, Device::cpu());
  std::copy(v.begin(), v.end(), host.data_ptr<int32_t>());
  return with_requires_grad(host.to(o.device_, o.dtype_), o);
}

Tensor scalar_tensor(const Scalar& value, TensorOptions o) {
  return full({}, value, o.dtype_set_ ? o : o.dtype(value.is_floating_point() ? DType::Float32 : value.default_dtype()));
}

}  // namespace ember
