// The free functions ember::gather, scatter, ... (include/ember/ops.h) and the
// Tensor methods of the same names: each calls its dispatched op (core/op_decls_indexing.h); the kernels are in
// kernels/cpu/index/gather_scatter.cpp, flip_roll_repeat.cpp and masked_select.cpp.
#include "core/op_decls_indexing.h"
#include "ember/ops.h"

namespace ember {

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) { return op::gather.call(self, dim, index); }
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return op::scatter.call(self, dim, index, src);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return op::scatter_value.call(self, dim, index, value);
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return op::scatter_add.call(self, dim, index, src);
}
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return op::index_select.call(self, dim, index);
}
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  return op::index_add.call(self, dim, index, source, alpha);
}
Tensor masked_select(const Tensor& self, const Tensor& mask) { return op::masked_select.call(self, mask); }
Tensor repeat(const Tensor& self, IntArrayRef repeats) { return op::repeat.call(self, repeats); }
Tensor flip(const Tensor& self, IntArrayRef dims) { return op::flip.call(self, dims); }
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) { return op::roll.call(self, shifts, dims); }

Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return ember::gather(*this, dim, index); }
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter(*this, dim, index, src);
}
Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Scalar& value) const {
  return ember::scatter(*this, dim, index, value);
}
Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return ember::scatter_add(*this, dim, index, src);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return ember::index_select(*this, dim, index); }
Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) const {
  return ember::index_add(*this, dim, index, source, alpha);
}
Tensor Tensor::masked_select(const Tensor& mask) const { return ember::masked_select(*this, mask); }
Tensor Tensor::repeat(IntArrayRef repeats) const { return ember::repeat(*this, repeats); }
Tensor Tensor::flip(IntArrayRef dims) const { return ember::flip(*this, dims); }
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const { return ember::roll(*this, shifts, dims); }

}  // namespace ember
