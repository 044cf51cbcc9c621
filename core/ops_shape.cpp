// Joining, triangles, one-hot and sorting as the user calls them. stack is a
// composite: each input gains a size-1 dim, then one cat joins them.
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

Tensor cat(const TensorList& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  return op::cat.call(tensors, dim);
}

Tensor stack(const TensorList& tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    EMBER_CHECK(tensors[i].defined(), "stack: tensor ", i, " of the list is undefined");
    EMBER_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack: expects each tensor to be equal size, but got ",
                tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  }
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  TensorList parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return op::cat.call(parts, d);
}

Tensor tril(const Tensor& t, int64_t diagonal) { return op::tril.call(t, diagonal); }
Tensor triu(const Tensor& t, int64_t diagonal) { return op::triu.call(t, diagonal); }

Tensor one_hot(const Tensor& indices, int64_t num_classes) {
  // Checked here too, so a wrong dtype names one_hot's rule rather than the kernel table.
  EMBER_CHECK(indices.dtype() == DType::Int64, "one_hot: expected an int64 tensor of class indices, got ",
              indices.dtype());
  return op::one_hot.call(indices, num_classes);
}

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool stable) {
  return op::sort.call(t, dim, descending, stable);
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim, bool largest, bool sorted) {
  return op::topk.call(t, k, dim, largest, sorted);
}

Tensor Tensor::tril(int64_t diagonal) const { return op::tril.call(*this, diagonal); }
Tensor Tensor::triu(int64_t diagonal) const { return op::triu.call(*this, diagonal); }

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending, bool stable) const {
  return op::sort.call(*this, dim, descending, stable);
}

std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return op::topk.call(*this, k, dim, largest, sorted);
}

}  // namespace ember
