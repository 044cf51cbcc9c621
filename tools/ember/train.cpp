// `ember train`: builds the model, data, optimiser and schedule a config
// names, then runs the Trainer (<ember/trainer.h>) with the progress line,
// the metrics files and checkpoints. Ctrl-C stops after the current batch
// and saves last.ckpt, from which --resume continues.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "ember/data.h"
#include "ember/generator.h"
#include "ember/nn/utils.h"
#include "ember/optim.h"
#include "ember/parallel.h"
#include "ember/trainer.h"
#include "ember/version.h"
#include "tools/ember/commands.h"
#include "tools/ember/train_config.h"
#include "tools/ember/train_models.h"

namespace ember::cli {

namespace {

std::atomic<bool> g_interrupted{false};

void on_interrupt(int) {
  g_interrupted = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

// Turns a Ctrl-C into Trainer::request_stop at the next batch or epoch end.
class InterruptWatcher : public Callback {
 public:
  void on_batch_end(Trainer& trainer, const BatchProgress&) override { check(trainer); }
  void on_epoch_end(Trainer& trainer, const EpochMetrics&) override { check(trainer); }

 private:
  static void check(Trainer& trainer) {
    if (g_interrupted) trainer.request_stop();
  }
};

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

}  // namespace

int train(const TrainCommand& command) {
  TrainConfig config;
  std::string resume_path = command.resume;
  if (!command.config_path.empty()) {
    config = load_train_config(command.config_path, command.overrides);
  } else {
    // --resume alone: the checkpoint carries the config it was trained with.
    EMBER_CHECK(!resume_path.empty(), "train: give --config FILE, or --resume CHECKPOINT");
    const TrainingCheckpoint checkpoint = load_training_checkpoint(resume_path);
    auto text = checkpoint.info.find("config");
    EMBER_CHECK(text != checkpoint.info.end(), "train: ", resume_path,
                " holds no config (info.config); give --config FILE as well");
    config = parse_train_config(text->second, resume_path + " (info.config)", command.overrides);
  }

  set_num_threads(static_cast<int>(config.threads));
  manual_seed(config.seed);
  TrainableModel model = make_model(config.model);
  std::cout << "ember train: model " << config.model.name << " (" << nn::parameter_count(*model.module)
            << " parameters), " << config.optimizer.name << " lr " << config.optimizer.lr << ", schedule "
            << config.schedule.name << ", " << config.epochs << " epochs, " << config.threads << " threads, seed "
            << config.seed << "\n";
  if (command.dry_run) {
    std::cout << nn::summary(*model.module) << "\n" << config.text;
    return 0;
  }

  create_writable_folder("output", config.output);
  auto train_set = load_fashion_mnist(config.data, true);
  auto test_set = load_fashion_mnist(config.data, false);
  data::DataLoader train_loader(train_set, {.batch_size = static_cast<size_t>(config.data.batch_size),
                                            .shuffle = true,
                                            .num_workers = static_cast<size_t>(config.data.num_workers),
                                            .seed = config.seed,
                                            .name = "train"});
  data::DataLoader test_loader(test_set, {.batch_size = static_cast<size_t>(config.data.eval_batch_size),
                                          .name = "test"});
  std::cout << "data: fashion_mnist from " << config.data.path << ": " << train_set->size() << " train, "
            << test_set->size() << " test images; output in " << config.output << "\n";

  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(config.optimizer, model.module->parameters());
  const auto batches = static_cast<int64_t>(train_loader.size());
  const int64_t steps_per_epoch = (batches + config.accumulate_grad_batches - 1) / config.accumulate_grad_batches;
  std::vector<std::shared_ptr<optim::LRScheduler>> schedule_parts;
  optim::LRScheduler* scheduler =
      make_schedule(config.schedule, *optimizer, config.optimizer.lr, steps_per_epoch, config.epochs, schedule_parts);

  {
    std::ofstream copy(std::filesystem::path(config.output) / "config.yaml");
    copy << config.text;
  }
  auto checkpoints = std::make_shared<CheckpointCallback>(config.output, "test_acc", true);
  TrainerOptions options;
  options.epochs = config.epochs;
  if (config.amp == "bf16") options.autocast = DType::BFloat16;
  options.accumulate_grad_batches = config.accumulate_grad_batches;
  options.clip_grad_norm = config.clip_grad_norm;
  options.scheduler_interval = SchedulerInterval::kStep;
  options.callbacks = {std::make_shared<InterruptWatcher>(), std::make_shared<ProgressLogger>(),
                       std::make_shared<MetricsLogger>(config.output), checkpoints};
  options.info = {{"seed", std::to_string(config.seed)},
                  {"threads", std::to_string(config.threads)},
                  {"config", config.text}};
  options.resume_from = resume_path;
  Trainer trainer(options);

  g_interrupted = false;
  std::signal(SIGINT, on_interrupt);
  const FitResult result = trainer.fit(model, *optimizer, scheduler, train_loader, &test_loader);
  std::signal(SIGINT, SIG_DFL);

  const std::string last = (std::filesystem::path(config.output) / "last.ckpt").string();
  if (g_interrupted) {
    trainer.save_checkpoint(last);
    std::cout << "\ninterrupted after " << trainer.step() << " steps; saved " << last
              << " (continue with: ember train --resume " << last << ")\n";
    return 130;
  }
  if (result.history.empty() && !result.stopped) {
    std::cout << "nothing to train: " << resume_path << " has completed " << trainer.epochs_completed() << " of "
              << config.epochs << " epochs (to train further, resume with --set epochs=N, N > "
              << trainer.epochs_completed() << ")\n";
    return 0;
  }
  if (!result.history.empty()) {
    std::cout << "done: test accuracy " << result.history.back().get("test_acc");
    if (checkpoints->best()) std::cout << " (best " << *checkpoints->best() << ")";
    std::cout << "; metrics.csv, curves.svg, best.ckpt, last.ckpt in " << config.output << "\n";
  }
  return 0;
}

}  // namespace ember::cli
