// `ember profile`: trains a config's model just long enough to profile a
// window of optimiser steps, prints the busiest ops and writes a Chrome trace
// (docs/profiling.md). `ember train --profile-steps` prints the same report.
#include <algorithm>
#include <iostream>

#include "ember/generator.h"
#include "ember/parallel.h"
#include "ember/profiler.h"
#include "tools/ember/commands.h"
#include "tools/ember/train_models.h"
#include "tools/ember/train_setup.h"

namespace ember::cli {

void print_profile(const ProfileSteps& profiling, StepWindow window, int64_t steps_done, int64_t row_limit,
                   const std::string& trace) {
  const profiler::Profile* p = profiling.profile();
  if (p == nullptr) {
    std::cout << "profile: the run ended after " << steps_done << " steps, before step " << window.first
              << "; nothing was profiled\n";
    return;
  }
  if (steps_done < window.end)
    std::cout << "profile: the run ended after " << steps_done << " steps, inside the window\n";
  std::cout << "profile of steps " << window.first << " to " << std::min(window.end, steps_done) - 1 << ":\n"
            << p->key_averages().table({.sort_by = "self_cpu_time", .row_limit = row_limit});
  const profiler::MemoryProfile& m = p->memory();
  if (!m.timeline.empty()) {
    std::cout << "memory: peak " << m.peak_allocated_bytes << " bytes allocated"
              << (m.peak_op.empty() ? std::string() : ", reached in " + m.peak_op) << "; " << m.still_alive.size()
              << " blocks allocated in the window are still alive at its end\n";
  }
  std::cout << "trace: " << trace << " (open it in https://ui.perfetto.dev or chrome://tracing)\n";
}

int profile(const ProfileCommand& command) {
  EMBER_CHECK(!command.config_path.empty(), "profile: give --config FILE");
  const TrainConfig config = load_train_config(command.config_path, command.overrides);
  const StepWindow window = parse_step_window(command.steps, "profile --steps");
  EMBER_CHECK(!command.trace.empty(), "profile: --trace needs a file name");

  set_num_threads(static_cast<int>(config.threads));
  manual_seed(config.seed);
  TrainableModel model = make_model(config.model);
  std::unique_ptr<data::DataLoader> loader = make_train_loader(config, load_fashion_mnist(config.data, true));
  std::unique_ptr<optim::Optimizer> optimizer = make_optimizer(config.optimizer, model.module->parameters());
  const auto batches = static_cast<int64_t>(loader->size());
  const int64_t steps_per_epoch = (batches + config.accumulate_grad_batches - 1) / config.accumulate_grad_batches;
  std::vector<std::shared_ptr<optim::LRScheduler>> schedule_parts;
  optim::LRScheduler* scheduler =
      make_schedule(config.schedule, *optimizer, config.optimizer.lr, steps_per_epoch, config.epochs, schedule_parts);
  std::cout << "ember profile: model " << config.model.name << ", " << config.threads << " threads, batch "
            << config.data.batch_size << "; training " << window.end << " steps, profiling steps " << window.first
            << " to " << window.end - 1 << "\n";

  auto profiling = std::make_shared<ProfileSteps>(
      window.first, window.end, command.trace, profiler::ProfileOptions{.record_shapes = true, .profile_memory = true},
      /*request_stop=*/true);
  TrainerOptions options = trainer_options(config);
  options.callbacks = {profiling};
  Trainer trainer(options);
  trainer.fit(model, *optimizer, scheduler, *loader, nullptr);
  print_profile(*profiling, window, trainer.step(), command.row_limit, command.trace);
  return profiling->profile() ? 0 : 1;
}

}  // namespace ember::cli
