// ember::nn::functional::scaled_dot_product_attention, as torch 2.x's
// torch.nn.functional.scaled_dot_product_attention:
//
//   softmax(query @ key^T * scale + mask) @ value
//
// computed by a fused, memory-efficient kernel that never holds the L x S
// attention matrix (flash attention; docs/nn.md), with its backward.
#pragma once

#include <optional>

#include "ember/tensor.h"

namespace ember::nn::functional {

// query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev].
// - The three have the same number of dims (>= 2); batch dims broadcast (size 1 against n).
// - attn_mask, broadcastable to [..., L, S]: bool (true = take part in attention)
//   or of query's dtype (added to the scores, e.g. -inf to mask out).
// - is_causal: query i attends keys j <= i (the lower triangle, aligned top-left
//   as torch's ones(L, S).tril()); not together with attn_mask.
// - scale: defaults to 1 / sqrt(E).
// A query whose keys are all masked out gives NaN (as torch 2.x with -inf masks).
// float32, float64, and float16/bfloat16 (computed in float32).
// Dropout is not offered (torch's dropout_p argument is absent, so the argument
// after attn_mask is is_causal); apply dropout to the result instead.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

}  // namespace ember::nn::functional
