// The reference of flash_attention (attention.cpp), the kernel behind
// scaled_dot_product_attention: the whole L x S score matrix of each
// (batch, head) problem, materialised, then a plain softmax and product, in
// long double. Inputs are CPU float32/float64 tensors of any layout; results
// are new contiguous tensors. Listed in kernels/reference_kernels.h.
#pragma once

#include <optional>
#include <vector>

#include "ember/tensor.h"

namespace ember::cpu {

// query [..., L, E], key [..., S, E], value [..., S, Ev] (batch dims
// broadcast); attn_mask (may be undefined) broadcasts to [..., L, S], bool
// (false: the key is masked) or added to the scores; is_causal masks key j > query i.
//   scores = scale * Q K^T + mask;  P = softmax(scores) over S;  out = P V
// Returns (out [..., L, Ev], logsumexp [..., L]). A query whose keys are all
// masked (or S = 0) gets out = 0 and logsumexp = -inf, as the tuned kernel.
// scale defaults to 1 / sqrt(E).
std::vector<Tensor> attention_reference(const Tensor& query, const Tensor& key, const Tensor& value,
                                        const Tensor& attn_mask, bool is_causal, std::optional<double> scale);

}  // namespace ember::cpu
