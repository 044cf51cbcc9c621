// `ember inspect memory [--config CFG] [--json]`: the CPU caching allocator's
// statistics (<ember/allocator.h>) and its size classes (core/cpu_allocator.h). With a config, one
// training step of its model (forward, loss, backward, optimiser step on a
// random batch, inspect_model.h) runs first, so the numbers show what a
// training loop holds between steps and what the step left in the cache; the
// peak is the step's own.
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <optional>

#include "core/cpu_allocator.h"
#include "ember/allocator.h"
#include "tools/ember/commands.h"
#include "tools/ember/inspect_model.h"
#include "tools/ember/json_output.h"
#include "tools/ember/train_setup.h"

namespace ember::cli {
namespace {

// "1.5 MiB", "832 B".
std::string human_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

// One training step of the config's model, kept alive afterwards: the model,
// its gradients and the optimiser's state are what a training loop holds
// between steps. The allocator's peak is reset just before the step.
struct Workload {
  SampleBatch batch;
  std::unique_ptr<optim::Optimizer> optimizer;
};

Workload run_step(const InspectModelCommand& command) {
  Workload w{sample_batch(command), nullptr};
  w.optimizer = make_optimizer(w.batch.config.optimizer, w.batch.model.module->parameters());
  reset_peak_memory_stats();
  w.optimizer->zero_grad();
  sample_loss(w.batch).backward();
  w.optimizer->step();
  return w;
}

}  // namespace

int inspect_memory(const InspectModelCommand& command) {
  EMBER_CHECK(!command.dot, "inspect memory: --dot is for inspect autograd");
  std::optional<Workload> workload;
  if (!command.config_path.empty()) workload = run_step(command);
  const MemoryStats s = memory_stats(Device::cpu());
  const std::vector<MemoryBlockClass> classes = cpu_memory_size_classes();
  int64_t held = 0, cached = 0;
  for (const MemoryBlockClass& c : classes) {
    held += c.allocated_blocks;
    cached += c.cached_blocks;
  }
  const int64_t cached_bytes = s.reserved_bytes - s.allocated_bytes;
  if (command.json) {
    nlohmann::json size_classes = nlohmann::json::array();
    for (const MemoryBlockClass& c : classes) {
      size_classes.push_back({{"block_bytes", c.block_bytes},
                              {"allocated_blocks", c.allocated_blocks},
                              {"cached_blocks", c.cached_blocks}});
    }
    nlohmann::json w = nullptr;
    if (workload) {
      const TrainConfig& c = workload->batch.config;
      w = {{"model", c.model.name}, {"optimizer", c.optimizer.name}, {"batch_size", c.data.batch_size}};
    }
    print_json(nlohmann::json{{"device", "cpu"},
                              {"after_training_step", w},
                              {"stats",
                               {{"allocated_bytes", s.allocated_bytes},
                                {"reserved_bytes", s.reserved_bytes},
                                {"cached_bytes", cached_bytes},
                                {"peak_allocated_bytes", s.peak_allocated_bytes},
                                {"num_allocations", s.num_allocations},
                                {"cache_hits", s.cache_hits},
                                {"cache_misses", s.cache_misses},
                                {"allocated_blocks", held},
                                {"cached_blocks", cached}}},
                              {"size_classes", size_classes}});
    return 0;
  }
  std::cout << "CPU allocator";
  if (workload) {
    const TrainConfig& c = workload->batch.config;
    std::cout << " after one training step of model " << c.model.name << " (batch " << c.data.batch_size << ", "
              << c.optimizer.name << "), with the model, its gradients and the optimiser's state alive";
  }
  std::cout << ":\n";
  auto row = [](const char* what, int64_t bytes, const std::string& note) {
    std::cout << "  " << std::left << std::setw(12) << what << std::right << std::setw(10) << human_bytes(bytes) << "  "
              << note << "\n";
  };
  row("allocated", s.allocated_bytes, std::to_string(s.allocated_bytes) + " bytes in " + std::to_string(held) + " blocks held by tensors");
  row("cached", cached_bytes, std::to_string(cached) + " free blocks kept for reuse");
  row("reserved", s.reserved_bytes, "allocated + cached");
  row("peak", s.peak_allocated_bytes, workload ? "allocated at most, during the step" : "allocated at most");
  const double hit_rate = s.num_allocations > 0 ? 100.0 * static_cast<double>(s.cache_hits) / static_cast<double>(s.num_allocations) : 0;
  std::cout << "  allocations " << s.num_allocations << ": " << s.cache_hits << " from the cache, " << s.cache_misses
            << " from the system (" << std::fixed << std::setprecision(1) << hit_rate << "% hits)\n";
  if (classes.empty()) {
    std::cout << "size classes: none holds a block\n";
    return 0;
  }
  std::cout << "size classes (block size: blocks held by tensors, blocks cached):\n";
  for (const MemoryBlockClass& c : classes)
    std::cout << "  " << std::setw(10) << human_bytes(c.block_bytes) << ": " << std::setw(6) << c.allocated_blocks
              << " " << std::setw(6) << c.cached_blocks << "\n";
  return 0;
}

}  // namespace ember::cli
