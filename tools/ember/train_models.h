// The models `ember train` can build by name (config key model.name).
#pragma once

#include "ember/trainer.h"
#include "tools/ember/train_config.h"

namespace ember::cli {

// mlp: flatten, 784 -> hidden[0] -> hidden[1] -> 10 with ReLU (and dropout).
// cnn: conv 1->32 3x3, ReLU, max-pool 2, conv 32->64 3x3, ReLU, max-pool 2,
//      flatten, linear 1600->128, ReLU, linear 128->10.
// transformer: the image cut into patch x patch patches, each a token
//      (linear to d_model plus a learned position embedding), `layers`
//      pre-norm TransformerEncoderLayers, mean over tokens, LayerNorm, linear -> 10.
// Each takes (N, 1, 28, 28) images and returns (N, 10) logits.
TrainableModel make_model(const ModelConfig& config);

}  // namespace ember::cli
