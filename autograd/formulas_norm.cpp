// Derivative formulas of the norm family (Note [Writing a derivative formula]
// in autograd/formula.h): softmax, log_softmax, layer_norm, rms_norm,
// group_norm, batch_norm, and the softmax backward ops.
//
// Note [Two paths for the norm backward]
// softmax and log_softmax call their backward kernels, which have formulas of
// their own (written with ember ops), so any order of derivative works.
// The normalisations take one of two paths:
//   fast       grad mode off (a plain backward): the fused `*_backward`
//              kernel, which reads the saved mean/rstd results;
//   composite  grad mode on (backward with create_graph): the same
//              gradient written with ember ops, recomputing mean and rstd
//              from x, so the backward records a graph and double backward
//              (gradgradcheck) works.
// The statistics are results of the op too; when a caller used them, their
// gradients add d mean/dx = 1/M and d rstd/dx = -rstd^3 (x - mean)/M.
//
// Every normalisation is written on a "grouped" view of x whose reduced dims
// are `dims`: layer_norm/rms_norm [rows, len] over {1}, group_norm
// [N, G, C/G*HW] over {2}, batch_norm [N, C, HW] over {0, 2}.
#include <vector>

#include "autograd/formula.h"
#include "core/op_decls_norm.h"
#include "ember/autograd.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// ---- softmax, log_softmax and their backward ops ----

TensorList softmax_formula(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::softmax_backward.call(grads[0], c.result(), c.int_arg(1)), c.meta(0))};
}

TensorList log_softmax_formula(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::log_softmax_backward.call(grads[0], c.result(), c.int_arg(1)), c.meta(0))};
}

// r = y * (g - sum(g y)); with u the gradient of r:
//   d/dg = softmax_backward(u, y),  d/dy = u (g - sum(g y)) - g sum(u y).
TensorList softmax_backward_formula(const GradContext& c, const TensorList& grads) {
  const int64_t dim = c.int_arg(2);
  const Tensor& u = grads[0];
  const Tensor g = c.saved(0), y = c.saved(1);
  Tensor dg, dy;
  if (c.needs_grad(0)) dg = op::softmax_backward.call(u, y, dim);
  if (c.needs_grad(1)) dy = u * (g - (g * y).sum({dim}, true)) - g * (u * y).sum({dim}, true);
  return {dg.defined() ? reduce_to(dg, c.meta(0)) : dg, dy.defined() ? reduce_to(dy, c.meta(1)) : dy};
}

// r = g - exp(y) sum(g):  d/dg = u - sum(u exp(y)),  d/dy = -u exp(y) sum(g).
TensorList log_softmax_backward_formula(const GradContext& c, const TensorList& grads) {
  const int64_t dim = c.int_arg(2);
  const Tensor& u = grads[0];
  const Tensor g = c.saved(0), e = c.saved(1).exp();
  Tensor dg, dy;
  if (c.needs_grad(0)) dg = u - (u * e).sum({dim}, true);
  if (c.needs_grad(1)) dy = -u * e * g.sum({dim}, true);
  return {dg.defined() ? reduce_to(dg, c.meta(0)) : dg, dy.defined() ? reduce_to(dy, c.meta(1)) : dy};
}

// ---- normalisations ----

bool used(const Tensor& grad) { return grad.defined() && grad.ne(0).any().item<bool>(); }

Tensor optional_saved(const GradContext& c, size_t arg) { return c.meta(arg).defined ? c.saved(arg) : Tensor(); }

std::optional<Tensor> as_optional(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

int64_t count_over(const Tensor& t, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= t.size(d);
  return n;
}

// The composite input gradient on the grouped view (see the Note): x and
// wg = w * g grouped, gm and gr the gradients of the mean and rstd results
// shaped like the grouped statistics (undefined when unused). Also returns
// xhat, for dw.
struct Composite {
  Tensor dx, xhat;
};

Composite composite_backward(const Tensor& x, const Tensor& wg, const std::vector<int64_t>& dims, double eps,
                             bool centered, const Tensor& gm, const Tensor& gr) {
  const double m = static_cast<double>(count_over(x, dims));
  const Tensor xc = centered ? x - x.mean(dims, true) : x;
  const Tensor rstd = ((xc * xc).mean(dims, true) + eps).rsqrt();
  const Tensor xhat = xc * rstd;
  const Tensor projection = xhat * (wg * xhat).mean(dims, true);
  Tensor dx = rstd * (centered ? wg - wg.mean(dims, true) - projection : wg - projection);
  if (gm.defined()) dx = dx + gm / m;
  if (gr.defined()) dx = dx - gr * rstd.pow(3) * xc / m;
  return {dx, xhat};
}

// The gradients of the statistics results, added to the fast path's dx (on the grouped view).
Tensor add_stat_terms(Tensor dx, const Tensor& x, const Tensor& mean, const Tensor& rstd, int64_t m, const Tensor& gm,
                      const Tensor& gr) {
  if (gm.defined()) dx = dx + gm / static_cast<double>(m);
  if (gr.defined()) {
    const Tensor xc = mean.defined() ? x - mean : x;
    dx = dx - gr * rstd.pow(3) * xc / static_cast<double>(m);
  }
  return dx;
}

// Grouped statistics: `t` (a result or its gradient) reshaped to `shape`, in x's dtype; undefined when unused.
Tensor stat(const Tensor& t, IntArrayRef shape, DType dtype) { return t.defined() ? t.to(dtype).reshape(shape) : t; }

// [1, C, 1, ...]: a per-channel tensor broadcast against an [N, C, *] input.
DimVector channel_shape(const TensorMeta& input) {
  DimVector s(input.sizes.size(), 1);
  s[1] = input.sizes[1];
  return s;
}

// Every dim of an [N, C, *] input but the channel dim.
std::vector<int64_t> non_channel_dims(int64_t ndim) {
  std::vector<int64_t> d = {0};
  for (int64_t i = 2; i < ndim; ++i) d.push_back(i);
  return d;
}

TensorList grads_or_none(const GradContext& c, std::initializer_list<std::pair<size_t, Tensor>> grads) {
  TensorList out(c.num_slots());
  for (const auto& [arg, g] : grads) {
    if (g.defined() && c.meta(arg).defined && c.needs_grad(arg)) out[c.slot(arg)] = reduce_to(g, c.meta(arg));
  }
  return out;
}

// layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd); rms_norm without mean and bias.
TensorList row_norm_formula(const GradContext& c, const TensorList& grads, bool centered) {
  const Tensor x = c.saved(0), w = optional_saved(c, 2);
  const std::vector<int64_t> ns = c.ints(1);
  int64_t len = 1;
  for (int64_t s : ns) len *= s;
  const int64_t rows = len == 0 ? 0 : x.numel() / len;
  const Tensor& g = grads[0];
  const Tensor gm = centered && used(grads[1]) ? grads[1] : Tensor();
  const Tensor gr = used(grads[centered ? 2 : 1]) ? grads[centered ? 2 : 1] : Tensor();
  const DimVector grouped = {rows, len}, stat_shape = {rows, 1};
  Tensor dx, dw, db;
  if (is_grad_enabled()) {
    const double eps = centered ? c.real(4) : rms_norm_eps(c.opt_scalar(3), x.dtype());
    const Composite k = composite_backward(x.reshape(grouped), (w.defined() ? g * w : g).reshape(grouped), {1}, eps,
                                           centered, stat(gm, stat_shape, x.dtype()), stat(gr, stat_shape, x.dtype()));
    dx = k.dx.reshape(x.sizes());
    dw = (g.reshape(grouped) * k.xhat).sum({0}).reshape(ns);
    db = g.reshape(grouped).sum({0}).reshape(ns);
  } else {
    const Tensor mean = centered ? c.result(1) : Tensor(), rstd = c.result(centered ? 2 : 1);
    if (centered) {
      std::tie(dx, dw, db) = op::layer_norm_backward.call(g, x, ns, mean, rstd, as_optional(w));
    } else {
      std::tie(dx, dw) = op::rms_norm_backward.call(g, x, ns, rstd, as_optional(w));
    }
    if (gm.defined() || gr.defined()) {
      dx = add_stat_terms(dx.reshape(grouped), x.reshape(grouped), stat(mean, stat_shape, x.dtype()),
                          stat(rstd, stat_shape, x.dtype()), len, stat(gm, stat_shape, x.dtype()),
                          stat(gr, stat_shape, x.dtype()))
               .reshape(x.sizes());
    }
  }
  if (centered) return grads_or_none(c, {{0, dx}, {2, dw}, {3, db}});
  return grads_or_none(c, {{0, dx}, {2, dw}});
}

TensorList layer_norm_formula(const GradContext& c, const TensorList& grads) { return row_norm_formula(c, grads, true); }
TensorList rms_norm_formula(const GradContext& c, const TensorList& grads) { return row_norm_formula(c, grads, false); }

// group_norm(input, num_groups, weight, bias, eps) -> (out, mean [N, G], rstd [N, G])
TensorList group_norm_formula(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(0), w = optional_saved(c, 2);
  const int64_t groups = c.int_arg(1), n = x.size(0);
  const DimVector grouped = {n, groups, n * groups == 0 ? 0 : x.numel() / (n * groups)}, stat_shape = {n, groups, 1};
  const std::vector<int64_t> param_dims = non_channel_dims(x.dim());
  const Tensor& g = grads[0];
  const Tensor gm = used(grads[1]) ? stat(grads[1], stat_shape, x.dtype()) : Tensor();
  const Tensor gr = used(grads[2]) ? stat(grads[2], stat_shape, x.dtype()) : Tensor();
  Tensor dx, dw, db;
  if (is_grad_enabled()) {
    const Tensor wg = w.defined() ? g * w.reshape(channel_shape(c.meta(0))) : g;
    const Composite k = composite_backward(x.reshape(grouped), wg.reshape(grouped), {2}, c.real(4), true, gm, gr);
    dx = k.dx.reshape(x.sizes());
    dw = (g * k.xhat.reshape(x.sizes())).sum(param_dims);
    db = g.sum(param_dims);
  } else {
    std::tie(dx, dw, db) = op::group_norm_backward.call(g, x, groups, c.result(1), c.result(2), as_optional(w));
    if (gm.defined() || gr.defined()) {
      dx = add_stat_terms(dx.reshape(grouped), x.reshape(grouped), stat(c.result(1), stat_shape, x.dtype()),
                          stat(c.result(2), stat_shape, x.dtype()), grouped[2], gm, gr)
               .reshape(x.sizes());
    }
  }
  return grads_or_none(c, {{0, dx}, {2, dw}, {3, db}});
}

// batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps) -> (out, mean [C], rstd [C])
TensorList batch_norm_formula(const GradContext& c, const TensorList& grads) {
  const Tensor x = c.saved(0), w = optional_saved(c, 1);
  const bool training = c.flag(5);
  const int64_t n = x.size(0), ch = x.size(1);
  const int64_t hw = n * ch == 0 ? 0 : x.numel() / (n * ch);
  const DimVector grouped = {n, ch, hw}, stat_shape = {1, ch, 1};
  const std::vector<int64_t> param_dims = non_channel_dims(x.dim());
  const DimVector per_channel = channel_shape(c.meta(0));
  const Tensor& g = grads[0];
  const Tensor gm = used(grads[1]) ? grads[1] : Tensor();
  const Tensor gr = used(grads[2]) ? grads[2] : Tensor();
  const Tensor mean = c.result(1).to(x.dtype()), rstd = c.result(2).to(x.dtype());
  Tensor dx, dw, db;
  if (is_grad_enabled()) {
    const Tensor wb = w.defined() ? w.reshape(per_channel) : Tensor();
    if (training) {
      const Composite k = composite_backward(x.reshape(grouped), (wb.defined() ? g * wb : g).reshape(grouped), {0, 2},
                                             c.real(7), true, stat(gm, stat_shape, x.dtype()),
                                             stat(gr, stat_shape, x.dtype()));
      dx = k.dx.reshape(x.sizes());
      dw = (g * k.xhat.reshape(x.sizes())).sum(param_dims);
    } else {
      const Tensor r = rstd.reshape(per_channel);
      dx = g * (wb.defined() ? wb * r : r);
      dw = (g * (x - mean.reshape(per_channel)) * r).sum(param_dims);
    }
    db = g.sum(param_dims);
  } else {
    std::tie(dx, dw, db) = op::batch_norm_backward.call(g, x, as_optional(w), mean, rstd, training);
    if (training && (gm.defined() || gr.defined())) {
      dx = add_stat_terms(dx.reshape(grouped), x.reshape(grouped), stat(mean, stat_shape, x.dtype()),
                          stat(rstd, stat_shape, x.dtype()), n * hw, stat(gm, stat_shape, x.dtype()),
                          stat(gr, stat_shape, x.dtype()))
               .reshape(x.sizes());
    }
  }
  // Eval mode: out = (x - running_mean) * rstd * w + b with rstd = (running_var + eps)^-1/2,
  // and the statistics results are running_mean and that rstd.
  Tensor d_mean, d_var;
  if (!training) {
    const Tensor scale = w.defined() ? w * rstd : rstd;
    d_mean = -scale * db;
    if (gm.defined()) d_mean = d_mean + gm;
    d_var = (w.defined() ? w * dw : dw) * rstd * rstd * -0.5;
    if (gr.defined()) d_var = d_var - gr * rstd.pow(3) * 0.5;
  }
  return grads_or_none(c, {{0, dx}, {1, dw}, {2, db}, {3, d_mean}, {4, d_var}});
}

}  // namespace

void register_norm_formulas() {
  register_formula(op::softmax.entry(), Formula{{}, true, &softmax_formula});
  register_formula(op::log_softmax.entry(), Formula{{}, true, &log_softmax_formula});
  register_formula(op::softmax_backward.entry(), Formula{{0, 1}, false, &softmax_backward_formula});
  register_formula(op::log_softmax_backward.entry(), Formula{{0, 1}, false, &log_softmax_backward_formula});
  register_formula(op::layer_norm.entry(), Formula{{0, 2}, true, &layer_norm_formula});
  register_formula(op::rms_norm.entry(), Formula{{0, 2}, true, &rms_norm_formula});
  register_formula(op::group_norm.entry(), Formula{{0, 2}, true, &group_norm_formula});
  register_formula(op::batch_norm.entry(), Formula{{0, 1}, true, &batch_norm_formula});
  // The fused normalisation backward kernels: the formulas above switch to
  // ember ops when a graph of the backward is wanted (Note [Two paths ...]).
  for (const OpEntry* op : {&op::layer_norm_backward.entry(), &op::rms_norm_backward.entry(),
                            &op::group_norm_backward.entry(), &op::batch_norm_backward.entry()}) {
    register_non_differentiable(*op);
  }
}

}  // namespace ember::autograd
