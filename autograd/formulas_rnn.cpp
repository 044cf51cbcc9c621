// Derivative of lstm_layer (Note [Writing a derivative formula]).
//
// An ordinary backward calls the fused kernel lstm_layer_backward (Note [Fused
// LSTM layer] in kernels/cpu/rnn/lstm.cpp). With create_graph (grad mode on
// during backward) the same backpropagation through time is written with
// differentiable ember ops on the saved inputs and results, so second
// derivatives work: the saved results (gates, cells, output) lead back into
// lstm_layer itself. lstm_layer_backward is registered as non-differentiable:
// only the first-order route calls it.
#include "autograd/formula.h"
#include "core/op_decls_rnn.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// Argument positions of lstm_layer.
constexpr size_t kInput = 0, kHx = 1, kCx = 2, kWih = 3, kWhh = 4, kBih = 5, kBhh = 6, kReverse = 7;

// [grad_input, grad_hx, grad_cx, grad_w_ih, grad_w_hh, grad_bias] with ember ops.
TensorList composite_backward(const GradContext& ctx, const Tensor& grad_out, const Tensor& grad_cells,
                              const Tensor& grad_gates) {
  const Tensor x = ctx.saved(kInput), hx = ctx.saved(kHx), cx = ctx.saved(kCx), w_ih = ctx.saved(kWih),
               w_hh = ctx.saved(kWhh);
  const Tensor out = ctx.result(0), cells = ctx.result(1), gates = ctx.result(2);
  const bool reverse = ctx.flag(kReverse);
  const int64_t T = x.size(0), N = x.size(1), I = x.size(2), H = hx.size(1);
  Tensor dh = zeros_like(hx), dc = zeros_like(cx);
  TensorList dgates(static_cast<size_t>(T));
  for (int64_t s = T - 1; s >= 0; --s) {
    const int64_t t = reverse ? T - 1 - s : s, tp = reverse ? t + 1 : t - 1;
    const Tensor cp = s == 0 ? cx : cells.select(0, tp);
    const TensorList g = gates.select(0, t).chunk(4, 1), gg = grad_gates.select(0, t).chunk(4, 1);
    const Tensor &i = g[0], &f = g[1], &cand = g[2], &o = g[3];
    const Tensor tc = cells.select(0, t).tanh();
    const Tensor h_grad = dh + grad_out.select(0, t);
    const Tensor c_grad = dc + grad_cells.select(0, t) + h_grad * o * (1 - tc * tc);
    const Tensor dg = cat({(c_grad * cand + gg[0]) * i * (1 - i), (c_grad * cp + gg[1]) * f * (1 - f),
                           (c_grad * i + gg[2]) * (1 - cand * cand), (h_grad * tc + gg[3]) * o * (1 - o)},
                          1);
    dgates[static_cast<size_t>(t)] = dg;
    dc = c_grad * f;
    dh = dg.matmul(w_hh);
  }
  const Tensor dG = stack(dgates, 0).reshape({T * N, 4 * H});
  const Tensor h_prev = reverse ? cat({out.narrow(0, 1, T - 1), hx.unsqueeze(0)}, 0)
                                : cat({hx.unsqueeze(0), out.narrow(0, 0, T - 1)}, 0);
  return {dG.matmul(w_ih).reshape({T, N, I}),
          dh,
          dc,
          dG.t().matmul(x.reshape({T * N, I})),
          dG.t().matmul(h_prev.reshape({T * N, H})),
          dG.sum({0})};
}

// lstm_layer(input, hx, cx, w_ih, w_hh, b_ih, b_hh, reverse) -> (output, cells, gates)
TensorList lstm_layer_backward(const GradContext& ctx, const TensorList& grads) {
  const TensorList g =
      is_grad_enabled()
          ? composite_backward(ctx, grads[0], grads[1], grads[2])
          : op::lstm_layer_backward.call(grads[0], grads[1], grads[2], ctx.saved(kInput), ctx.saved(kHx),
                                         ctx.saved(kCx), ctx.saved(kWih), ctx.saved(kWhh), ctx.result(0),
                                         ctx.result(1), ctx.result(2), ctx.flag(kReverse));
  TensorList out(ctx.num_slots());
  for (const size_t arg : {kInput, kHx, kCx, kWih, kWhh})
    if (ctx.needs_grad(arg)) out[ctx.slot(arg)] = g[arg];
  for (const size_t arg : {kBih, kBhh})
    if (ctx.meta(arg).defined && ctx.needs_grad(arg)) out[ctx.slot(arg)] = g[5];
  return out;
}

}  // namespace

void register_rnn_formulas() {
  register_formula(op::lstm_layer.entry(),
                   Formula{{static_cast<int>(kInput), static_cast<int>(kHx), static_cast<int>(kCx),
                            static_cast<int>(kWih), static_cast<int>(kWhh)},
                           true, &lstm_layer_backward});
  register_non_differentiable(op::lstm_layer_backward.entry());
}

}  // namespace ember::autograd
