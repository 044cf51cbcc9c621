// The model registry of `ember train` (train_models.h).
#include "tools/ember/train_models.h"

#include "ember/nn.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/norm.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/modules/transformer.h"
#include "ember/ops.h"

namespace ember::cli {

namespace {

// A vision transformer in miniature: patches as tokens.
class PatchTransformerImpl : public nn::Module {
 public:
  explicit PatchTransformerImpl(const ModelConfig& c)
      : Module("PatchTransformer"),
        patch_(c.patch),
        grid_(28 / c.patch),
        embed(register_module("embed", nn::Linear(c.patch * c.patch, c.d_model))),
        position(register_parameter("position", randn({grid_ * grid_, c.d_model}) * 0.02)),
        encoder(register_module("encoder", nn::TransformerEncoder(nn::TransformerEncoderLayer(
                                                                     nn::TransformerEncoderLayerOptions(c.d_model, c.heads)
                                                                         .dim_feedforward(c.dim_feedforward)
                                                                         .dropout(c.dropout)
                                                                         .batch_first(true)
                                                                         .norm_first(true)),
                                                                 c.layers))),
        norm(register_module("norm", nn::LayerNorm(nn::LayerNormOptions({c.d_model})))),
        head(register_module("head", nn::Linear(c.d_model, 10))) {}

  // images (N, 1, 28, 28) -> logits (N, 10)
  Tensor forward(const Tensor& images) {
    const int64_t n = images.size(0);
    Tensor tokens = images.reshape({n, grid_, patch_, grid_, patch_})
                        .permute({0, 1, 3, 2, 4})
                        .reshape({n, grid_ * grid_, patch_ * patch_});  // (N, T, p*p)
    Tensor x = embed(tokens) + position;                                 // (N, T, D)
    return head(norm(encoder(x).mean({1})));
  }

 private:
  int64_t patch_, grid_;

 public:
  nn::Linear embed;
  Tensor& position;
  nn::TransformerEncoder encoder;
  nn::LayerNorm norm;
  nn::Linear head;
};
EMBER_MODULE(PatchTransformer);

nn::Sequential make_mlp(const ModelConfig& c) {
  nn::Sequential mlp(nn::Flatten(), nn::Linear(28 * 28, c.hidden[0]), nn::ReLU());
  if (c.dropout > 0) mlp->push_back(nn::Dropout(c.dropout));
  mlp->push_back(nn::Linear(c.hidden[0], c.hidden[1]));
  mlp->push_back(nn::ReLU());
  if (c.dropout > 0) mlp->push_back(nn::Dropout(c.dropout));
  mlp->push_back(nn::Linear(c.hidden[1], 10));
  return mlp;
}

nn::Sequential make_cnn() {
  return nn::Sequential(nn::Conv2d(1, 32, 3), nn::ReLU(), nn::MaxPool2d(2),   // (N, 32, 13, 13)
                        nn::Conv2d(32, 64, 3), nn::ReLU(), nn::MaxPool2d(2),  // (N, 64, 5, 5)
                        nn::Flatten(), nn::Linear(64 * 5 * 5, 128), nn::ReLU(), nn::Linear(128, 10));
}

}  // namespace

TrainableModel make_model(const ModelConfig& config) {
  if (config.name == "mlp") return TrainableModel::of(make_mlp(config));
  if (config.name == "cnn") return TrainableModel::of(make_cnn());
  if (config.name == "transformer") return TrainableModel::of(PatchTransformer(config));
  EMBER_FAIL("train: unknown model '", config.name, "' (expected mlp, cnn or transformer)");
}

}  // namespace ember::cli
