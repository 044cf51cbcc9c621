// Derivatives of the matrix products (Note [Writing a derivative formula]).
// For C = A @ B: dA = dC @ B^T and dB = A^T @ dC. The kernels take inputs
// of one dtype, so only addmm's broadcast self needs reduce_to.
// matmul, linear and outer are built from these ops and need nothing more.
#include "autograd/formula.h"
#include "core/op_decls.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// Multiplies by a Scalar factor of the forward call, skipping the common 1.
Tensor scaled(const Tensor& t, const Scalar& factor) {
  const bool one = factor.is_floating_point() ? factor.to_double() == 1.0 : factor.to_int() == 1;
  return one ? t : t.mul(factor);
}

// a @ b, laid out like `like` (the input whose gradient it is). When `like` is
// column-major, as linear's weight.t(), the product is computed transposed,
// (b^T @ a^T)^T: the same numbers, but the gradient that reaches the weight
// through t()'s backward is then contiguous and is stored as the weight's
// .grad without a transposing copy.
Tensor mm_like(const Tensor& a, const Tensor& b, const Tensor& like) {
  const bool column_major = like.dim() == 2 && like.size(0) > 1 && like.size(1) > 1 && like.stride(0) == 1;
  return column_major ? b.t().mm(a.t()).t() : a.mm(b);
}

// mm(self (n, k), mat2 (k, m)) -> (n, m)
TensorList mm_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor& grad = grads[0];
  TensorList out(2);
  if (ctx.needs_grad(0)) out[0] = mm_like(grad, ctx.saved(1).t(), ctx.saved(0));
  if (ctx.needs_grad(1)) out[1] = mm_like(ctx.saved(0).t(), grad, ctx.saved(1));
  return out;
}

// bmm(self (b, n, k), mat2 (b, k, m)) -> (b, n, m)
TensorList bmm_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor& grad = grads[0];
  TensorList out(2);
  if (ctx.needs_grad(0)) out[0] = grad.bmm(ctx.saved(1).transpose(1, 2));
  if (ctx.needs_grad(1)) out[1] = ctx.saved(0).transpose(1, 2).bmm(grad);
  return out;
}

// addmm(self (broadcasts to (n, m)), mat1 (n, k), mat2 (k, m), beta, alpha)
//   = beta * self + alpha * mat1 @ mat2
TensorList addmm_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor& grad = grads[0];
  const Scalar beta = ctx.scalar(3), alpha = ctx.scalar(4);
  TensorList out(3);
  if (ctx.needs_grad(0)) out[0] = reduce_to(scaled(grad, beta), ctx.meta(0));
  if (ctx.needs_grad(1)) out[1] = scaled(mm_like(grad, ctx.saved(2).t(), ctx.saved(1)), alpha);
  if (ctx.needs_grad(2)) out[2] = scaled(mm_like(ctx.saved(1).t(), grad, ctx.saved(2)), alpha);
  return out;
}

// dot(self (n), other (n)) -> () : each input's gradient is the other, scaled.
TensorList dot_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor& grad = grads[0];
  TensorList out(2);
  if (ctx.needs_grad(0)) out[0] = ctx.saved(1).mul(grad);
  if (ctx.needs_grad(1)) out[1] = ctx.saved(0).mul(grad);
  return out;
}

// mv(self (n, k), vec (k)) -> (n): d self = outer(grad, vec), d vec = self^T @ grad.
TensorList mv_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor& grad = grads[0];
  TensorList out(2);
  if (ctx.needs_grad(0)) out[0] = grad.unsqueeze(1).mm(ctx.saved(1).unsqueeze(0));
  if (ctx.needs_grad(1)) out[1] = ctx.saved(0).t().mv(grad);
  return out;
}

}  // namespace

void register_linalg_formulas() {
  register_formula(op::mm.entry(), Formula{{0, 1}, false, &mm_backward});
  register_formula(op::bmm.entry(), Formula{{0, 1}, false, &bmm_backward});
  register_formula(op::addmm.entry(), Formula{{1, 2}, false, &addmm_backward});
  register_formula(op::dot.entry(), Formula{{0, 1}, false, &dot_backward});
  register_formula(op::mv.entry(), Formula{{0, 1}, false, &mv_backward});
}

}  // namespace ember::autograd
