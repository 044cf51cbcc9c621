// The demo training is deterministic: 200 optimiser steps of the Fashion-MNIST
// MLP (the demo config's model with dropout, Adam, shuffled batches of 64
// from two loader workers) end with bit-identical parameters with 1, 2 and 3
// threads and across two runs. Every kernel on this path promises results
// independent of the thread count (fixed reduction orders; docs/performance.md).
// Skips when Debian's dataset-fashion-mnist is not installed.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "ember/data.h"
#include "ember/ember.h"
#include "ember/nn.h"
#include "ember/optim.h"
#include "ember/parallel.h"
#include "ember/trainer.h"

namespace ember {
namespace {

struct StopAfterSteps : Callback {
  int64_t steps;
  explicit StopAfterSteps(int64_t n) : steps(n) {}
  void on_batch_end(Trainer& trainer, const BatchProgress& p) override {
    if (p.step >= steps) trainer.request_stop();
  }
};

std::vector<Tensor> train_200_steps(const std::shared_ptr<data::TensorDataset>& train_set, int threads) {
  set_num_threads(threads);
  manual_seed(0);
  nn::Sequential model(nn::Flatten(), nn::Linear(784, 256), nn::ReLU(), nn::Dropout(0.1), nn::Linear(256, 128),
                       nn::ReLU(), nn::Linear(128, 10));
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
  data::DataLoader loader(train_set, {.batch_size = 64, .shuffle = true, .num_workers = 2, .seed = 0});
  TrainerOptions options;
  options.epochs = 1;
  options.callbacks = {std::make_shared<StopAfterSteps>(200)};
  Trainer trainer(options);
  trainer.fit(model, opt, nullptr, loader, nullptr);
  EXPECT_EQ(trainer.step(), 200);
  std::vector<Tensor> params;
  for (const Tensor& p : model->parameters()) params.push_back(p.detach().clone());
  return params;
}

bool same_bits(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].nbytes() != b[i].nbytes() || std::memcmp(a[i].data_ptr(), b[i].data_ptr(), a[i].nbytes()) != 0)
      return false;
  }
  return true;
}

TEST(Determinism, DemoTrainingIsBitIdenticalAcrossThreadCountsAndRuns) {
  const data::IdxFiles files = data::mnist_files(data::kFashionMnistDir, /*train=*/true);
  if (!std::filesystem::exists(files.images)) GTEST_SKIP() << "Fashion-MNIST is not installed";
  data::IdxDataset raw(files);
  Tensor images = raw.data().to(kFloat32);
  images.div_(255.0).sub_(0.2860).div_(0.3530);
  auto train_set = std::make_shared<data::TensorDataset>(images, raw.targets().to(kInt64));

  const int saved_threads = get_num_threads();
  const std::vector<Tensor> one = train_200_steps(train_set, 1);
  const std::vector<Tensor> two = train_200_steps(train_set, 2);
  const std::vector<Tensor> two_again = train_200_steps(train_set, 2);
  const std::vector<Tensor> three = train_200_steps(train_set, 3);
  set_num_threads(saved_threads);
  EXPECT_TRUE(same_bits(one, two)) << "1 vs 2 threads";
  EXPECT_TRUE(same_bits(two, two_again)) << "two runs with 2 threads";
  EXPECT_TRUE(same_bits(one, three)) << "1 vs 3 threads";
  EXPECT_FALSE(same_bits(one, {})) << "the comparison can fail";
}

}  // namespace
}  // namespace ember
