// Derivatives of advanced indexing (Note [Writing a derivative formula];
// the indexing rules are in Note [Advanced indexing], kernels/cpu/index/advanced_index.cpp).
//
// index gathers, index_put_ scatters: each one's backward is the other, with
// the same index list (masks, undefined "no index" entries and all), so the
// two formulas need no knowledge of how the indices are laid out. The index
// tensors are integer and get no gradient.
#include "autograd/formula.h"
#include "core/op_decls.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// index(self, indices): an element picked k times receives k gradients,
// hence accumulate=true.
TensorList index_backward(const GradContext& ctx, const TensorList& grads) {
  TensorList out(ctx.num_slots());
  Tensor z = zeros(ctx.meta(0).sizes, grads[0].options());
  out[ctx.slot(0)] = op::index_put_.call(z, ctx.saved_list(1), grads[0], true);
  return out;
}

// index_put_(self, indices, values, accumulate)
TensorList index_put_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor& grad = grads[0];
  const TensorList indices = ctx.saved_list(1);
  const bool accumulate = ctx.flag(3);
  TensorList out(ctx.num_slots());
  if (ctx.needs_grad(0)) {
    // Overwritten elements no longer depend on self's old values; added-to ones still do.
    out[ctx.slot(0)] = accumulate ? grad : op::index_put_.call(grad.clone(), indices, zeros({}, grad.options()), false);
  }
  if (ctx.needs_grad(2)) {
    // values were broadcast to the indexed shape (and cast to self's dtype).
    out[ctx.slot(2)] = reduce_to(op::index.call(grad, indices), ctx.meta(2));
  }
  return out;
}

}  // namespace

void register_advanced_index_formulas() {
  register_formula(op::index.entry(), Formula{{1}, false, &index_backward});
  register_formula(op::index_put_.entry(), Formula{{1}, false, &index_put_backward});
  register_non_differentiable(op::nonzero.entry());
}

}  // namespace ember::autograd
