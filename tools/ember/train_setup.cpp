// Shared set-up of `ember train` and `ember profile` (train_setup.h).
#include "tools/ember/train_setup.h"

#include <filesystem>
#include <fstream>

#include "ember/data/distributed_sampler.h"
#include "ember/distributed/process_group.h"
#include "ember/error.h"

namespace ember::cli {

// Creates `path` (and its parents) and checks that files can be written in
// it, before any work that would otherwise be lost at the first save.
void create_writable_folder(const char* what, const std::string& path) {
  namespace fs = std::filesystem;
  const std::string shown = path.size() > 200 ? path.substr(0, 200) + "..." : path;
  std::error_code ec;
  fs::create_directories(path, ec);
  EMBER_CHECK(!ec, "train: ", what, " '", shown, "': cannot create the folder: ", ec.message());
  EMBER_CHECK(fs::is_directory(path, ec), "train: ", what, " '", shown, "' exists and is not a folder");
  const fs::path probe = fs::path(path) / ".ember_write_test";
  const bool writable = std::ofstream(probe).good();
  fs::remove(probe, ec);
  EMBER_CHECK(writable, "train: ", what, " '", shown, "': cannot write files in the folder");
}

// Fashion-MNIST as float images (N, 1, 28, 28), normalised with the training
// set's mean and std, and int64 labels (N). Converted once, up front: the
// loader then only slices and stacks.
std::shared_ptr<data::TensorDataset> load_fashion_mnist(const DataConfig& config, bool train) {
  std::string cache;
  if (!config.cache.empty()) {
    create_writable_folder("data.cache", config.cache);
    cache = (std::filesystem::path(config.cache) / (train ? "fashion_mnist_train.cache" : "fashion_mnist_test.cache"))
                .string();
  }
  data::IdxDataset raw(data::mnist_files(config.path, train), cache);
  constexpr double kMean = 0.2860, kStd = 0.3530;
  // In place: each temporary of the whole set would be a fresh ~190 MB, paid for in page faults.
  Tensor images = raw.data().to(kFloat32);
  images.div_(255.0).sub_(kMean).div_(kStd);
  images = images.unsqueeze(1);
  return std::make_shared<data::TensorDataset>(images, raw.targets().to(DType::Int64));
}

std::unique_ptr<optim::Optimizer> make_optimizer(const OptimizerConfig& c, const std::vector<Tensor>& params) {
  if (c.name == "sgd") {
    return std::make_unique<optim::SGD>(
        params, optim::SGDOptions(c.lr).momentum(c.momentum).nesterov(c.nesterov).weight_decay(c.weight_decay));
  }
  const optim::Betas betas(c.betas[0], c.betas[1]);
  if (c.name == "adam") {
    return std::make_unique<optim::Adam>(
        params, optim::AdamOptions(c.lr).betas(betas).eps(c.eps).weight_decay(c.weight_decay));
  }
  return std::make_unique<optim::AdamW>(params,
                                        optim::AdamWOptions(c.lr).betas(betas).eps(c.eps).weight_decay(c.weight_decay));
}

// The schedule, stepped once per optimiser step. `parts` keeps the schedulers
// a SequentialLR runs alive; the returned one is the one to step.
optim::LRScheduler* make_schedule(const ScheduleConfig& c, optim::Optimizer& opt, double lr, int64_t steps_per_epoch,
                                  int64_t epochs, std::vector<std::shared_ptr<optim::LRScheduler>>& parts) {
  const int64_t total = steps_per_epoch * epochs;
  if (c.name == "onecycle") {
    parts.push_back(std::make_shared<optim::OneCycleLR>(
        opt, optim::OneCycleLROptions({c.max_lr.value_or(lr)}, total).pct_start(c.pct_start)));
    return parts.back().get();
  }
  std::shared_ptr<optim::LRScheduler> warmup;
  if (c.warmup_steps > 0) warmup = std::make_shared<optim::LinearLR>(opt, 0.01, 1.0, c.warmup_steps);
  std::shared_ptr<optim::LRScheduler> main;
  if (c.name == "cosine") {
    main = std::make_shared<optim::CosineAnnealingLR>(opt, std::max<int64_t>(1, total - c.warmup_steps), c.min_lr);
  } else if (c.name == "step") {
    main = std::make_shared<optim::StepLR>(opt, c.step_size * steps_per_epoch, c.gamma);
  }
  if (warmup && main) {
    parts = {warmup, main};
    parts.push_back(std::make_shared<optim::SequentialLR>(opt, std::vector{warmup, main},
                                                          std::vector<int64_t>{c.warmup_steps}));
  } else if (warmup || main) {
    parts.push_back(warmup ? warmup : main);
  }
  return parts.empty() ? nullptr : parts.back().get();
}

std::unique_ptr<data::DataLoader> make_train_loader(const TrainConfig& config,
                                                    std::shared_ptr<data::TensorDataset> train_set) {
  data::DataLoaderOptions options{.batch_size = static_cast<size_t>(config.data.batch_size),
                                  .shuffle = true,
                                  .num_workers = static_cast<size_t>(config.data.num_workers),
                                  .seed = config.seed,
                                  .name = "train"};
  if (distributed::is_initialized()) {
    // data.batch_size is the global batch; each rank takes every world-th
    // sample of one permutation, so a global batch holds the same samples for
    // any number of ranks.
    const int world = distributed::get_world_size();
    EMBER_CHECK(config.data.batch_size % world == 0, "train: data.batch_size ", config.data.batch_size,
                " (the global batch) does not split evenly over ", world, " ranks");
    options.batch_size = static_cast<size_t>(config.data.batch_size / world);
    options.sampler = std::make_shared<data::DistributedSampler>(train_set->size(), -1, -1, true, config.seed);
  }
  return std::make_unique<data::DataLoader>(std::move(train_set), std::move(options));
}

StepWindow parse_step_window(const std::string& text, const char* option) {
  const size_t colon = text.find(':');
  StepWindow w;
  bool ok = colon != std::string::npos && colon > 0 && colon + 1 < text.size();
  auto number = [&](const std::string& part, int64_t& out) {
    size_t used = 0;
    try {
      out = std::stoll(part, &used);
    } catch (const std::exception&) {
      ok = false;
    }
    ok = ok && used == part.size() && part.find_first_not_of("0123456789") == std::string::npos;
  };
  if (ok) number(text.substr(0, colon), w.first);
  if (ok) number(text.substr(colon + 1), w.end);
  EMBER_CHECK(ok && w.first < w.end, option, ": expected FIRST:END, the optimiser steps to profile with "
              "0 <= FIRST < END (e.g. 5:10 for steps 5 to 9), got '", text, "'");
  return w;
}

TrainerOptions trainer_options(const TrainConfig& config) {
  TrainerOptions options;
  options.epochs = config.epochs;
  if (config.amp == "bf16") options.autocast = DType::BFloat16;
  options.accumulate_grad_batches = config.accumulate_grad_batches;
  options.clip_grad_norm = config.clip_grad_norm;
  options.scheduler_interval = SchedulerInterval::kStep;
  return options;
}

}  // namespace ember::cli
