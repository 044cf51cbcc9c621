// The Tensor methods softmax and log_softmax (F::softmax and F::log_softmax
// call them): each calls its dispatched op (core/op_decls_norm.h).
#include "core/op_decls_norm.h"
#include "ember/tensor.h"

namespace ember {

// An integer input with a floating dtype converts first (the kernels take floating inputs).
Tensor Tensor::softmax(int64_t dim, std::optional<DType> dtype) const {
  if (dtype && !is_floating_point()) return op::softmax.call(to(*dtype), dim, std::nullopt);
  return op::softmax.call(*this, dim, dtype);
}

Tensor Tensor::log_softmax(int64_t dim, std::optional<DType> dtype) const {
  if (dtype && !is_floating_point()) return op::log_softmax.call(to(*dtype), dim, std::nullopt);
  return op::log_softmax.call(*this, dim, dtype);
}

}  // namespace ember
