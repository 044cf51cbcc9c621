// Tensor: the handle users hold. Copying a Tensor copies a pointer (one
// atomic increment); the data is shared. Methods mirror libtorch's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/scalar.h"
#include "ember/tensor_impl.h"
#include "ember/unary_op_list.h"

namespace ember {

class Tensor;
class TensorIndex;
class Node;
class Generator;
template <class T, size_t N> class TensorAccessor;
using TensorList = std::vector<Tensor>;

// What a factory makes: dtype, device, and whether the result requires grad.
// Converts implicitly from a dtype or a device, so `zeros({2, 3}, kFloat64)`
// and `zeros({2, 3}, Device::cuda())` work.
struct TensorOptions {
  DType dtype_ = DType::Float32;
  Device device_ = Device::cpu();
  bool dtype_set_ = false;
  bool requires_grad_ = false;

  TensorOptions() = default;
  TensorOptions(DType d) : dtype_(d), dtype_set_(true) {}  // NOLINT
  TensorOptions(Device d) : device_(d) {}                  // NOLINT
  TensorOptions(DeviceType d) : device_(d) {}              // NOLINT
  TensorOptions dtype(DType d) const {
    TensorOptions o = *this;
    o.dtype_ = d;
    o.dtype_set_ = true;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  // The factory's result is a leaf that requires grad (floating dtypes only).
  TensorOptions requires_grad(bool r = true) const {
    TensorOptions o = *this;
    o.requires_grad_ = r;
    return o;
  }
};

namespace detail {
// Note [Undefined tensors]
// A default-constructed Tensor (and x.grad() before backward) holds no
// TensorImpl. Its metadata accessors and every dispatched op that takes it
// as a required argument raise
//   dim: called on an undefined tensor (a default-constructed Tensor, or x.grad() before backward)
// instead of dereferencing null; defined() and impl() are the ways to test.
[[noreturn]] void undefined_tensor(const char* method);
}  // namespace detail

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- metadata ----
  bool defined() const { return static_cast<bool>(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  int64_t dim() const { return checked_impl("dim")->dim(); }
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const { return checked_impl("sizes")->sizes(); }
  IntArrayRef strides() const { return checked_impl("strides")->strides(); }
  IntArrayRef shape() const { return sizes(); }
  int64_t size(int64_t dim) const;    // negative dims count from the end
  int64_t stride(int64_t dim) const;
  int64_t numel() const { return checked_impl("numel")->numel(); }
  DType dtype() const { return checked_impl("dtype")->dtype(); }
  DType scalar_type() const { return dtype(); }
  Device device() const { return checked_impl("device")->device(); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_contiguous() const { return checked_impl("is_contiguous")->is_contiguous(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  int64_t storage_offset() const { return checked_impl("storage_offset")->storage_offset(); }
  size_t element_size() const { return ember::element_size(dtype()); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  // Bumped by every in-place op on this tensor or a view of its storage.
  uint32_t _version() const { return checked_impl("_version")->storage()->version(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  // Element 0's address. T must match dtype() (checked).
  template <class T> T* data_ptr() const;
  void* data_ptr() const { return checked_impl("data_ptr")->data(); }
  // The value of a one-element tensor, converted to T.
  template <class T> T item() const;
  // Element access by index (ember/accessor.h): checks once that the tensor
  // is on the CPU, holds T and has N dims. Not on temporaries (it borrows).
  template <class T, size_t N> TensorAccessor<T, N> accessor() const&;
  template <class T, size_t N> TensorAccessor<T, N> accessor() && = delete;
  Scalar item() const;
  std::string to_string() const;

  // ---- conversion and copies ----
  Tensor to(DType dtype) const;
  Tensor to(Device device) const;
  // non_blocking (libtorch's spelling): a copy between a CUDA tensor and
  // pinned host memory returns before the transfer is done (device to host:
  // the result is allocated pinned); synchronise the stream before reading the
  // result or reusing the source. Other copies ignore it.
  Tensor to(Device device, bool non_blocking) const;
  Tensor to(Device device, DType dtype, bool non_blocking = false) const;
  Tensor cpu() const { return to(Device::cpu()); }
  Tensor cuda(int index = 0) const { return to(Device::cuda(index)); }
  // A contiguous copy in page-locked host memory (self when it already is
  // pinned), for asynchronous host-to-device copies. Needs the CUDA backend
  // and a device, as in PyTorch; only CPU tensors can be pinned.
  Tensor pin_memory() const;
  // True when the data is in page-locked host memory.
  bool is_pinned() const;
  Tensor clone() const;
  Tensor contiguous() const;
  // non_blocking: as for to(); between devices with pinned host memory only.
  Tensor& copy_(const Tensor& src, bool non_blocking = false);
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();

  // ---- views (share storage) ----
  Tensor view(IntArrayRef sizes) const;
  Tensor reshape(IntArrayRef sizes) const;
  Tensor view_as(const Tensor& other) const { return view(other.sizes()); }
  Tensor reshape_as(const Tensor& other) const { return reshape(other.sizes()); }
  Tensor permute(IntArrayRef dims) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim, std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(IntArrayRef sizes) const;
  Tensor expand_as(const Tensor& other) const { return expand(other.sizes()); }
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor unflatten(int64_t dim, IntArrayRef sizes) const;
  TensorList split(int64_t split_size, int64_t dim = 0) const;
  TensorList split(IntArrayRef split_sizes, int64_t dim = 0) const;  // as split_with_sizes
  TensorList split_with_sizes(IntArrayRef split_sizes, int64_t dim = 0) const;
  TensorList chunk(int64_t chunks, int64_t dim = 0) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> storage_offset = std::nullopt) const;
  // Indexing like libtorch: t.index({Slice(0, 2), 1, None, Ellipsis, index_tensor}).
  Tensor index(std::initializer_list<TensorIndex> indices) const;
  Tensor index(const std::vector<TensorIndex>& indices) const;
  Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value);
  Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value);
  Tensor& index_put_(const std::vector<TensorIndex>& indices, const Tensor& value);

  // ---- elementwise ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor div(const Tensor& other, std::string_view rounding_mode) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(const Scalar& other) const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other, const Scalar& alpha = 1);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor& pow_(const Scalar& exponent);

  Tensor eq(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(const Scalar& other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor logical_xor(const Tensor& other) const;
  Tensor logical_not() const;
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  // Bounds as tensors (broadcast with self; at least one given).
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt) const;
  Tensor& clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
  Tensor atan2(const Tensor& other) const;
  Tensor& atan2_(const Tensor& other);
  Tensor logaddexp(const Tensor& other) const;
  // self + weight * (end - self)
  Tensor lerp(const Tensor& end, const Scalar& weight) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor& lerp_(const Tensor& end, const Scalar& weight);
  Tensor& lerp_(const Tensor& end, const Tensor& weight);
  // self + value * tensor1 * tensor2, self + value * tensor1 / tensor2
  Tensor addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  Tensor& addcmul_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
  Tensor addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1) const;
  Tensor& addcdiv_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);

  // The unary ops of ember/unary_op_list.h, and their in-place forms: t.exp(), t.exp_(), ...
#define EMBER_UNARY_METHOD(name) \
  Tensor name() const;           \
  Tensor& name##_();
  EMBER_FORALL_UNARY_OPS(EMBER_UNARY_METHOD)
#undef EMBER_UNARY_METHOD
  Tensor gelu(std::string_view approximate = "none") const;
  Tensor softplus(const Scalar& beta = 1, const Scalar& threshold = 20) const;
  Tensor isnan() const;
  Tensor isinf() const;

  // ---- reductions (an empty dim list means all dims) ----
  Tensor sum(IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor mean(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor prod(IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt) const;
  Tensor max() const;
  Tensor min() const;
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor var(IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor std(IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false) const;
  Tensor norm(const Scalar& p = 2, IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  Tensor all(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor any(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<DType> dtype = std::nullopt) const;

  // ---- linear algebra ----
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;
  Tensor matmul(const Tensor& other) const;
  Tensor dot(const Tensor& other) const;
  Tensor mv(const Tensor& vec) const;
  Tensor outer(const Tensor& other) const;
  // beta * self + alpha * bmm(batch1, batch2)
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1, const Scalar& alpha = 1) const;
  Tensor kron(const Tensor& other) const;
  Tensor diag(int64_t diagonal = 0) const;
  Tensor trace() const;

  // ---- other ----
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  std::tuple<Tensor, Tensor> sort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  std::tuple<Tensor, Tensor> topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  // (values, inverse, counts) as ember::unique.
  std::tuple<Tensor, Tensor, Tensor> unique(bool sorted = true, bool return_inverse = false,
                                            bool return_counts = false,
                                            std::optional<int64_t> dim = std::nullopt) const;
  // Random draws (ember/ops.h): self holds the probabilities, or is filled with 0/1 draws of p.
  Tensor bernoulli(Generator* generator = nullptr) const;
  Tensor bernoulli(double p, Generator* generator = nullptr) const;
  Tensor& bernoulli_(double p = 0.5, Generator* generator = nullptr);
  Tensor& bernoulli_(const Tensor& p, Generator* generator = nullptr);
  Tensor multinomial(int64_t num_samples, bool replacement = false, Generator* generator = nullptr) const;

  // ---- gather, scatter and friends (same as the free functions in ember/ops.h) ----
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor scatter(int64_t dim, const Tensor& index, const Scalar& value) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1) const;
  Tensor masked_select(const Tensor& mask) const;
  Tensor repeat(IntArrayRef repeats) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  // Along dim, optionally computed in (and returned as) dtype; as F::softmax.
  Tensor softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;
  Tensor log_softmax(int64_t dim, std::optional<DType> dtype = std::nullopt) const;

  // ---- autograd (see ember/autograd.h) ----
  // Only floating-point tensors can require grad.
  bool requires_grad() const;
  Tensor& requires_grad_(bool requires_grad = true);
  void set_requires_grad(bool requires_grad) { requires_grad_(requires_grad); }
  // The gradient accumulated by backward() (leaves, and non-leaves that
  // called retain_grad()); undefined until then.
  Tensor grad() const;
  void set_grad(const Tensor& grad) const;
  // The node that produced this tensor; null for leaves.
  std::shared_ptr<Node> grad_fn() const;
  // Leaves: tensors that do not require grad, and tensors the user marked as
  // requiring grad (they have no grad_fn).
  bool is_leaf() const;
  // Which result of grad_fn this tensor is.
  uint32_t output_nr() const;
  void retain_grad() const;
  bool retains_grad() const;
  // Makes this leaf use `new_data`'s data (its memory, dtype, device and
  // shape; shared, not copied) while keeping its identity, requires_grad,
  // grad and hooks: every handle to it sees the new data. Graphs recorded
  // before a change of dtype, device or shape no longer reach it.
  void set_data(const Tensor& new_data) const;
  // A tensor sharing the data but not the history.
  Tensor detach() const;
  Tensor& detach_();
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false, const TensorList& inputs = {}) const;
  // `hook` sees the gradient w.r.t. this tensor each time one is computed; a
  // defined result replaces the gradient. Returns a handle for remove_hook.
  uint64_t register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void remove_hook(uint64_t handle) const;
  // Leaves only: runs after the gradient has been accumulated into grad().
  uint64_t register_post_accumulate_grad_hook(std::function<void(const Tensor&)> hook) const;
  // A view shares its base's storage; in-place ops on it update the base's history.
  bool is_view() const;
  Tensor _base() const;

  // ---- operators ----
  Tensor operator-() const { return neg(); }
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor& operator+=(const Tensor& o) { return add_(o); }
  Tensor& operator+=(const Scalar& o) { return add_(o); }
  Tensor& operator-=(const Tensor& o) { return sub_(o); }
  Tensor& operator-=(const Scalar& o) { return sub_(o); }
  Tensor& operator*=(const Tensor& o) { return mul_(o); }
  Tensor& operator*=(const Scalar& o) { return mul_(o); }
  Tensor& operator/=(const Tensor& o) { return div_(o); }
  Tensor& operator/=(const Scalar& o) { return div_(o); }

 private:
  // impl_, or an ember::Error naming `method` when the tensor is undefined
  // (Note [Undefined tensors]). One predictable branch inline; the error
  // path is out of line, so a defined tensor pays no call.
  TensorImpl* checked_impl(const char* method) const {
    if (__builtin_expect(!impl_, 0)) detail::undefined_tensor(method);
    return impl_.get();
  }

  IntrusivePtr<TensorImpl> impl_;
};

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);

// Prints like PyTorch: tensor([[1.0000, 2.0000]], dtype=float64)
std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace ember

#include "ember/accessor.h"  // Tensor::accessor
