// MultiheadAttention (include/ember/nn/modules/attention.h): input checks,
// the projections, PyTorch's masks merged into one, and the choice between
// F::scaled_dot_product_attention (fused without dropout) and an explicit
// softmax (when the weights are wanted).
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "ember/error.h"
#include "ember/nn/functional/attention.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/functional/norm.h"
#include "ember/nn/init.h"
#include "ember/nn/modules/attention.h"
#include "ember/ops.h"

namespace ember::nn {

namespace F = functional;

namespace {

constexpr const char* kLayer = "MultiheadAttention";

MultiheadAttentionOptions validated(const MultiheadAttentionOptions& o) {
  EMBER_CHECK(o.embed_dim() > 0 && o.num_heads() > 0, kLayer, ": embed_dim and num_heads must be positive, got ",
              o.embed_dim(), " and ", o.num_heads());
  EMBER_CHECK(o.embed_dim() % o.num_heads() == 0, kLayer, ": embed_dim (", o.embed_dim(),
              ") must be divisible by num_heads (", o.num_heads(), ")");
  EMBER_CHECK(o.dropout() >= 0.0 && o.dropout() < 1.0, kLayer, ": dropout must be in [0, 1), got ", o.dropout());
  return o;
}

// PyTorch's masks, made into one mask in scaled_dot_product_attention's
// convention (broadcastable to (N, H, L, S); bool true = may attend, or
// additive), plus whether only the causal mask applies (then no mask tensor:
// the kernels handle causality themselves).
struct MergedMask {
  std::optional<Tensor> mask;
  bool causal_only = false;
};

MergedMask merge_masks(const Tensor& key_padding_mask, const Tensor& attn_mask, bool is_causal, int64_t n,
                       int64_t heads, int64_t l, int64_t s, bool batched, DType dtype) {
  std::vector<Tensor> blocked;   // bool, true = may not attend
  std::vector<Tensor> additive;  // floating, added to the scores
  auto add = [&](const Tensor& m) {
    EMBER_CHECK(m.dtype() == kBool || m.is_floating_point(), kLayer, ": masks must be bool or floating, got ",
                m.dtype());
    if (m.dtype() == kBool) {
      blocked.push_back(m);
    } else {
      additive.push_back(m.to(dtype));
    }
  };
  if (key_padding_mask.defined()) {
    const std::vector<int64_t> want = batched ? std::vector<int64_t>{n, s} : std::vector<int64_t>{s};
    EMBER_CHECK(key_padding_mask.sizes() == IntArrayRef(want), kLayer, ": expected key_padding_mask of shape ",
                IntArrayRef(want), " (", batched ? "N, S" : "S", "), got ", key_padding_mask.sizes());
    add(key_padding_mask.reshape({n, 1, 1, s}));
  }
  if (attn_mask.defined()) {
    if (attn_mask.dim() == 2) {
      EMBER_CHECK(attn_mask.size(0) == l && attn_mask.size(1) == s, kLayer, ": expected a 2-D attn_mask of shape [", l,
                  ", ", s, "] (L, S), got ", attn_mask.sizes());
      add(attn_mask.reshape({1, 1, l, s}));
    } else {
      EMBER_CHECK(
          attn_mask.dim() == 3 && attn_mask.size(0) == n * heads && attn_mask.size(1) == l && attn_mask.size(2) == s,
          kLayer, ": expected attn_mask of shape [", l, ", ", s, "] or [", n * heads, ", ", l, ", ", s,
          "] (N * num_heads, L, S), got ", attn_mask.sizes());
      add(attn_mask.reshape({n, heads, l, s}));
    }
  }
  MergedMask merged;
  if (blocked.empty() && additive.empty()) {
    merged.causal_only = is_causal;
    return merged;
  }
  if (is_causal) blocked.push_back(ones({l, s}, kBool).triu(1).reshape({1, 1, l, s}));
  Tensor any_blocked;
  for (const Tensor& b : blocked) any_blocked = any_blocked.defined() ? any_blocked.logical_or(b) : b;
  if (additive.empty()) {
    merged.mask = any_blocked.logical_not();
    return merged;
  }
  Tensor sum = additive[0];
  for (size_t i = 1; i < additive.size(); ++i) sum = sum + additive[i];
  if (any_blocked.defined())
    sum = sum + zeros(any_blocked.sizes(), dtype).masked_fill(any_blocked, -std::numeric_limits<double>::infinity());
  merged.mask = sum;
  return merged;
}

// (N, T, E) -> (N, H, T, E / H)
Tensor split_heads(const Tensor& x, int64_t heads) {
  return x.reshape({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& opts)
    : Module(kLayer),
      options(validated(opts)),
      in_proj_weight(register_parameter("in_proj_weight", empty({3 * options.embed_dim(), options.embed_dim()}))),
      in_proj_bias(register_parameter("in_proj_bias", options.bias() ? empty({3 * options.embed_dim()}) : Tensor())),
      out_proj(register_module("out_proj",
                               Linear(LinearOptions(options.embed_dim(), options.embed_dim()).bias(options.bias())))) {
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (!options.bias()) return;
  init::zeros_(in_proj_bias);
  init::zeros_(out_proj->bias);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights,
                                                           bool is_causal) {
  const int64_t e = options.embed_dim(), heads = options.num_heads();
  EMBER_CHECK(query.dim() == 2 || query.dim() == 3, kLayer, ": expected a 3-D (batched) or 2-D (unbatched) query, got ",
              query.sizes());
  EMBER_CHECK(key.dim() == query.dim() && value.dim() == query.dim(), kLayer,
              ": expected query, key and value with the same number of dims, got ", query.sizes(), ", ", key.sizes(),
              " and ", value.sizes());
  EMBER_CHECK(query.size(-1) == e && key.size(-1) == e && value.size(-1) == e, kLayer, ": expected query, key and ",
              "value with embed_dim (", e, ") features in the last dim, got ", query.sizes(), ", ", key.sizes(),
              " and ", value.sizes());
  const bool batched = query.dim() == 3;
  // Everything below is batch first: (N, L, E), (N, S, E).
  auto batch_first = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(0);
    return options.batch_first() ? t : t.transpose(0, 1);
  };
  const Tensor q_in = batch_first(query), k_in = batch_first(key), v_in = batch_first(value);
  const int64_t n = q_in.size(0), l = q_in.size(1), s = k_in.size(1);
  EMBER_CHECK(k_in.size(0) == n && v_in.size(0) == n, kLayer, ": expected query, key and value with the same batch ",
              "size, got ", query.sizes(), ", ", key.sizes(), " and ", value.sizes());
  EMBER_CHECK(v_in.size(1) == s, kLayer, ": expected key and value with the same sequence length, got ", key.sizes(),
              " and ", value.sizes());

  const std::optional<Tensor> bias = in_proj_bias.defined() ? std::optional<Tensor>(in_proj_bias) : std::nullopt;
  Tensor q, k, v;
  if (query.is_same(key) && key.is_same(value)) {  // self-attention: one projection
    const TensorList qkv = F::linear(q_in, in_proj_weight, bias).chunk(3, -1);
    q = qkv[0], k = qkv[1], v = qkv[2];
  } else {
    const TensorList w = in_proj_weight.chunk(3, 0);
    const TensorList b = bias ? bias->chunk(3, 0) : TensorList(3);
    auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
    q = F::linear(q_in, w[0], opt(b[0]));
    k = F::linear(k_in, w[1], opt(b[1]));
    v = F::linear(v_in, w[2], opt(b[2]));
  }
  q = split_heads(q, heads), k = split_heads(k, heads), v = split_heads(v, heads);  // (N, H, T, E / H)

  const MergedMask mask = merge_masks(key_padding_mask, attn_mask, is_causal, n, heads, l, s, batched, query.dtype());
  const double dropout_p = is_training() ? options.dropout() : 0.0;
  Tensor heads_out, weights;  // (N, H, L, E / H), (N, H, L, S)
  if (!need_weights) {
    heads_out = F::scaled_dot_product_attention(q, k, v, mask.mask, dropout_p, mask.causal_only);
  } else {
    Tensor scores = q.matmul(k.transpose(-2, -1)) * (1.0 / std::sqrt(static_cast<double>(e / heads)));
    constexpr double kMinusInf = -std::numeric_limits<double>::infinity();
    if (mask.causal_only) scores = scores.masked_fill(ones({l, s}, kBool).triu(1), kMinusInf);
    if (mask.mask && mask.mask->dtype() == kBool) scores = scores.masked_fill(mask.mask->logical_not(), kMinusInf);
    if (mask.mask && mask.mask->dtype() != kBool) scores = scores + *mask.mask;
    weights = F::dropout(F::softmax(scores, -1), dropout_p, dropout_p > 0.0);
    heads_out = weights.matmul(v);
  }
  Tensor out = out_proj(heads_out.transpose(1, 2).reshape({n, l, e}));  // (N, L, E)
  if (!batched) {
    out = out.squeeze(0);
  } else if (!options.batch_first()) {
    out = out.transpose(0, 1);
  }
  if (!need_weights) return {out, Tensor()};
  if (average_attn_weights) weights = weights.mean({1});
  return {out, batched ? weights : weights.squeeze(0)};
}

}  // namespace ember::nn
