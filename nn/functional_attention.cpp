// ember::nn::functional::scaled_dot_product_attention: calls the fused op
// flash_attention (core/op_decls_attention.h; kernels in kernels/cpu/attention/)
// and returns its output (the logsumexp it also returns is kept for the backward).
#include "ember/nn/functional/attention.h"

#include "core/op_decls_attention.h"

namespace ember::nn::functional {

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, bool is_causal,
                                    std::optional<double> scale) {
  const std::optional<Scalar> s = scale ? std::optional<Scalar>(Scalar(*scale)) : std::nullopt;
  return std::get<0>(op::flash_attention.call(query, key, value, attn_mask, is_causal, s));
}

}  // namespace ember::nn::functional
