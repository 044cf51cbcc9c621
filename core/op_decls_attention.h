// Dispatched ops of one neural-network family: scaled_dot_product_attention and its backward.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// flash_attention is the fused kernel behind nn::functional::scaled_dot_product_attention:
//   query [..., L, E], key [..., S, E], value [..., S, Ev] (batch dims broadcast)
//   -> output [..., L, Ev], logsumexp [..., L] (float32 for float16/bfloat16 inputs)
// logsumexp is what the backward needs to recompute the softmax tile by tile.
// flash_attention_backward returns the gradients of query, key and value in
// the broadcast batch shape (the derivative formula sums them back).
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_ATTENTION_OPS(X) \
  X(flash_attention, "flash_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, bool is_causal=False, Scalar? scale=None) -> (Tensor output, Tensor logsumexp)", \
    TensorPair(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, bool, const std::optional<Scalar>&)) \
  X(flash_attention_backward, "flash_attention_backward(Tensor grad_output, Tensor? grad_logsumexp, Tensor query, Tensor key, Tensor value, Tensor output, Tensor logsumexp, Tensor? attn_mask, bool is_causal, Scalar? scale) -> (Tensor grad_query, Tensor grad_key, Tensor grad_value)", \
    TensorTriple(const Tensor&, const std::optional<Tensor>&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, bool, const std::optional<Scalar>&))
// clang-format on

namespace ember::op {
EMBER_ATTENTION_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
