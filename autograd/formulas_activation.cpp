// Derivatives of the activations (Note [Writing a derivative formula] in
// autograd/formula.h).
//
// The first derivative of f is its fused kernel f_backward(grad, x) (see
// Note [Activation kernels], kernels/cpu/elementwise/activation.cpp). That op has a formula
// too, written with ember ops: d/dgrad is f_backward again (it is linear in
// grad) and d/dx is grad * f''(x), so second derivatives work.
#include "autograd/formula.h"
#include "core/op_decls_activation.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// ---- first derivatives: f(self, ...) -> f_backward(grad, self, ...) ----

TensorList leaky_relu_backward(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::leaky_relu_backward.call(grads[0], c.saved(0), c.scalar(1)), c.meta(0))};
}
TensorList elu_backward(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::elu_backward.call(grads[0], c.saved(0), c.scalar(1)), c.meta(0))};
}
template <const TypedOp<Tensor(const Tensor&, const Tensor&)>* Backward>
TensorList unary_backward(const GradContext& c, const TensorList& grads) {
  return {reduce_to(Backward->call(grads[0], c.saved(0)), c.meta(0))};
}

// ---- second derivatives: f_backward(grad, x, ...) ----
// Slot 0 is grad (the result is linear in it), slot 1 is x; `f2` is f''(x),
// or undefined where f is piecewise linear (f'' = 0 almost everywhere).

template <class Rerun>
TensorList backward_of_backward(const GradContext& c, const TensorList& grads, Rerun rerun, const Tensor& f2) {
  const Tensor& gg = grads[0];
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(rerun(gg), c.meta(0));
  if (c.needs_grad(1) && f2.defined()) out[c.slot(1)] = reduce_to(gg * c.saved(0) * f2, c.meta(1));
  return out;
}

TensorList leaky_relu_backward_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(1);
  const Scalar slope = c.scalar(2);
  return backward_of_backward(c, grads, [&](const Tensor& g) { return op::leaky_relu_backward.call(g, x, slope); },
                              Tensor());
}

// elu'' = alpha e^x for x <= 0, else 0.
TensorList elu_backward_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(1);
  const Scalar alpha = c.scalar(2);
  const Tensor f2 = c.needs_grad(1) ? where(x.le(0), x.exp() * alpha, 0) : Tensor();
  return backward_of_backward(c, grads, [&](const Tensor& g) { return op::elu_backward.call(g, x, alpha); }, f2);
}

// hardswish'' = 1/3 on [-3, 3] (the branch the first derivative takes), else 0.
TensorList hardswish_backward_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(1);
  const Tensor f2 = c.needs_grad(1) ? where(x.ge(-3).logical_and(x.le(3)), 1.0 / 3.0, zeros_like(x)) : Tensor();
  return backward_of_backward(c, grads, [&](const Tensor& g) { return op::hardswish_backward.call(g, x); }, f2);
}

TensorList hardsigmoid_backward_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(1);
  return backward_of_backward(c, grads, [&](const Tensor& g) { return op::hardsigmoid_backward.call(g, x); },
                              Tensor());
}

// mish' = t + x s (1 - t^2), t = tanh(softplus(x)), s = sigmoid(x), t' = s (1 - t^2):
// mish'' = (1 - t^2) s (2 + x (1 - s - 2 t s)).
TensorList mish_backward_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(1);
  Tensor f2;
  if (c.needs_grad(1)) {
    const Tensor s = x.sigmoid(), t = x.softplus().tanh();
    f2 = (1 - t * t) * s * (x * (1 - s - 2 * t * s) + 2);
  }
  return backward_of_backward(c, grads, [&](const Tensor& g) { return op::mish_backward.call(g, x); }, f2);
}

// log_sigmoid' = sigmoid(-x), log_sigmoid'' = -s (1 - s) with s = sigmoid(x).
TensorList log_sigmoid_backward_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(1);
  Tensor f2;
  if (c.needs_grad(1)) {
    const Tensor s = x.sigmoid();
    f2 = -(s * (1 - s));
  }
  return backward_of_backward(c, grads, [&](const Tensor& g) { return op::log_sigmoid_backward.call(g, x); }, f2);
}

// threshold_backward is linear in grad and flat in x.
TensorList threshold_backward_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(1);
  const Scalar threshold = c.scalar(2);
  return backward_of_backward(
      c, grads, [&](const Tensor& g) { return op::threshold_backward.call(g, x, threshold); }, Tensor());
}

}  // namespace

void register_activation_formulas() {
  register_formula(op::leaky_relu.entry(), Formula{{0}, false, &leaky_relu_backward});
  register_formula(op::elu.entry(), Formula{{0}, false, &elu_backward});
  register_formula(op::hardswish.entry(), Formula{{0}, false, &unary_backward<&op::hardswish_backward>});
  register_formula(op::hardsigmoid.entry(), Formula{{0}, false, &unary_backward<&op::hardsigmoid_backward>});
  register_formula(op::mish.entry(), Formula{{0}, false, &unary_backward<&op::mish_backward>});
  register_formula(op::log_sigmoid.entry(), Formula{{0}, false, &unary_backward<&op::log_sigmoid_backward>});

  register_formula(op::leaky_relu_backward.entry(), Formula{{0, 1}, false, &leaky_relu_backward_backward});
  register_formula(op::elu_backward.entry(), Formula{{0, 1}, false, &elu_backward_backward});
  register_formula(op::hardswish_backward.entry(), Formula{{0, 1}, false, &hardswish_backward_backward});
  register_formula(op::hardsigmoid_backward.entry(), Formula{{0, 1}, false, &hardsigmoid_backward_backward});
  register_formula(op::mish_backward.entry(), Formula{{0, 1}, false, &mish_backward_backward});
  register_formula(op::log_sigmoid_backward.entry(), Formula{{0, 1}, false, &log_sigmoid_backward_backward});
  register_formula(op::threshold_backward.entry(), Formula{{0, 1}, false, &threshold_backward_backward});
}

}  // namespace ember::autograd
