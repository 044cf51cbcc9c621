// Derivative formulas of the loss family (Note [Writing a derivative formula]
// in autograd/formula.h): cross_entropy_loss, nll_loss, mse_loss, embedding
// (each with its backward op) and dropout. The elementwise losses are
// composites and need none.
//
// cross_entropy_loss has two ways to its gradient: the fused backward kernel
// (cross_entropy_loss_backward, one pass per row) for a plain backward, and,
// when the backward itself is recorded (create_graph, double backward), the
// same expression written with differentiable ops:
//   dx = p (a + b W) - a onehot(t) - b w,   p = exp(x - logsumexp(x))
// (Note [Fused cross entropy] in kernels/cpu/loss/loss.cpp). The backward op has
// a formula of its own too, for callers that differentiate it directly.
// Class weights get no gradient, as in PyTorch.
#include <vector>

#include "autograd/formula.h"
#include "core/op_decls_loss.h"
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

std::optional<Tensor> saved_optional(const GradContext& c, size_t arg) {
  if (!c.meta(arg).defined) return std::nullopt;
  return c.saved(arg);
}

void refuse_weight_grad(const GradContext& c, size_t arg, const char* op) {
  EMBER_CHECK(!c.needs_grad(arg), op, ": the derivative for 'weight' is not implemented (as in PyTorch); "
              "detach() the class weights");
}

// x (N, C, d...) or (C) as (M, C) with the class dim last, and back.
Tensor to_rows(const Tensor& x) {
  if (x.dim() == 1) return x.unsqueeze(0);
  if (x.dim() == 2) return x;
  std::vector<int64_t> perm = {0};
  for (int64_t d = 2; d < x.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return x.permute(perm).reshape({-1, x.size(1)});
}
Tensor from_rows(const Tensor& rows, IntArrayRef sizes) {
  if (sizes.size() <= 2) return rows.reshape(sizes);
  std::vector<int64_t> moved = {sizes[0]};
  for (size_t d = 2; d < sizes.size(); ++d) moved.push_back(sizes[d]);
  moved.push_back(sizes[1]);
  const int64_t n = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> perm = {0, n - 1};
  for (int64_t d = 1; d < n - 1; ++d) perm.push_back(d);
  return rows.reshape(moved).permute(perm);
}

// The pieces of the cross-entropy input gradient, with differentiable ops
// (see the top), in rows form (M, C): dx = p s - a onehot - b w.
struct CrossEntropyParts {
  Tensor p;       // softmax of the rows
  Tensor s;       // (M, 1): a + b W
  Tensor a, b;    // (M, 1)
  Tensor onehot;  // (M, C)
  Tensor w;       // (1, C), or undefined without class weights
  bool smoothing = false;

  Tensor dx() const {
    Tensor d = p * s - a * onehot;
    if (smoothing) d = d - (w.defined() ? b * w : b);
    return d;
  }
};

CrossEntropyParts cross_entropy_parts(const Tensor& grad, const Tensor& self, const Tensor& target,
                                      const std::optional<Tensor>& weight, std::string_view reduction,
                                      int64_t ignore_index, double ls) {
  const Tensor x = to_rows(self);  // (M, C)
  const int64_t M = x.size(0), C = x.size(1);
  const Tensor t = target.reshape({M});
  const Tensor kept = t.ne(ignore_index);
  const Tensor safe_t = where(kept, t, 0);
  const Tensor v = kept.to(x.dtype());
  const bool has_weight = weight && weight->defined();
  CrossEntropyParts q;
  q.smoothing = ls > 0;
  if (has_weight) q.w = weight->to(x.dtype()).unsqueeze(0);
  const Tensor wt = has_weight ? weight->to(x.dtype()).index({safe_t}) * v : v;
  const double wsum = has_weight ? weight->to(DType::Float64).sum().item<double>() : static_cast<double>(C);
  const Tensor g = reduction == "none" ? grad.reshape({M}) : grad.reshape({1});
  Tensor a = g * wt * (1.0 - ls), b = g * v * (ls / static_cast<double>(C));
  if (reduction == "mean") {
    const Tensor kept_weight = wt.sum();
    a = a / kept_weight;
    b = b / kept_weight;
  }
  q.a = a.unsqueeze(1);
  q.b = b.unsqueeze(1);
  q.s = q.a + q.b * wsum;
  q.p = (x - x.logsumexp({1}, true)).exp();
  q.onehot = one_hot(safe_t, C).to(x.dtype());
  return q;
}

TensorList cross_entropy_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  refuse_weight_grad(c, 2, "cross_entropy_loss");
  if (!c.needs_grad(0)) return out;
  const std::optional<Tensor> weight = saved_optional(c, 2);
  const std::string_view reduction = c.str(3);
  if (is_grad_enabled()) {
    const CrossEntropyParts q =
        cross_entropy_parts(grads[0], c.saved(0), c.saved(1), weight, reduction, c.int_arg(4), c.real(5));
    out[c.slot(0)] = from_rows(q.dx(), c.meta(0).sizes);
  } else {
    out[c.slot(0)] = op::cross_entropy_loss_backward.call(grads[0], c.saved(0), c.saved(1), weight, reduction,
                                                          c.int_arg(4), c.real(5));
  }
  return out;
}

// cross_entropy_loss_backward(grad_output, self, ...) = dx: linear in
// grad_output, whose adjoint contracts gg with dx at grad_output = 1; in self,
// row by row dx = s softmax(x) + const, whose adjoint is s p (gg - <gg, p>).
TensorList cross_entropy_backward_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  refuse_weight_grad(c, 3, "cross_entropy_loss_backward");
  const Tensor grad = c.saved(0), self = c.saved(1), target = c.saved(2);
  const std::optional<Tensor> weight = saved_optional(c, 3);
  const std::string_view reduction = c.str(4);
  const Tensor gg = to_rows(grads[0]);
  if (c.needs_grad(0)) {
    const CrossEntropyParts unit = cross_entropy_parts(ones_like(grad), self, target, weight, reduction,
                                                       c.int_arg(5), c.real(6));
    Tensor dg = (gg * unit.dx()).sum({1});
    if (reduction != "none") dg = dg.sum();
    out[c.slot(0)] = reduce_to(dg.reshape(c.meta(0).sizes), c.meta(0));
  }
  if (c.needs_grad(1)) {
    const CrossEntropyParts q = cross_entropy_parts(grad, self, target, weight, reduction, c.int_arg(5), c.real(6));
    const Tensor dx = q.s * q.p * (gg - (gg * q.p).sum({1}, true));
    out[c.slot(1)] = reduce_to(from_rows(dx, c.meta(1).sizes), c.meta(1));
  }
  return out;
}

TensorList nll_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  refuse_weight_grad(c, 2, "nll_loss");
  if (!c.needs_grad(0)) return out;
  out[c.slot(0)] = op::nll_loss_backward.call(grads[0], c.saved(0), c.saved(1), saved_optional(c, 2), c.str(3),
                                              c.int_arg(4));
  return out;
}

// nll_loss_backward is linear in grad_output: its adjoint is nll_loss itself.
// It does not depend on the values of self.
TensorList nll_backward_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  refuse_weight_grad(c, 3, "nll_loss_backward");
  if (c.needs_grad(0)) {
    out[c.slot(0)] = reduce_to(op::nll_loss.call(grads[0], c.saved(2), saved_optional(c, 3), c.str(4), c.int_arg(5))
                                   .reshape(c.meta(0).sizes),
                               c.meta(0));
  }
  return out;
}

TensorList embedding_grad(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) {
    out[c.slot(0)] = op::embedding_backward.call(grads[0], c.saved(1), c.meta(0).sizes[0], c.opt_int(2));
  }
  return out;
}

// embedding_backward sums rows of grad_output into rows of the result: its
// adjoint gathers them back, with the padding row's positions getting 0.
TensorList embedding_backward_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  if (!c.needs_grad(0)) return out;
  const Tensor ids = c.saved(1);
  Tensor g = op::embedding.call(grads[0], ids, c.opt_int(3));
  if (const std::optional<int64_t> pad = c.opt_int(3)) {
    g = where(ids.eq(*pad).unsqueeze(-1), 0, g);
  }
  out[c.slot(0)] = reduce_to(g, c.meta(0));
  return out;
}

// d/dself = mse_loss_backward(grad), d/dtarget its negative.
TensorList mse_grad(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  if (!c.needs_grad(0) && !c.needs_grad(1)) return out;
  const Tensor d = op::mse_loss_backward.call(grads[0], c.saved(0), c.saved(1), c.str(2));
  if (c.needs_grad(0)) out[c.slot(0)] = d;
  if (c.needs_grad(1)) out[c.slot(1)] = -d;
  return out;
}

// mse_loss_backward = k g (x - y), k = 2 (or 2 / n for "mean"): linear in g, x and y.
TensorList mse_backward_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  const double n = static_cast<double>(c.saved(1).numel());
  const double k = c.str(3) == "mean" ? 2.0 / n : 2.0;
  const Tensor gg = grads[0] * k;
  if (c.needs_grad(0)) out[c.slot(0)] = reduce_to(gg * (c.saved(1) - c.saved(2)), c.meta(0));
  if (c.needs_grad(1) || c.needs_grad(2)) {
    const Tensor dx = gg * c.saved(0);
    if (c.needs_grad(1)) out[c.slot(1)] = reduce_to(dx, c.meta(1));
    if (c.needs_grad(2)) out[c.slot(2)] = reduce_to(-dx, c.meta(2));
  }
  return out;
}

// d dropout(x) = dropout(grad) with the same stream: the same mask and scale.
TensorList dropout_grad(const GradContext& c, const TensorList& grads) {
  return {op::dropout.call(grads[0], c.real(1), c.int_arg(2), c.int_arg(3))};
}

}  // namespace

void register_loss_formulas() {
  register_formula(op::cross_entropy_loss.entry(), Formula{{0, 1, 2}, false, &cross_entropy_backward});
  register_formula(op::cross_entropy_loss_backward.entry(),
                   Formula{{0, 1, 2, 3}, false, &cross_entropy_backward_backward});
  register_formula(op::nll_loss.entry(), Formula{{0, 1, 2}, false, &nll_backward});
  register_formula(op::nll_loss_backward.entry(), Formula{{2, 3}, false, &nll_backward_backward});
  register_formula(op::mse_loss.entry(), Formula{{0, 1}, false, &mse_grad});
  register_formula(op::mse_loss_backward.entry(), Formula{{0, 1, 2}, false, &mse_backward_backward});
  register_formula(op::embedding.entry(), Formula{{1}, false, &embedding_grad});
  register_formula(op::embedding_backward.entry(), Formula{{1}, false, &embedding_backward_backward});
  register_formula(op::dropout.entry(), Formula{{}, false, &dropout_grad});
}

}  // namespace ember::autograd
