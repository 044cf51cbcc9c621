// Whole training steps, ember against libtorch (harness: compare_harness.h):
// zero_grad, forward, loss, backward and the optimiser step of
//   (a) an MLP 784-512-512-10, batch 128, SGD with momentum;
//   (b) the demo CNN (conv 1->32 3x3, ReLU, max-pool, conv 32->64 3x3, ReLU,
//       max-pool, linear 1600->128, ReLU, linear 128->10), batch 64, Adam;
//   (c) one TransformerEncoderLayer (d_model 256, 4 heads, FFN 1024, dropout
//       0.1, post-norm), seq 128, batch 16, AdamW, loss = mean of the output
//       squared; and the same with dropout 0.
// Both sides start from their own seeded initialisation; the step costs do
// not depend on the values.
#include "bench/compare_harness.h"
#include "ember/nn.h"
#include "ember/optim.h"

using namespace ember_bench;
namespace F = ember::nn::functional;
namespace enn = ember::nn;
namespace eoptim = ember::optim;

namespace {

// One classifier training step on each side: zero_grad, cross entropy of the logits, backward, step.
template <class EModel, class EOpt, class TModel, class TOpt>
Case classifier_step(const char* name, std::shared_ptr<EModel> e_model, std::shared_ptr<EOpt> e_opt, ember::Tensor ex,
                     ember::Tensor ey, std::shared_ptr<TModel> t_model, std::shared_ptr<TOpt> t_opt, torch::Tensor tx,
                     torch::Tensor ty) {
  return {name,
          [=] {
            e_opt->zero_grad();
            F::cross_entropy((*e_model)(ex), ey).backward();
            e_opt->step();
          },
          [=] {
            t_opt->zero_grad();
            torch::nn::functional::cross_entropy((*t_model)->forward(tx), ty).backward();
            t_opt->step();
          }};
}

Case mlp_case() {
  auto e_model = std::make_shared<enn::Sequential>(enn::Linear(784, 512), enn::ReLU(), enn::Linear(512, 512),
                                                   enn::ReLU(), enn::Linear(512, 10));
  auto e_opt = std::make_shared<eoptim::SGD>((*e_model)->parameters(), eoptim::SGDOptions(0.01).momentum(0.9));
  auto ex = ember::randn({128, 784});
  auto ey = ember::randint(0, 10, {128});

  auto t_model = std::make_shared<torch::nn::Sequential>(torch::nn::Linear(784, 512), torch::nn::ReLU(),
                                                         torch::nn::Linear(512, 512), torch::nn::ReLU(),
                                                         torch::nn::Linear(512, 10));
  auto t_opt =
      std::make_shared<torch::optim::SGD>((*t_model)->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  auto tx = torch::randn({128, 784});
  auto ty = torch::randint(0, 10, {128}, torch::kLong);
  return classifier_step("MLP 784-512-512-10 b128 SGD momentum step", e_model, e_opt, ex, ey, t_model, t_opt, tx, ty);
}

Case cnn_case() {
  auto e_model = std::make_shared<enn::Sequential>(
      enn::Conv2d(enn::Conv2dOptions(1, 32, 3)), enn::ReLU(), enn::MaxPool2d(enn::MaxPool2dOptions(2)),
      enn::Conv2d(enn::Conv2dOptions(32, 64, 3)), enn::ReLU(), enn::MaxPool2d(enn::MaxPool2dOptions(2)),
      enn::Flatten(), enn::Linear(1600, 128), enn::ReLU(), enn::Linear(128, 10));
  auto e_opt = std::make_shared<eoptim::Adam>((*e_model)->parameters(), eoptim::AdamOptions(1e-3));
  auto ex = ember::randn({64, 1, 28, 28});
  auto ey = ember::randint(0, 10, {64});

  auto t_model = std::make_shared<torch::nn::Sequential>(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 32, 3)), torch::nn::ReLU(),
      torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)), torch::nn::Conv2d(torch::nn::Conv2dOptions(32, 64, 3)),
      torch::nn::ReLU(), torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)), torch::nn::Flatten(),
      torch::nn::Linear(1600, 128), torch::nn::ReLU(), torch::nn::Linear(128, 10));
  auto t_opt = std::make_shared<torch::optim::Adam>((*t_model)->parameters(), torch::optim::AdamOptions(1e-3));
  auto tx = torch::randn({64, 1, 28, 28});
  auto ty = torch::randint(0, 10, {64}, torch::kLong);
  return classifier_step("demo CNN b64 Adam step", e_model, e_opt, ex, ey, t_model, t_opt, tx, ty);
}

Case transformer_case(double dropout) {
  auto e_layer = std::make_shared<enn::TransformerEncoderLayer>(
      enn::TransformerEncoderLayerOptions(256, 4).dim_feedforward(1024).dropout(dropout));
  auto e_opt = std::make_shared<eoptim::AdamW>((*e_layer)->parameters(), eoptim::AdamWOptions(1e-3));
  auto ex = ember::randn({128, 16, 256});  // (seq, batch, d_model)

  auto t_layer = std::make_shared<torch::nn::TransformerEncoderLayer>(
      torch::nn::TransformerEncoderLayerOptions(256, 4).dim_feedforward(1024).dropout(dropout));
  auto t_opt = std::make_shared<torch::optim::AdamW>((*t_layer)->parameters(), torch::optim::AdamWOptions(1e-3));
  auto tx = torch::randn({128, 16, 256});
  return {dropout > 0 ? "TransformerEncoderLayer 256/4/1024 T128 b16 AdamW step"
                      : "TransformerEncoderLayer, dropout 0, step",
          [=] {
            e_opt->zero_grad();
            (*e_layer)(ex).pow(2).mean().backward();
            e_opt->step();
          },
          [=] {
            t_opt->zero_grad();
            (*t_layer)->forward(tx).pow(2).mean().backward();
            t_opt->step();
          }};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  ember::manual_seed(0);
  torch::manual_seed(0);
  run_cases({mlp_case(), cnn_case(), transformer_case(0.1), transformer_case(0.0)}, only);
  return 0;
}
