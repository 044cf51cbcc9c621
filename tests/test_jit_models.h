// Small versions of the demo models of `ember train` (tools/ember/train_models.cpp),
// shared by the jit tests.
#pragma once

#include "ember/nn.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/norm.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/modules/transformer.h"
#include "ember/ops.h"

namespace ember::testing {

inline nn::Sequential demo_mlp(double dropout = 0.0) {
  nn::Sequential mlp(nn::Flatten(), nn::Linear(28 * 28, 64), nn::ReLU());
  if (dropout > 0) mlp->push_back(nn::Dropout(dropout));
  mlp->push_back(nn::Linear(64, 32));
  mlp->push_back(nn::ReLU());
  mlp->push_back(nn::Linear(32, 10));
  return mlp;
}

inline nn::Sequential demo_cnn() {
  return nn::Sequential(nn::Conv2d(1, 8, 3), nn::ReLU(), nn::MaxPool2d(2),   // (N, 8, 13, 13)
                        nn::Conv2d(8, 16, 3), nn::ReLU(), nn::MaxPool2d(2),  // (N, 16, 5, 5)
                        nn::Flatten(), nn::Linear(16 * 5 * 5, 32), nn::ReLU(), nn::Linear(32, 10));
}

// The patch transformer of `ember train`, in miniature: 7x7 patches of a
// 28x28 image as 16 tokens.
class TinyTransformerImpl : public nn::Module {
 public:
  TinyTransformerImpl()
      : Module("TinyTransformer"),
        embed(register_module("embed", nn::Linear(49, 32))),
        position(register_parameter("position", randn({16, 32}) * 0.02)),
        encoder(register_module("encoder", nn::TransformerEncoder(nn::TransformerEncoderLayer(
                                                                     nn::TransformerEncoderLayerOptions(32, 4)
                                                                         .dim_feedforward(64)
                                                                         .dropout(0.1)
                                                                         .batch_first(true)
                                                                         .norm_first(true)),
                                                                 2))),
        norm(register_module("norm", nn::LayerNorm(nn::LayerNormOptions({32})))),
        head(register_module("head", nn::Linear(32, 10))) {}

  Tensor forward(const Tensor& images) {  // (N, 1, 28, 28) -> (N, 10)
    const int64_t n = images.size(0);
    Tensor tokens = images.reshape({n, 4, 7, 4, 7}).permute({0, 1, 3, 2, 4}).reshape({n, 16, 49});
    Tensor x = embed(tokens) + position;
    return head(norm(encoder(x).mean({1})));
  }

  nn::Linear embed;
  Tensor& position;
  nn::TransformerEncoder encoder;
  nn::LayerNorm norm;
  nn::Linear head;
};
EMBER_MODULE(TinyTransformer);

}  // namespace ember::testing
