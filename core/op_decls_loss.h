// Dispatched ops of one neural-network family: losses, embedding, dropout.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// `reduction` is "none", "mean" or "sum" (as torch.nn.functional). The
// other elementwise losses (l1, smooth_l1, bce_with_logits, kl_div) and
// cross_entropy with class-probability targets are composites of
// differentiable ops (nn/functional_loss.cpp) and need no entry here.
// Backward kernels are ops too, so another backend can implement them.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_LOSS_OPS(X) \
  /* log_softmax + nll in one pass per row; self (N, C, d...) or (C), target int64 (N, d...) or () */ \
  X(cross_entropy_loss, "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', int ignore_index=-100, float label_smoothing=0.0) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, std::string_view, int64_t, double)) \
  X(cross_entropy_loss_backward, "cross_entropy_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, str reduction, int ignore_index, float label_smoothing) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, std::string_view, int64_t, double)) \
  /* self: log-probabilities (N, C, d...) or (C) */ \
  X(nll_loss, "nll_loss(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', int ignore_index=-100) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, std::string_view, int64_t)) \
  X(nll_loss_backward, "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, str reduction, int ignore_index) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, std::string_view, int64_t)) \
  /* weight (V, D), indices int64/int32 (any shape) -> (indices..., D); padding_idx only shapes the gradient */ \
  X(embedding, "embedding(Tensor weight, Tensor indices, int? padding_idx=None) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, std::optional<int64_t>)) \
  X(embedding_backward, "embedding_backward(Tensor grad_output, Tensor indices, int num_weights, int? padding_idx=None) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, int64_t, std::optional<int64_t>)) \
  /* (self - target)^2, one pass; self and target of one shape and dtype */ \
  X(mse_loss, "mse_loss(Tensor self, Tensor target, str reduction='mean') -> Tensor", \
    Tensor(const Tensor&, const Tensor&, std::string_view)) \
  X(mse_loss_backward, "mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, str reduction) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, const Tensor&, std::string_view)) \
  /* x * mask / (1 - p), the mask drawn from Philox blocks (seed, offset + i / 4); its own derivative */ \
  X(dropout, "dropout(Tensor self, float p, int seed, int offset) -> Tensor", \
    Tensor(const Tensor&, double, int64_t, int64_t))
// clang-format on

namespace ember::op {
EMBER_LOSS_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
