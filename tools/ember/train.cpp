// `ember train`: builds the model, data, optimiser and schedule a config
// names, then runs the Trainer (<ember/trainer.h>) with the progress line,
// the metrics files and checkpoints. Ctrl-C stops after the current batch
// and saves last.ckpt, from which --resume continues. With --nproc N it runs
// itself as N ranks (train_ranks.cpp); each rank trains under DDP, and only
// rank 0 prints and writes.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "ember/data.h"
#include "ember/data/distributed_sampler.h"
#include "ember/distributed/process_group.h"
#include "ember/generator.h"
#include "ember/nn/utils.h"
#include "ember/optim.h"
#include "ember/parallel.h"
#include "ember/trainer.h"
#include "ember/version.h"
#include "tools/ember/commands.h"
#include "tools/ember/export_model.h"
#include "tools/ember/train_config.h"
#include "tools/ember/train_models.h"
#include "tools/ember/train_ranks.h"
#include "tools/ember/train_setup.h"

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

// A run resumed with another number of epochs than it was saved with: the
// schedule was built for the new length, and at the start it goes on from
// the resumed step on that schedule (LRScheduler::relayout), saying so.
class ScheduleRelayout : public Callback {
 public:
  ScheduleRelayout(optim::LRScheduler* scheduler, std::string schedule, int64_t saved_epochs, int64_t epochs)
      : scheduler_(scheduler), schedule_(std::move(schedule)), saved_epochs_(saved_epochs), epochs_(epochs) {}

  void on_train_start(Trainer& trainer) override {
    // Nothing to train is said at the end; the other ranks print nothing.
    if (trainer.epochs_completed() >= epochs_ || !trainer.is_main_process()) return;
    std::cout << "resume: the run was saved with " << saved_epochs_ << " epochs and now has " << epochs_ << "; ";
    if (scheduler_ == nullptr) {
      std::cout << "the learning rate is constant\n";
    } else if (schedule_ == "step") {
      std::cout << "the step schedule does not depend on the length and goes on as before\n";
    } else if (scheduler_->relayout()) {
      std::cout << "the " << schedule_ << " schedule is laid out over " << epochs_ << " epochs and step "
                << trainer.step() << " goes on at its lr there, " << scheduler_->get_last_lr().front() << "\n";
    } else {
      std::cout << "the " << schedule_ << " schedule now spans " << epochs_
                << " epochs; the next step follows it from step " << trainer.step() << "\n";
    }
  }

 private:
  optim::LRScheduler* scheduler_;
  std::string schedule_;
  int64_t saved_epochs_, epochs_;
};

}  // namespace

int train(const TrainCommand& command) {
  EMBER_CHECK(command.nproc >= 0, "train: --nproc must be >= 1, got ", command.nproc);
  EMBER_CHECK(command.backend == "gloo" || command.backend == "mpi", "train: --backend must be gloo or mpi, got '",
              command.backend, "'");
  if (command.nproc > 0 && !is_launched_rank()) return train_on_ranks(command);
  // A rank of a distributed run: the process group first, so that every later error is a clean exit.
  std::shared_ptr<distributed::ProcessGroup> group;
  if (is_launched_rank()) group = distributed::init_process_group({.backend = command.backend});
  std::ostream null_out(nullptr);  // the other ranks print nothing
  std::ostream& out = !group || group->rank() == 0 ? std::cout : null_out;
  TrainConfig config;
  std::string resume_path = command.resume;
  // The config the resumed run was saved with (info.config), when it has one.
  std::optional<TrainConfig> saved;
  if (!resume_path.empty()) {
    const TrainingCheckpoint checkpoint = load_training_checkpoint(resume_path);
    auto text = checkpoint.info.find("config");
    if (text != checkpoint.info.end()) saved = parse_train_config(text->second, resume_path + " (info.config)");
  }
  if (!command.config_path.empty()) {
    config = load_train_config(command.config_path, command.overrides);
  } else {
    // --resume alone: the checkpoint carries the config it was trained with.
    EMBER_CHECK(!resume_path.empty(), "train: give --config FILE, or --resume CHECKPOINT");
    EMBER_CHECK(saved.has_value(), "train: ", resume_path, " holds no config (info.config); give --config FILE as well");
    config = parse_train_config(saved->text, resume_path + " (info.config)", command.overrides);
  }

  // Restarted by `ember launch --max-restarts`: go on from rank 0's last checkpoint, if it wrote one.
  const std::string last = (std::filesystem::path(config.output) / "last.ckpt").string();
  if (restart_count() > 0 && std::filesystem::exists(last)) {
    resume_path = last;
    out << "restart " << restart_count() << ": resuming from " << last << "\n";
  }

  std::optional<StepWindow> profile_window;
  if (!command.profile_steps.empty()) profile_window = parse_step_window(command.profile_steps, "train --profile-steps");
  EMBER_CHECK(command.trace.empty() || profile_window, "train: --trace needs --profile-steps FIRST:END");

  set_num_threads(static_cast<int>(config.threads));
  manual_seed(config.seed);
  TrainableModel model = make_model(config.model);
  out << "ember train: model " << config.model.name << " (" << nn::parameter_count(*model.module)
      << " parameters), " << config.optimizer.name << " lr " << config.optimizer.lr << ", schedule "
      << config.schedule.name << ", " << config.epochs << " epochs, " << config.threads << " threads, seed "
      << config.seed << "\n";
  if (command.dry_run) {
    out << nn::summary(*model.module) << "\n" << config.text;
    return 0;
  }

  if (!group || group->rank() == 0) create_writable_folder("output", config.output);
  auto train_set = load_fashion_mnist(config.data, true);
  auto test_set = load_fashion_mnist(config.data, false);
  std::unique_ptr<data::DataLoader> train_loader_owner = make_train_loader(config, train_set);
  data::DataLoader& train_loader = *train_loader_owner;
  data::DataLoader test_loader(test_set, {.batch_size = static_cast<size_t>(config.data.eval_batch_size),
                                          .sampler = group ? std::make_shared<data::DistributedSampler>(
                                                                 test_set->size(), -1, -1, false)
                                                           : nullptr,
                                          .name = "test"});
  out << "data: fashion_mnist from " << config.data.path << ": " << train_set->size() << " train, "
      << test_set->size() << " test images; output in " << config.output << "\n";

  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(config.optimizer, model.module->parameters());
  const auto batches = static_cast<int64_t>(train_loader.size());
  const int64_t steps_per_epoch = (batches + config.accumulate_grad_batches - 1) / config.accumulate_grad_batches;
  std::vector<std::shared_ptr<optim::LRScheduler>> schedule_parts;
  optim::LRScheduler* scheduler =
      make_schedule(config.schedule, *optimizer, config.optimizer.lr, steps_per_epoch, config.epochs, schedule_parts);

  if (!group || group->rank() == 0) {
    std::ofstream copy(std::filesystem::path(config.output) / "config.yaml");
    copy << config.text;
  }
  auto checkpoints = std::make_shared<CheckpointCallback>(config.output, "test_acc", true);
  TrainerOptions options = trainer_options(config);
  options.callbacks = {std::make_shared<InterruptWatcher>(), std::make_shared<ProgressLogger>(),
                       std::make_shared<MetricsLogger>(config.output), checkpoints};
  if (!config.tensorboard.empty()) {
    if (!group || group->rank() == 0) create_writable_folder("tensorboard", config.tensorboard);
    options.callbacks.push_back(std::make_shared<TensorBoardLogger>(config.tensorboard, 10, model.module));
    out << "tensorboard: event files in " << config.tensorboard << " (tensorboard --logdir "
        << config.tensorboard << ")\n";
  }
  options.info = {{"seed", std::to_string(config.seed)},
                  {"threads", std::to_string(config.threads)},
                  {"config", config.text}};
  options.resume_from = resume_path;
  std::shared_ptr<ProfileSteps> profiling;
  const std::string trace =
      command.trace.empty() ? (std::filesystem::path(config.output) / "trace.json").string() : command.trace;
  if (profile_window) {
    profiling = std::make_shared<ProfileSteps>(profile_window->first, profile_window->end, trace,
                                               profiler::ProfileOptions{.record_shapes = true, .profile_memory = true});
    options.callbacks.push_back(profiling);
  }
  if (saved && saved->epochs != config.epochs)
    options.callbacks.push_back(
        std::make_shared<ScheduleRelayout>(scheduler, config.schedule.name, saved->epochs, config.epochs));
  Trainer trainer(options);

  g_interrupted = false;
  std::signal(SIGINT, on_interrupt);
  const FitResult result = trainer.fit(model, *optimizer, scheduler, train_loader, &test_loader);
  std::signal(SIGINT, SIG_DFL);
  if (profiling && trainer.is_main_process()) print_profile(*profiling, *profile_window, trainer.step(), 20, trace);

  if (result.stopped) {  // Ctrl-C (on some rank: the ranks agreed to stop after the same batch)
    trainer.save_checkpoint(last);
    out << "\ninterrupted after " << trainer.step() << " steps; saved " << last
        << " (continue with: ember train --resume " << last << ")\n";
    return 130;
  }
  if (result.history.empty() && !result.stopped) {
    out << "nothing to train: " << resume_path << " has completed " << trainer.epochs_completed() << " of "
        << config.epochs << " epochs (to train further, resume with --set epochs=N, N > "
        << trainer.epochs_completed() << ")\n";
    return 0;
  }
  if (!result.history.empty()) {
    out << "done: test accuracy " << result.history.back().get("test_acc");
    if (checkpoints->best()) out << " (best " << *checkpoints->best() << ")";
    out << "; metrics.csv, curves.svg, best.ckpt, last.ckpt in " << config.output << "\n";
  }
  if (!config.export_path.empty() && trainer.is_main_process()) {
    // The best epoch's weights when the run kept them, else the final ones.
    const std::string best = (std::filesystem::path(config.output) / "best.ckpt").string();
    const bool from_best = checkpoints->best().has_value() && std::filesystem::exists(best);
    if (from_best) model.module->load_state_dict(load_training_checkpoint(best).states.at("model"));
    export_trained_model(model, config.export_path, export_format("", config.export_path, "train: export"));
    out << "export: the " << (from_best ? "best" : "final") << " model written to " << config.export_path
        << "\n";
  }
  return 0;
}

}  // namespace ember::cli
