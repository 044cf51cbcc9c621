// Public reductions and scans: free functions and Tensor methods, each a
// dispatched call (CPU kernels: kernels/cpu/reduce/).
#include "core/op_decls.h"
#include "ember/ops.h"

namespace ember {

Tensor sum(const Tensor& t, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return op::sum.call(t, dims, keepdim, dtype);
}
Tensor mean(const Tensor& t, IntArrayRef dims, bool keepdim) { return op::mean.call(t, dims, keepdim); }
Tensor prod(const Tensor& t, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return op::prod.call(t, dims, keepdim, dtype);
}
Tensor amax(const Tensor& t, IntArrayRef dims, bool keepdim) { return op::amax.call(t, dims, keepdim); }
Tensor amin(const Tensor& t, IntArrayRef dims, bool keepdim) { return op::amin.call(t, dims, keepdim); }
std::tuple<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) { return op::max_dim.call(t, dim, keepdim); }
std::tuple<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) { return op::min_dim.call(t, dim, keepdim); }
Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return op::argmax.call(t, dim, keepdim); }
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return op::argmin.call(t, dim, keepdim); }
Tensor var(const Tensor& t, IntArrayRef dims, int64_t correction, bool keepdim) {
  return op::var.call(t, dims, correction, keepdim);
}
Tensor std(const Tensor& t, IntArrayRef dims, int64_t correction, bool keepdim) {
  return op::std_dev.call(t, dims, correction, keepdim);
}
Tensor norm(const Tensor& t, const Scalar& p, IntArrayRef dims, bool keepdim) {
  return op::norm.call(t, p, dims, keepdim);
}
Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim) { return op::logsumexp.call(t, dims, keepdim); }
Tensor all(const Tensor& t, IntArrayRef dims, bool keepdim) { return op::all.call(t, dims, keepdim); }
Tensor any(const Tensor& t, IntArrayRef dims, bool keepdim) { return op::any.call(t, dims, keepdim); }
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype) { return op::cumsum.call(t, dim, dtype); }
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype) { return op::cumprod.call(t, dim, dtype); }

// ---- Tensor methods ----

Tensor Tensor::sum(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return op::sum.call(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean(IntArrayRef dims, bool keepdim) const { return op::mean.call(*this, dims, keepdim); }
Tensor Tensor::prod(IntArrayRef dims, bool keepdim, std::optional<DType> dtype) const {
  return op::prod.call(*this, dims, keepdim, dtype);
}
// max()/min() without a dim: amax/amin over every dim, an error for an empty tensor.
Tensor Tensor::max() const {
  EMBER_CHECK(!defined() || numel() > 0, "max: cannot take the max of an empty tensor (shape ", sizes(),
              "); pass a dim of non-zero size, or use amax over non-empty dims");
  return op::amax.call(*this, {}, false);
}
Tensor Tensor::min() const {
  EMBER_CHECK(!defined() || numel() > 0, "min: cannot take the min of an empty tensor (shape ", sizes(),
              "); pass a dim of non-zero size, or use amin over non-empty dims");
  return op::amin.call(*this, {}, false);
}
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return op::max_dim.call(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return op::min_dim.call(*this, dim, keepdim);
}
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const { return op::amax.call(*this, dims, keepdim); }
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const { return op::amin.call(*this, dims, keepdim); }
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const { return op::argmax.call(*this, dim, keepdim); }
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const { return op::argmin.call(*this, dim, keepdim); }
Tensor Tensor::var(IntArrayRef dims, int64_t correction, bool keepdim) const {
  return op::var.call(*this, dims, correction, keepdim);
}
Tensor Tensor::std(IntArrayRef dims, int64_t correction, bool keepdim) const {
  return op::std_dev.call(*this, dims, correction, keepdim);
}
Tensor Tensor::norm(const Scalar& p, IntArrayRef dims, bool keepdim) const {
  return op::norm.call(*this, p, dims, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const { return op::logsumexp.call(*this, dims, keepdim); }
Tensor Tensor::all(IntArrayRef dims, bool keepdim) const { return op::all.call(*this, dims, keepdim); }
Tensor Tensor::any(IntArrayRef dims, bool keepdim) const { return op::any.call(*this, dims, keepdim); }
Tensor Tensor::cumsum(int64_t dim, std::optional<DType> dtype) const { return op::cumsum.call(*this, dim, dtype); }
Tensor Tensor::cumprod(int64_t dim, std::optional<DType> dtype) const { return op::cumprod.call(*this, dim, dtype); }

}  // namespace ember
