// ember::nn::functional::scaled_dot_product_attention, as torch 2.x's
// torch.nn.functional.scaled_dot_product_attention, in its argument order:
//
//   dropout(softmax(query @ key^T * scale + mask), dropout_p) @ value
//
//   namespace F = ember::nn::functional;
//   Tensor y = F::scaled_dot_product_attention(q, k, v);                          // no mask
//   Tensor c = F::scaled_dot_product_attention(q, k, v, {}, 0.0, true);           // causal
//   Tensor d = F::scaled_dot_product_attention(q, k, v, mask, training ? 0.1 : 0.0);
//
// Without dropout a fused, memory-efficient kernel computes it, never holding
// the L x S attention matrix (flash attention; docs/nn.md), with its backward.
#pragma once

#include <optional>

#include "ember/nn/functional/strict_args.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// query [..., L, E], key [..., S, E], value [..., S, Ev] -> [..., L, Ev].
// - The three have the same number of dims (>= 2); batch dims broadcast (size 1 against n).
// - attn_mask, broadcastable to [..., L, S]: bool (true = take part in attention)
//   or of query's dtype (added to the scores, e.g. -inf to mask out).
// - dropout_p in [0, 1]: the probability of zeroing each attention probability
//   (the rest scaled by 1 / (1 - dropout_p)), with masks from the default
//   generator. Applied whenever it is > 0, as in PyTorch: pass 0.0 outside
//   training. Dropout computes the L x S matrix with ember ops (autograd
//   derives it) instead of the fused kernel.
// - is_causal: query i attends keys j <= i (the lower triangle, aligned top-left
//   as torch's ones(L, S).tril()); not together with attn_mask.
// - scale: defaults to 1 / sqrt(E).
// dropout_p takes only a float or double and is_causal only a bool
// (strict_args.h), so a call written for an order without dropout_p, such as
// (q, k, v, mask, true), does not compile.
// A query whose keys are all masked out gives NaN (as torch 2.x with -inf masks).
// float32, float64, and float16/bfloat16 (the fused kernel computes in float32).
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, Probability dropout_p = 0.0,
                                    Flag is_causal = false, std::optional<double> scale = std::nullopt);

}  // namespace ember::nn::functional
