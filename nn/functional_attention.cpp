// ember::nn::functional::scaled_dot_product_attention. Without dropout it calls
// the fused op flash_attention (core/op_decls_attention.h; kernels in
// kernels/cpu/attention/) and returns its output (the logsumexp it also
// returns is kept for the backward). With dropout it composes ember ops on the
// full L x S matrix, after the same argument checks.
#include "ember/nn/functional/attention.h"


#include "core/attention_checks.h"
#include "core/attention_composite.h"
#include "core/op_decls_attention.h"
#include "ember/error.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/functional/norm.h"
#include "ember/ops.h"

namespace ember::nn::functional {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

Tensor attention_with_dropout(const Tensor& query, const Tensor& key, const Tensor& value,
                              const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                              const std::optional<Scalar>& scale) {
  const attention::AttentionShape shape =
      attention::check_attention(kOp, query, key, value, attn_mask, is_causal, scale);
  const Tensor p = attention::attention_probabilities(query, key, attn_mask.value_or(Tensor()), is_causal, shape.scale);
  return dropout(p, dropout_p, true).matmul(value);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, Probability dropout_p, Flag is_causal,
                                    std::optional<double> scale) {
  EMBER_CHECK(dropout_p >= 0.0 && dropout_p <= 1.0, kOp, ": dropout_p must be in [0, 1], got ",
              static_cast<double>(dropout_p));
  const std::optional<Scalar> s = scale ? std::optional<Scalar>(Scalar(*scale)) : std::nullopt;
  if (dropout_p > 0.0) return attention_with_dropout(query, key, value, attn_mask, dropout_p, is_causal, s);
  return std::get<0>(op::flash_attention.call(query, key, value, attn_mask, is_causal, s));
}

}  // namespace ember::nn::functional
