// TransformerEncoderLayer and TransformerEncoder (include/ember/nn/modules/transformer.h),
// built from MultiheadAttention, Linear, Dropout and LayerNorm, in PyTorch's
// order and with PyTorch's names.
#include "ember/error.h"
#include "ember/nn/modules/transformer.h"
#include "ember/ops.h"

namespace ember::nn {

namespace {

const TransformerEncoderLayerOptions& validated(const TransformerEncoderLayerOptions& o) {
  EMBER_CHECK(o.activation() == "relu" || o.activation() == "gelu",
              "TransformerEncoderLayer: activation must be \"relu\" or \"gelu\", got \"", o.activation(), "\"");
  EMBER_CHECK(o.dim_feedforward() > 0, "TransformerEncoderLayer: dim_feedforward must be positive, got ",
              o.dim_feedforward());
  return o;
}

}  // namespace

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& opts)
    : Module("TransformerEncoderLayer"),
      options(validated(opts)),
      self_attn(register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions(opts.d_model(), opts.nhead())
                                                                    .dropout(opts.dropout())
                                                                    .batch_first(opts.batch_first())))),
      linear1(register_module("linear1", Linear(opts.d_model(), opts.dim_feedforward()))),
      dropout(register_module("dropout", Dropout(opts.dropout()))),
      linear2(register_module("linear2", Linear(opts.dim_feedforward(), opts.d_model()))),
      norm1(register_module("norm1", LayerNorm(LayerNormOptions({opts.d_model()}).eps(opts.layer_norm_eps())))),
      norm2(register_module("norm2", LayerNorm(LayerNormOptions({opts.d_model()}).eps(opts.layer_norm_eps())))),
      dropout1(register_module("dropout1", Dropout(opts.dropout()))),
      dropout2(register_module("dropout2", Dropout(opts.dropout()))) {}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask, bool is_causal) {
  auto self_attention = [&](const Tensor& x) {
    const Tensor attended =
        std::get<0>(self_attn(x, x, x, src_key_padding_mask, /*need_weights=*/false, src_mask, true, is_causal));
    return dropout1(attended);
  };
  auto feed_forward = [&](const Tensor& x) {
    const Tensor hidden = linear1(x);
    const Tensor activated = options.activation() == "relu" ? hidden.relu() : hidden.gelu();
    return dropout2(linear2(dropout(activated)));
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = x + self_attention(norm1(x));
    return x + feed_forward(norm2(x));
  }
  x = norm1(x + self_attention(x));
  return norm2(x + feed_forward(x));
}

TransformerEncoderImpl::TransformerEncoderImpl(const TransformerEncoderLayer& layer, int64_t num_layers,
                                               LayerNorm final_norm)
    : Module("TransformerEncoder"), layers(register_module("layers", ModuleList())), norm(std::move(final_norm)) {
  EMBER_CHECK(!layer.is_empty(), "TransformerEncoder: the layer is empty (nullptr)");
  EMBER_CHECK(num_layers > 0, "TransformerEncoder: num_layers must be positive, got ", num_layers);
  const TensorDict state = layer->state_dict();
  for (int64_t i = 0; i < num_layers; ++i) {
    TransformerEncoderLayer copy(layer->options);
    copy->load_state_dict(state);
    copy->train(layer->is_training());
    layers->push_back(copy);
  }
  if (norm) register_module("norm", norm);
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& mask, const Tensor& src_key_padding_mask,
                                       bool is_causal) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->at<TransformerEncoderLayerImpl>(i).forward(x, mask, src_key_padding_mask, is_causal);
  return norm ? norm(x) : x;
}

}  // namespace ember::nn
