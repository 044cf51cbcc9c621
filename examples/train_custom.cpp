// Training your own module with ember::Trainer: a model written as a class,
// a made-up task (is the sum of 8 numbers positive, and how far from zero?
// three classes), a custom callback, early stopping and checkpoints.
//   build/release/examples/train_custom [output folder]
#include <ember/ember.h>
#include <ember/nn.h>
#include <ember/trainer.h>

#include <algorithm>
#include <iostream>

namespace nn = ember::nn;
using ember::Tensor;

struct ClassifierImpl : nn::Module {
  ClassifierImpl() : Module("Classifier") {
    hidden = register_module("hidden", nn::Linear(8, 32));
    out = register_module("out", nn::Linear(32, 3));
  }
  Tensor forward(const Tensor& x) { return out(hidden(x).relu()); }
  nn::Linear hidden{nullptr}, out{nullptr};
};
EMBER_MODULE(Classifier);

// x (N, 8) and labels (N): 0 when sum(x) < -1, 2 when sum(x) > 1, else 1.
std::shared_ptr<ember::data::TensorDataset> make_data(int64_t n) {
  Tensor x = ember::randn({n, 8});
  Tensor s = x.sum({1});
  Tensor y = (s > -1.0).to(ember::kInt64) + (s > 1.0).to(ember::kInt64);
  return std::make_shared<ember::data::TensorDataset>(x, y);
}

// A callback of our own: prints the best test accuracy when training ends.
struct BestAccuracy : ember::Callback {
  double best = 0;
  void on_epoch_end(ember::Trainer&, const ember::EpochMetrics& m) override { best = std::max(best, m.get("test_acc")); }
  void on_train_end(ember::Trainer&, const ember::FitResult& r) override {
    std::cout << "trained " << r.history.size() << " epochs; best test accuracy " << best << "\n";
  }
};

int main(int argc, char** argv) {
  const std::string output = argc > 1 ? argv[1] : "runs/train_custom";
  ember::manual_seed(0);
  Classifier model;
  ember::optim::AdamW optimizer(model->parameters(), ember::optim::AdamWOptions(3e-3));
  ember::optim::CosineAnnealingLR schedule(optimizer, /*T_max=*/20);
  ember::data::DataLoader train(make_data(4096), {.batch_size = 64, .shuffle = true, .seed = 0, .name = "train"});
  ember::data::DataLoader test(make_data(1024), {.batch_size = 512, .name = "test"});

  ember::TrainerOptions options;
  options.epochs = 20;
  options.clip_grad_norm = 1.0;
  options.callbacks = {std::make_shared<ember::ProgressLogger>(),
                       std::make_shared<ember::MetricsLogger>(output),
                       std::make_shared<ember::CheckpointCallback>(output, "test_acc", /*maximize=*/true),
                       std::make_shared<ember::EarlyStopping>("test_loss", /*patience=*/3),
                       std::make_shared<BestAccuracy>()};
  ember::Trainer trainer(options);
  trainer.fit(model, optimizer, &schedule, train, &test);  // the schedule steps once per epoch
  std::cout << "metrics.csv, curves.svg, best.ckpt and last.ckpt are in " << output << "\n";
  return 0;
}
