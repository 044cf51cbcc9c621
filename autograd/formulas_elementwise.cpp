// Derivative formulas of the elementwise ops: binary arithmetic, the unary
// math functions, activations, clamp, masked_fill and where (Note [Writing a
// derivative formula] in autograd/formula.h). Comparisons, logical ops and
// isnan/isinf are registered as non-differentiable.
//
// Scalar arguments arrive as wrapped 0-d tensors; they never require grad, so
// their slot is skipped by `needs_grad`, but a formula may still read them
// (e.g. the 2.5 of x * 2.5).
#include <numbers>

#include "autograd/formula.h"
#include "core/op_decls.h"
#include "core/op_decls_activation.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// -s, keeping an integer alpha integral (so it does not change type promotion).
Scalar negated(const Scalar& s) {
  return s.is_floating_point() ? Scalar(-s.to_double()) : Scalar(-s.to<int64_t>());
}

bool is_one(const Scalar& s) { return s.to_double() == 1.0; }

// ---- binary arithmetic: one gradient per tensor argument, un-broadcast by reduce_to ----

TensorList add_backward(const GradContext& c, const TensorList& grads) {
  const Tensor& g = grads[0];
  const Scalar alpha = c.scalar(2);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(g, c.meta(0));
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(is_one(alpha) ? g : g * alpha, c.meta(1));
  return out;
}

TensorList sub_backward(const GradContext& c, const TensorList& grads) {
  const Tensor& g = grads[0];
  const Scalar alpha = c.scalar(2);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(g, c.meta(0));
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(is_one(alpha) ? -g : g * negated(alpha), c.meta(1));
  return out;
}

TensorList mul_backward(const GradContext& c, const TensorList& grads) {
  const Tensor& g = grads[0];
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(g * c.saved(1), c.meta(0));
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(g * c.saved(0), c.meta(1));
  return out;
}

TensorList div_backward(const GradContext& c, const TensorList& grads) {
  const Tensor& g = grads[0];
  const Tensor other = c.saved(1);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(g / other, c.meta(0));
  // d(a/b)/db = -a/b^2, as (a/b)/b so that b^2 cannot overflow.
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(-g * ((c.saved(0) / other) / other), c.meta(1));
  return out;
}

// Rounded division is piecewise constant: zero gradient (as PyTorch's floor/trunc division).
TensorList rounded_div_backward(const GradContext& c, const TensorList&) { return TensorList(c.num_slots()); }

TensorList pow_backward(const GradContext& c, const TensorList& grads) {
  const Tensor& g = grads[0];
  // A scalar base or exponent arrives wrapped, and arithmetic on wrapped
  // numbers alone (`e - 1`, `log(base)`) runs in the default dtype (float32,
  // by the promotion rules), losing a float64 value's digits. As plain 0-d
  // tensors they keep them.
  const auto plain = [](const Tensor& t) { return t.impl()->is_wrapped_number() ? t.clone() : t; };
  const Tensor self = plain(c.saved(0)), exponent = plain(c.saved(1));
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) {
    // e * x^(e-1), taken as 0 where e == 0 (else x == 0 would give 0 * inf).
    const Tensor d = where(exponent.eq(0), 0, exponent * self.pow(exponent - 1));
    out[c.slot(0)] = reduce_to(g * d, c.meta(0));
  }
  if (c.needs_grad(1)) {
    // x^e * log(x); at x == 0 with e >= 0 the limit is 0 (not 0 * -inf).
    const Tensor at_zero = self.eq(0).logical_and(exponent.ge(0));
    out[c.slot(1)] = reduce_to(g * where(at_zero, 0, c.result() * self.log()), c.meta(1));
  }
  return out;
}

// maximum (kMax) and minimum: the larger (smaller) argument takes the
// gradient; a tie splits it half and half, as PyTorch does.
template <bool kMax>
TensorList extremum_backward(const GradContext& c, const TensorList& grads) {
  const Tensor self = c.saved(0), other = c.saved(1);
  const Tensor shared = where(self.eq(other), grads[0] / 2, grads[0]);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) {
    const Tensor self_loses = kMax ? self.lt(other) : self.gt(other);
    out[c.slot(0)] = reduce_to(where(self_loses, 0, shared), c.meta(0));
  }
  if (c.needs_grad(1)) {
    const Tensor other_loses = kMax ? self.gt(other) : self.lt(other);
    out[c.slot(1)] = reduce_to(where(other_loses, 0, shared), c.meta(1));
  }
  return out;
}

// remainder(a, b) = a - floor(a / b) * b.
TensorList remainder_backward(const GradContext& c, const TensorList& grads) {
  const Tensor& g = grads[0];
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(g, c.meta(0));
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(-g * c.saved(0).div(c.saved(1), "floor"), c.meta(1));
  return out;
}

// atan2(a, b) = angle of (b, a): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2).
TensorList atan2_backward(const GradContext& c, const TensorList& grads) {
  const Tensor a = c.saved(0), b = c.saved(1);
  const Tensor scaled = grads[0] / (a * a + b * b);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(scaled * b, c.meta(0));
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(-scaled * a, c.meta(1));
  return out;
}

// d logaddexp(a, b) / da = exp(a) / (exp(a) + exp(b)) = sigmoid(a - b).
TensorList logaddexp_backward(const GradContext& c, const TensorList& grads) {
  const Tensor diff = c.saved(0) - c.saved(1);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(grads[0] * diff.sigmoid(), c.meta(0));
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(grads[0] * (-diff).sigmoid(), c.meta(1));
  return out;
}

// lerp(self, end, w) = self + w (end - self).
TensorList lerp_backward(const GradContext& c, const TensorList& grads) {
  const Tensor& g = grads[0];
  const Tensor self = c.saved(0), end = c.saved(1), w = c.saved(2);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(g * (1 - w), c.meta(0));
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(g * w, c.meta(1));
  if (c.needs_grad(2)) out[c.slot(2)] = reduce_to(g * (end - self), c.meta(2));
  return out;
}

// where(condition, self, other): the condition gets no gradient.
TensorList where_backward(const GradContext& c, const TensorList& grads) {
  const Tensor condition = c.saved(0);
  TensorList out(c.num_slots());
  if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(where(condition, grads[0], 0), c.meta(1));
  if (c.needs_grad(2)) out[c.slot(2)] = reduce_to(where(condition, 0, grads[0]), c.meta(2));
  return out;
}

// ---- unary ops: one tensor argument, so the node exists only when it needs a gradient ----

// d/dx as a function of the gradient and the input x (saved argument 0) or
// the result y; every unary formula is one of these.
using UnaryFn = Tensor (*)(const Tensor& g, const Tensor& x_or_y);

template <UnaryFn F>
TensorList on_input(const GradContext& c, const TensorList& grads) {
  return {reduce_to(F(grads[0], c.saved(0)), c.meta(0))};
}

template <UnaryFn F>
TensorList on_result(const GradContext& c, const TensorList& grads) {
  return {reduce_to(F(grads[0], c.result()), c.meta(0))};
}

// Piecewise constant ops (sign, floor, ceil, round, trunc): zero gradient.
TensorList zero_backward(const GradContext& c, const TensorList&) { return TensorList(c.num_slots()); }

template <UnaryFn F>
void unary_on_input(const OpEntry& op) {
  register_formula(op, Formula{{0}, false, &on_input<F>});
}

template <UnaryFn F>
void unary_on_result(const OpEntry& op) {
  register_formula(op, Formula{{}, true, &on_result<F>});
}

Tensor neg_d(const Tensor& g, const Tensor&) { return -g; }
Tensor abs_d(const Tensor& g, const Tensor& x) { return g * x.sign(); }
Tensor exp_d(const Tensor& g, const Tensor& y) { return g * y; }
Tensor exp2_d(const Tensor& g, const Tensor& y) { return g * y * std::numbers::ln2; }
Tensor log_d(const Tensor& g, const Tensor& x) { return g / x; }
Tensor log2_d(const Tensor& g, const Tensor& x) { return g / (x * std::numbers::ln2); }
Tensor log1p_d(const Tensor& g, const Tensor& x) { return g / (x + 1); }
Tensor expm1_d(const Tensor& g, const Tensor& y) { return g * (y + 1); }
Tensor sqrt_d(const Tensor& g, const Tensor& y) { return g / (y * 2); }
Tensor rsqrt_d(const Tensor& g, const Tensor& y) { return g * y.pow(3) * -0.5; }
Tensor reciprocal_d(const Tensor& g, const Tensor& y) { return -g * (y * y); }
Tensor sin_d(const Tensor& g, const Tensor& x) { return g * x.cos(); }
Tensor cos_d(const Tensor& g, const Tensor& x) { return -g * x.sin(); }
Tensor tan_d(const Tensor& g, const Tensor& y) { return g * (y * y + 1); }
Tensor tanh_d(const Tensor& g, const Tensor& y) { return g * (1 - y * y); }
Tensor asin_d(const Tensor& g, const Tensor& x) { return g * (1 - x * x).rsqrt(); }
Tensor acos_d(const Tensor& g, const Tensor& x) { return -g * (1 - x * x).rsqrt(); }
Tensor atan_d(const Tensor& g, const Tensor& x) { return g / (x * x + 1); }
Tensor sinh_d(const Tensor& g, const Tensor& x) { return g * x.cosh(); }
Tensor cosh_d(const Tensor& g, const Tensor& x) { return g * x.sinh(); }
Tensor asinh_d(const Tensor& g, const Tensor& x) { return g * (x * x + 1).rsqrt(); }
Tensor acosh_d(const Tensor& g, const Tensor& x) { return g * (x * x - 1).rsqrt(); }
Tensor atanh_d(const Tensor& g, const Tensor& x) { return g / (1 - x * x); }
Tensor sigmoid_d(const Tensor& g, const Tensor& y) { return g * (y * (1 - y)); }
Tensor relu_d(const Tensor& g, const Tensor& y) { return op::threshold_backward.call(g, y, 0); }
Tensor erf_d(const Tensor& g, const Tensor& x) { return g * (-x * x).exp() * std::numbers::inv_sqrtpi * 2; }

// silu(x) = x * s(x), s the sigmoid: d/dx = s * (1 + x * (1 - s)).
Tensor silu_d(const Tensor& g, const Tensor& x) {
  const Tensor s = x.sigmoid();
  return g * (s * (x * (1 - s) + 1));
}

// ---- activations and ops with extra arguments ----

TensorList gelu_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(0);
  Tensor d;
  if (c.str(1) == "tanh") {
    // 0.5 x (1 + tanh(u)), u = k (x + 0.044715 x^3), k = sqrt(2 / pi).
    constexpr double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi, a = 0.044715;
    const Tensor t = ((x * x * x * a + x) * k).tanh();
    const Tensor du = (x * x * (3 * a) + 1) * k;
    d = (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * du;
  } else {
    // x * Phi(x): d/dx = Phi(x) + x * phi(x), Phi and phi the normal cdf and pdf.
    constexpr double inv_sqrt2pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;
    const Tensor cdf = ((x / std::numbers::sqrt2).erf() + 1) * 0.5;
    const Tensor pdf = (x * x * -0.5).exp() * inv_sqrt2pi;
    d = cdf + x * pdf;
  }
  return {reduce_to(grads[0] * d, c.meta(0))};
}

// softplus(x) = log(1 + exp(b x)) / b, and x itself where b x > threshold.
TensorList softplus_backward(const GradContext& c, const TensorList& grads) {
  const Tensor bx = c.saved(0) * c.scalar(1);
  const Tensor& g = grads[0];
  return {reduce_to(where(bx.gt(c.scalar(2)), g, g * bx.sigmoid()), c.meta(0))};
}

// The gradient passes where min <= x <= max (NaN x gets none), as PyTorch.
TensorList clamp_backward(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(0);
  const std::optional<Scalar> lo = c.opt_scalar(1), hi = c.opt_scalar(2);
  Tensor inside;
  if (lo) inside = x.ge(*lo);
  if (hi) inside = inside.defined() ? inside.logical_and(x.le(*hi)) : x.le(*hi);
  return {reduce_to(where(inside, grads[0], 0), c.meta(0))};
}

// Filled positions lose their gradient; the mask gets none.
TensorList masked_fill_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(where(c.saved(1), 0, grads[0]), c.meta(0));
  return out;
}

}  // namespace

void register_elementwise_formulas() {
  register_formula(op::add.entry(), Formula{{}, false, &add_backward});
  register_formula(op::sub.entry(), Formula{{}, false, &sub_backward});
  register_formula(op::mul.entry(), Formula{{0, 1}, false, &mul_backward});
  register_formula(op::div.entry(), Formula{{0, 1}, false, &div_backward});
  register_formula(op::div_mode.entry(), Formula{{}, false, &rounded_div_backward});
  register_formula(op::pow.entry(), Formula{{0, 1}, true, &pow_backward});
  register_formula(op::maximum.entry(), Formula{{0, 1}, false, &extremum_backward<true>});
  register_formula(op::minimum.entry(), Formula{{0, 1}, false, &extremum_backward<false>});
  register_formula(op::remainder.entry(), Formula{{0, 1}, false, &remainder_backward});
  register_formula(op::where.entry(), Formula{{0}, false, &where_backward});
  register_formula(op::atan2.entry(), Formula{{0, 1}, false, &atan2_backward});
  register_formula(op::logaddexp.entry(), Formula{{0, 1}, false, &logaddexp_backward});
  register_formula(op::lerp.entry(), Formula{{0, 1, 2}, false, &lerp_backward});

  unary_on_input<&neg_d>(op::neg.entry());
  unary_on_input<&abs_d>(op::abs.entry());
  unary_on_result<&exp_d>(op::exp.entry());
  unary_on_result<&exp2_d>(op::exp2.entry());
  unary_on_input<&log_d>(op::log.entry());
  unary_on_input<&log2_d>(op::log2.entry());
  unary_on_input<&log1p_d>(op::log1p.entry());
  unary_on_result<&expm1_d>(op::expm1.entry());
  unary_on_result<&sqrt_d>(op::sqrt.entry());
  unary_on_result<&rsqrt_d>(op::rsqrt.entry());
  unary_on_result<&reciprocal_d>(op::reciprocal.entry());
  unary_on_input<&sin_d>(op::sin.entry());
  unary_on_input<&cos_d>(op::cos.entry());
  unary_on_result<&tan_d>(op::tan.entry());
  unary_on_result<&tanh_d>(op::tanh.entry());
  unary_on_input<&asin_d>(op::asin.entry());
  unary_on_input<&acos_d>(op::acos.entry());
  unary_on_input<&atan_d>(op::atan.entry());
  unary_on_input<&sinh_d>(op::sinh.entry());
  unary_on_input<&cosh_d>(op::cosh.entry());
  unary_on_input<&asinh_d>(op::asinh.entry());
  unary_on_input<&acosh_d>(op::acosh.entry());
  unary_on_input<&atanh_d>(op::atanh.entry());
  unary_on_result<&sigmoid_d>(op::sigmoid.entry());
  unary_on_result<&relu_d>(op::relu.entry());
  unary_on_input<&silu_d>(op::silu.entry());
  unary_on_input<&erf_d>(op::erf.entry());
  for (const OpEntry* op : {&op::sign.entry(), &op::floor.entry(), &op::ceil.entry(), &op::round.entry(),
                            &op::trunc.entry()}) {
    register_formula(*op, Formula{{}, false, &zero_backward});
  }

  register_formula(op::gelu.entry(), Formula{{0}, false, &gelu_backward});
  register_formula(op::softplus.entry(), Formula{{0}, false, &softplus_backward});
  register_formula(op::clamp.entry(), Formula{{0}, false, &clamp_backward});
  register_formula(op::masked_fill.entry(), Formula{{1}, false, &masked_fill_backward});

  for (const OpEntry* op : {&op::eq.entry(), &op::ne.entry(), &op::lt.entry(), &op::le.entry(), &op::gt.entry(),
                            &op::ge.entry(), &op::logical_and.entry(), &op::logical_or.entry(),
                            &op::logical_xor.entry(), &op::logical_not.entry(), &op::isnan.entry(),
                            &op::isinf.entry()}) {
    register_non_differentiable(*op);
  }
}

}  // namespace ember::autograd
