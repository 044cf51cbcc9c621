// PyTorch models loaded into ember: the same architecture, PyTorch's
// state_dict (tests/golden/modules/*.safetensors, written by
// tools/golden/make_module_golden.py) and the same logits.
#include <string>

#include "ember/nn.h"
#include "test_util.h"

namespace ember {
namespace {

namespace nn = ember::nn;
using testing::all_close;

struct GoldenModel {
  TensorDict state;  // keys without the "state." prefix
  Tensor input, logits;
};

GoldenModel read_golden(const std::string& name) {
  SafetensorsFile file = load_safetensors(std::string(EMBER_TEST_DATA_DIR) + "/modules/" + name + ".safetensors");
  GoldenModel g;
  const std::string prefix = "state.";
  for (auto& [key, tensor] : file.tensors) {
    if (key.rfind(prefix, 0) == 0) g.state.emplace(key.substr(prefix.size()), tensor);
  }
  g.input = file.tensors.at("input");
  g.logits = file.tensors.at("logits");
  return g;
}

TEST(GoldenNnModules, MlpLoadsPyTorchStateDictAndGivesItsLogits) {
  const GoldenModel g = read_golden("mlp");
  nn::Sequential model(nn::Flatten(), nn::Linear(784, 64), nn::ReLU(), nn::Linear(64, 10));
  model->load_state_dict(g.state);  // strict: the key sets are equal
  model->eval();
  EXPECT_TRUE(all_close(model(g.input), g.logits, 1e-5, 1e-6));
}

TEST(GoldenNnModules, CnnWithBatchNormLoadsPyTorchStateDictAndGivesItsLogits) {
  const GoldenModel g = read_golden("cnn");
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)), nn::BatchNorm2d(8), nn::ReLU(),
                       nn::MaxPool2d(2),                                   // (N, 8, 14, 14)
                       nn::Conv2d(8, 16, 3), nn::ReLU(), nn::MaxPool2d(2),  // (N, 16, 6, 6)
                       nn::Flatten(), nn::Linear(16 * 6 * 6, 10));
  model->load_state_dict(g.state);  // includes 1.running_mean, 1.running_var, 1.num_batches_tracked
  model->eval();                    // BatchNorm uses the running statistics PyTorch saved
  EXPECT_TRUE(all_close(model(g.input), g.logits, 1e-5, 1e-6));
  EXPECT_EQ(model->state_dict().at("1.num_batches_tracked").item<int64_t>(), 2);
}

}  // namespace
}  // namespace ember
