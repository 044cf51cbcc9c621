// Derivative of flash_attention (Note [Writing a derivative formula]).
//
// An ordinary backward calls the fused kernel flash_attention_backward, which
// recomputes the probabilities tile by tile from the saved logsumexp (Note
// [Flash attention backward] in kernels/cpu/attention/attention_backward.cpp). Two
// cases take the composite route instead, written with differentiable ember
// ops on the full L x S matrix:
//   - create_graph (grad mode on during backward): the result must itself be
//     differentiable, for second derivatives;
//   - a float attn_mask that requires grad: its gradient is the L x S matrix
//     dS (summed over broadcast dims), so it is materialised anyway.
// Both routes give the gradient of logsumexp too (dS += dlse * P).
// flash_attention_backward itself is registered as non-differentiable: only
// the first-order route calls it.
#include <cmath>

#include "autograd/formula.h"
#include "core/attention_composite.h"
#include "core/op_decls_attention.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// Argument positions of flash_attention.
constexpr size_t kQuery = 0, kKey = 1, kValue = 2, kMask = 3, kCausal = 4, kScale = 5;

double scale_of(const GradContext& ctx) {
  const std::optional<Scalar> s = ctx.opt_scalar(kScale);
  const DimVector& q_sizes = ctx.meta(kQuery).sizes;
  return s ? s->to_double() : 1.0 / std::sqrt(static_cast<double>(q_sizes[q_sizes.size() - 1]));
}

TensorList composite_backward(const GradContext& ctx, const Tensor& grad_out, const Tensor& grad_lse) {
  const Tensor q = ctx.saved(kQuery), k = ctx.saved(kKey), v = ctx.saved(kValue);
  const Tensor mask = ctx.meta(kMask).defined ? ctx.saved(kMask) : Tensor();
  const double scale = scale_of(ctx);
  const Tensor p = attention::attention_probabilities(q, k, mask, ctx.flag(kCausal), scale);
  const Tensor go = grad_out.to(p.dtype());
  const Tensor dp = go.matmul(v.transpose(-2, -1));
  // dS = P * (dP - rowsum(P * dP) + dlse)
  const Tensor centred = dp - (p * dp).sum({-1}, true) + grad_lse.to(p.dtype()).unsqueeze(-1);
  const Tensor ds = p * centred;
  TensorList out(ctx.num_slots());
  if (ctx.needs_grad(kQuery)) out[ctx.slot(kQuery)] = reduce_to(ds.matmul(k).mul(Scalar(scale)), ctx.meta(kQuery));
  if (ctx.needs_grad(kKey))
    out[ctx.slot(kKey)] = reduce_to(ds.transpose(-2, -1).matmul(q).mul(Scalar(scale)), ctx.meta(kKey));
  if (ctx.needs_grad(kValue)) out[ctx.slot(kValue)] = reduce_to(p.transpose(-2, -1).matmul(go), ctx.meta(kValue));
  if (mask.defined() && ctx.needs_grad(kMask)) out[ctx.slot(kMask)] = reduce_to(ds, ctx.meta(kMask));
  return out;
}

// flash_attention(query, key, value, attn_mask, is_causal, scale) -> (output, logsumexp)
TensorList flash_attention_backward(const GradContext& ctx, const TensorList& grads) {
  const Tensor out = ctx.result(0), lse = ctx.result(1);
  const Tensor grad_out = grads[0].defined() ? grads[0] : zeros_like(out);
  const Tensor grad_lse = grads[1].defined() ? grads[1] : zeros_like(lse);
  const bool mask_needs_grad = ctx.meta(kMask).defined && ctx.needs_grad(kMask);
  if (is_grad_enabled() || mask_needs_grad) return composite_backward(ctx, grad_out, grad_lse);
  const Tensor mask = ctx.meta(kMask).defined ? ctx.saved(kMask) : Tensor();
  auto [dq, dk, dv] = op::flash_attention_backward.call(
      grad_out, grad_lse, ctx.saved(kQuery), ctx.saved(kKey), ctx.saved(kValue), out, lse,
      mask.defined() ? std::optional<Tensor>(mask) : std::nullopt, ctx.flag(kCausal), ctx.opt_scalar(kScale));
  TensorList result(ctx.num_slots());
  if (ctx.needs_grad(kQuery)) result[ctx.slot(kQuery)] = reduce_to(dq, ctx.meta(kQuery));
  if (ctx.needs_grad(kKey)) result[ctx.slot(kKey)] = reduce_to(dk, ctx.meta(kKey));
  if (ctx.needs_grad(kValue)) result[ctx.slot(kValue)] = reduce_to(dv, ctx.meta(kValue));
  return result;
}

}  // namespace

void register_attention_formulas() {
  register_formula(op::flash_attention.entry(),
                   Formula{{static_cast<int>(kQuery), static_cast<int>(kKey), static_cast<int>(kValue),
                            static_cast<int>(kMask)},
                           true, &flash_attention_backward});
  // Second derivatives never go through the fused backward: with create_graph the
  // formula above takes the composite route, whose ops record their own graph.
  register_non_differentiable(op::flash_attention_backward.entry());
}

}  // namespace ember::autograd
