// What `ember train` and `ember profile` both build from a config: the
// Fashion-MNIST data, the training loader, the optimiser and the schedule.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/data.h"
#include "ember/optim.h"
#include "ember/trainer.h"
#include "tools/ember/train_config.h"

namespace ember::cli {

// Creates `path` (and its parents) and checks that files can be written in
// it, before any work that would otherwise be lost at the first save.
void create_writable_folder(const char* what, const std::string& path);

// Fashion-MNIST as float images (N, 1, 28, 28), normalised with the training
// set's mean and std, and int64 labels (N).
std::shared_ptr<data::TensorDataset> load_fashion_mnist(const DataConfig& config, bool train);

// The shuffled training loader of a run.
std::unique_ptr<data::DataLoader> make_train_loader(const TrainConfig& config,
                                                    std::shared_ptr<data::TensorDataset> train_set);

// The Trainer's options the config sets (epochs, autocast, accumulation,
// clipping; the schedule steps per optimiser step); callbacks are the caller's.
TrainerOptions trainer_options(const TrainConfig& config);

std::unique_ptr<optim::Optimizer> make_optimizer(const OptimizerConfig& c, const std::vector<Tensor>& params);

// The schedule, stepped once per optimiser step. `parts` keeps the schedulers
// a SequentialLR runs alive; the returned one is the one to step (null: none).
optim::LRScheduler* make_schedule(const ScheduleConfig& c, optim::Optimizer& opt, double lr, int64_t steps_per_epoch,
                                  int64_t epochs, std::vector<std::shared_ptr<optim::LRScheduler>>& parts);

// Optimiser steps [first, end), from "A:B" (0 <= A < B); `option` names the
// command-line option in errors.
struct StepWindow {
  int64_t first = 0, end = 0;
};
StepWindow parse_step_window(const std::string& text, const char* option);

// Prints what `profiling` recorded (profile.cpp): the top `row_limit` ops by
// self time, the memory peak, and where the trace went (or that the run
// ended before the window).
void print_profile(const ProfileSteps& profiling, StepWindow window, int64_t steps_done, int64_t row_limit,
                   const std::string& trace);

}  // namespace ember::cli
