// ember::nn::TransformerEncoderLayer and TransformerEncoder, as torch.nn.
//
//   namespace nn = ember::nn;
//   nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(256, 4)
//                                         .dim_feedforward(1024).batch_first(true).norm_first(true));
//   ember::Tensor y = layer(x);                           // x (N, T, 256)
//   nn::TransformerEncoder encoder(layer, 6);             // 6 copies of `layer`
//   ember::Tensor z = encoder(x, {}, padding);            // padding (N, T) bool, true = ignore
//
// Submodules as PyTorch names them, so a PyTorch state_dict loads:
// self_attn (MultiheadAttention), linear1 (d_model -> dim_feedforward),
// dropout, linear2 (-> d_model), norm1, norm2 (LayerNorm), dropout1, dropout2.
//   post-norm (default): x = norm1(x + sa(x));  x = norm2(x + ff(x))
//   pre-norm (norm_first): x = x + sa(norm1(x));  x = x + ff(norm2(x))
// with sa(x) = dropout1(self_attn(x, x, x)) (no weights: the fused attention
// kernel in eval mode) and ff(x) = dropout2(linear2(dropout(activation(linear1(x))))).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "ember/nn/module.h"
#include "ember/nn/modules/attention.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/norm.h"

namespace ember::nn {

class TransformerEncoderLayerOptions {
 public:
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}

  TransformerEncoderLayerOptions& dim_feedforward(int64_t v) { return set(dim_feedforward_, v); }
  // Of the attention probabilities, the feed-forward hidden layer and both residual branches.
  TransformerEncoderLayerOptions& dropout(double v) { return set(dropout_, v); }
  // "relu" or "gelu" (exact, with erf).
  TransformerEncoderLayerOptions& activation(std::string v) { return set(activation_, std::move(v)); }
  TransformerEncoderLayerOptions& layer_norm_eps(double v) { return set(layer_norm_eps_, v); }
  // Input and output (N, T, E) instead of (T, N, E).
  TransformerEncoderLayerOptions& batch_first(bool v) { return set(batch_first_, v); }
  // Pre-norm: normalise before each block instead of after each residual sum.
  TransformerEncoderLayerOptions& norm_first(bool v) { return set(norm_first_, v); }

  int64_t d_model() const { return d_model_; }
  int64_t nhead() const { return nhead_; }
  int64_t dim_feedforward() const { return dim_feedforward_; }
  double dropout() const { return dropout_; }
  const std::string& activation() const { return activation_; }
  double layer_norm_eps() const { return layer_norm_eps_; }
  bool batch_first() const { return batch_first_; }
  bool norm_first() const { return norm_first_; }

 private:
  template <class T, class V>
  TransformerEncoderLayerOptions& set(T& field, V&& value) {
    field = std::forward<V>(value);
    return *this;
  }
  int64_t d_model_, nhead_;
  int64_t dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  std::string activation_ = "relu";
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false;
  bool norm_first_ = false;
};

class TransformerEncoderLayerImpl : public Module {
 public:
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}

  // src (T, N, E), or (N, T, E) with batch_first, or (T, E); the output has its shape.
  // src_mask and src_key_padding_mask and is_causal: MultiheadAttention's attn_mask,
  // key_padding_mask and is_causal.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);

  const TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn;
  Linear linear1;
  Dropout dropout;
  Linear linear2;
  LayerNorm norm1, norm2;
  Dropout dropout1, dropout2;
};
EMBER_MODULE(TransformerEncoderLayer);

// num_layers layers in turn ("layers.0", "layers.1", ...), each starting as a
// copy of `layer`'s parameters (as PyTorch deep-copies it), then the optional
// final `norm` ("norm").
class TransformerEncoderImpl : public Module {
 public:
  TransformerEncoderImpl(const TransformerEncoderLayer& layer, int64_t num_layers, LayerNorm norm = nullptr);

  // As TransformerEncoderLayer::forward, through every layer.
  Tensor forward(const Tensor& src, const Tensor& mask = {}, const Tensor& src_key_padding_mask = {},
                 bool is_causal = false);

  ModuleList layers;
  LayerNorm norm;  // empty when not given
};
EMBER_MODULE(TransformerEncoder);

}  // namespace ember::nn
