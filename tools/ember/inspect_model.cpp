// A config's model on one random batch (inspect_model.h).
#include "tools/ember/inspect_model.h"

#include "ember/amp.h"
#include "ember/generator.h"
#include "ember/nn/functional.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "tools/ember/train_models.h"

namespace ember::cli {

SampleBatch sample_batch(const InspectModelCommand& command) {
  SampleBatch b;
  b.config = load_train_config(command.config_path, command.overrides);
  set_num_threads(static_cast<int>(b.config.threads));
  manual_seed(b.config.seed);
  b.model = make_model(b.config.model);
  b.model.module->train();
  Generator g(b.config.seed);
  const int64_t n = b.config.data.batch_size;
  b.input = randn({n, 1, 28, 28}, {}, &g);
  b.target = randint(0, 10, {n}, kInt64, &g);
  return b;
}

Tensor sample_loss(const SampleBatch& batch) {
  amp::autocast mixed(DType::BFloat16, batch.config.amp == "bf16");
  return nn::functional::cross_entropy(batch.model.forward(batch.input), batch.target);
}

}  // namespace ember::cli
