// ember::nn::MultiheadAttention, as torch.nn.MultiheadAttention (with torch 2.x's is_causal).
//
//   namespace nn = ember::nn;
//   nn::MultiheadAttention attn(nn::MultiheadAttentionOptions(256, 8).batch_first(true));
//   auto [y, w] = attn(x, x, x);                   // self-attention; x (N, L, 256); w (N, L, L), head-averaged
//   auto [z, none] = attn(q, k, v, padding, /*need_weights=*/false);   // fused kernel, no weights
//
// Parameters, as PyTorch names and shapes them (so a PyTorch state_dict loads):
// "in_proj_weight" (3E, E): the query, key and value projections stacked;
// "in_proj_bias" (3E); "out_proj.weight" (E, E), "out_proj.bias" (E) of the
// Linear submodule out_proj. Init as PyTorch: xavier_uniform_ in_proj_weight,
// zero biases, out_proj.weight as Linear's default.
//
// How it computes: project, split into num_heads heads of E / num_heads, then
// softmax(q k^T / sqrt(E / num_heads) + mask) v per head, concatenate, out_proj.
// Without need_weights the heads go through F::scaled_dot_product_attention
// (with the dropout in training mode; without it, the fused kernel that
// never holds the L x S scores); otherwise through an explicit softmax, whose
// probabilities are returned and get the dropout. Not offered: kdim/vdim, add_bias_kv, add_zero_attn.
#pragma once

#include <cstdint>
#include <tuple>

#include "ember/nn/module.h"
#include "ember/nn/modules/linear.h"

namespace ember::nn {

class MultiheadAttentionOptions {
 public:
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}

  // Dropout on the attention probabilities, in training mode.
  MultiheadAttentionOptions& dropout(double v) {
    dropout_ = v;
    return *this;
  }
  // Biases in the input and output projections.
  MultiheadAttentionOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }
  // Inputs and output are (N, L, E) instead of (L, N, E).
  MultiheadAttentionOptions& batch_first(bool v) {
    batch_first_ = v;
    return *this;
  }

  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  double dropout() const { return dropout_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_ = 0.0;
  bool bias_ = true;
  bool batch_first_ = false;
};

class MultiheadAttentionImpl : public Module {
 public:
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}

  // query (L, N, E), key and value (S, N, E); with batch_first (N, L, E) and
  // (N, S, E); unbatched (L, E) and (S, E). Returns the output (query's
  // layout) and, with need_weights, the attention probabilities (N, L, S)
  // (averaged over heads) or (N, num_heads, L, S) (not averaged); unbatched
  // without the N. The weights are undefined without need_weights.
  // Masks, as PyTorch's (true = may NOT attend; a float mask is added to the scores):
  // - key_padding_mask (N, S) (unbatched (S)): keys each sample ignores;
  // - attn_mask (L, S), or (N * num_heads, L, S) per sample and head;
  // - is_causal: query i attends keys j <= i only. Unlike torch 2.x, where it
  //   is a hint that attn_mask is causal, it makes the causal mask itself;
  //   with attn_mask both apply.
  // A query whose keys are all masked gives NaN, as in PyTorch.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  // PyTorch's init: xavier_uniform_(in_proj_weight), zero in_proj_bias and
  // out_proj.bias (out_proj.weight keeps Linear's init).
  void reset_parameters();

  const MultiheadAttentionOptions options;
  Tensor& in_proj_weight;  // (3E, E): rows [0, E) project the query, [E, 2E) the key, [2E, 3E) the value
  Tensor& in_proj_bias;    // (3E); undefined with bias(false)
  Linear out_proj;
};
EMBER_MODULE(MultiheadAttention);

}  // namespace ember::nn
