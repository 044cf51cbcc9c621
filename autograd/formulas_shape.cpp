// Derivatives of joining, triangles and sorting (Note [Writing a derivative
// formula]). cat hands each input its slice of the gradient; tril/triu keep
// the gradient of the elements they keep; sort and topk send each value's
// gradient back to the position its index names (the indices get none).
#include "autograd/formula.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// A 1-D tensor of shape [0]: cat skips it whatever the other shapes.
bool is_legacy_empty(const TensorMeta& m) { return m.sizes.size() == 1 && m.sizes[0] == 0; }

// cat(tensors, dim): one slot per tensor of the list.
TensorList cat_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor& grad = grads[0];
  const size_t n = ctx.list_size(0);
  const int64_t dim = wrap_dim(ctx.int_arg(1), grad.dim(), "cat backward");
  TensorList out(ctx.num_slots());
  int64_t offset = 0;
  for (size_t i = 0; i < n; ++i) {
    const TensorMeta& m = ctx.meta(0, i);
    if (is_legacy_empty(m)) {
      if (ctx.needs_grad(0, i)) out[ctx.slot(0, i)] = zeros(m.sizes, TensorOptions(m.dtype).device(m.device));
      continue;
    }
    const int64_t size = m.sizes[dim];
    if (ctx.needs_grad(0, i)) out[ctx.slot(0, i)] = reduce_to(grad.narrow(dim, offset, size), m);
    offset += size;
  }
  return out;
}

TensorList tril_backward(const GradContext& ctx, const TensorList& grads) {
  return {grads[0].tril(ctx.int_arg(1))};
}

TensorList triu_backward(const GradContext& ctx, const TensorList& grads) {
  return {grads[0].triu(ctx.int_arg(1))};
}

// The gradient of `input` for values = input gathered along `dim` at
// `indices` (sort, topk): zeros with grad[p] added at the position whose
// coordinates are p's, except indices[p] along `dim`. The index list names
// every dim: `indices` for `dim`, a broadcastable arange for the others.
Tensor scatter_back(const Tensor& grad, const Tensor& indices, int64_t dim, const TensorMeta& input) {
  if (input.sizes.empty()) return grad;  // a 0-d input is its own sort
  const int64_t nd = static_cast<int64_t>(input.sizes.size());
  const int64_t d = wrap_dim(dim, nd, "sort/topk backward");
  TensorList index(static_cast<size_t>(nd));
  for (int64_t j = 0; j < nd; ++j) {
    if (j == d) {
      index[j] = indices;
      continue;
    }
    DimVector shape(static_cast<size_t>(nd), 1);
    shape[j] = indices.sizes()[j];
    index[j] = arange(shape[j], TensorOptions(kInt64).device(indices.device())).view(shape);
  }
  Tensor z = zeros(input.sizes, grad.options());
  return op::index_put_.call(z, index, grad, true);
}

// sort(self, dim, descending, stable) -> (values, indices)
TensorList sort_backward(const GradContext& ctx, const TensorList& grads) {
  return {scatter_back(grads[0], ctx.result(1), ctx.int_arg(1), ctx.meta(0))};
}

// topk(self, k, dim, largest, sorted) -> (values, indices)
TensorList topk_backward(const GradContext& ctx, const TensorList& grads) {
  return {scatter_back(grads[0], ctx.result(1), ctx.int_arg(2), ctx.meta(0))};
}

}  // namespace

void register_shape_formulas() {
  register_formula(op::cat.entry(), Formula{{}, false, &cat_backward});
  register_formula(op::tril.entry(), Formula{{}, false, &tril_backward});
  register_formula(op::triu.entry(), Formula{{}, false, &triu_backward});
  register_formula(op::sort.entry(), Formula{{}, true, &sort_backward});
  register_formula(op::topk.entry(), Formula{{}, true, &topk_backward});
  register_non_differentiable(op::one_hot.entry());
  register_non_differentiable(op::unique.entry());
  register_non_differentiable(op::searchsorted.entry());
}

}  // namespace ember::autograd
