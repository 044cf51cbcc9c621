// What `ember inspect autograd` and `ember inspect memory` run: a config's
// model on one batch of random images (N, 1, 28, 28) and labels, the shapes
// a training batch has. The data files are not read; the graph and the
// memory of a step do not depend on the pixel values.
#pragma once

#include "ember/trainer.h"
#include "tools/ember/commands.h"
#include "tools/ember/train_config.h"

namespace ember::cli {

struct SampleBatch {
  TrainConfig config;
  TrainableModel model;
  Tensor input, target;  // (N, 1, 28, 28) float32, (N) int64; N = data.batch_size
};

// Reads the config (with --set overrides), sets its threads and seed, builds
// the model in training mode and a random batch.
SampleBatch sample_batch(const InspectModelCommand& command);

// The loss of `batch` as the Trainer computes it (cross entropy, under
// autocast when the config's amp says bf16), recording the graph.
Tensor sample_loss(const SampleBatch& batch);

}  // namespace ember::cli
