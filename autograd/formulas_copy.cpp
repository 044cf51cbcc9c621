// Derivatives of copies, fills and random draws (Note [Writing a derivative
// formula]). An op that overwrites `self` (copy_, fill_, the random fills)
// cuts self's old values out of the result: self's slot gets no gradient.
#include "autograd/formula.h"
#include "core/op_decls.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// copy_(self, src): src was broadcast to self's shape and converted to self's
// dtype and device, so its gradient is summed and converted back.
TensorList copy_backward(const GradContext& ctx, const TensorList& grads) {
  TensorList out(2);
  if (ctx.needs_grad(1)) out[1] = reduce_to(grads[0], ctx.meta(1));
  return out;
}

// fill_(self, value), uniform_, normal_, random_: the new values do not
// depend on the old ones.
TensorList overwrite_backward(const GradContext&, const TensorList&) { return {Tensor()}; }

// bernoulli_(self, p): 0/1 draws, piecewise constant in p (as PyTorch, a zero gradient).
TensorList draws_backward(const GradContext& ctx, const TensorList&) { return TensorList(ctx.num_slots()); }

TensorList clone_backward(const GradContext&, const TensorList& grads) { return {grads[0]}; }

}  // namespace

void register_copy_formulas() {
  register_formula(op::copy_.entry(), Formula{{}, false, &copy_backward});
  register_formula(op::fill_.entry(), Formula{{}, false, &overwrite_backward});
  register_formula(op::uniform_.entry(), Formula{{}, false, &overwrite_backward});
  register_formula(op::normal_.entry(), Formula{{}, false, &overwrite_backward});
  register_formula(op::random_.entry(), Formula{{}, false, &overwrite_backward});
  register_formula(op::clone.entry(), Formula{{}, false, &clone_backward});
  register_formula(op::bernoulli_.entry(), Formula{{}, false, &draws_backward});
  register_non_differentiable(op::multinomial.entry());
}

}  // namespace ember::autograd
