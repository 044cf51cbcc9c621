// OneCycleLR, as torch.optim.lr_scheduler.OneCycleLR (1.13): the 1cycle
// policy, stepped once per batch.
//
//   OneCycleLR sched(opt, OneCycleLROptions({0.01}, /*total_steps=*/epochs * batches));
//
// The lr rises from max_lr / div_factor to max_lr over the first pct_start of
// the steps, then falls to max_lr / div_factor / final_div_factor (with
// three_phase: back to the start over as many steps, then down to the
// minimum). Each phase anneals by cosine ("cos") or linearly. With
// cycle_momentum, the momentum moves the opposite way between max_momentum
// and base_momentum: the "beta1" of Adam-like optimisers, else "momentum"
// (SGD, RMSprop); optimisers with neither are an error. Stepping more than
// total_steps times is an error. max_lr, base_momentum and max_momentum
// take one value for every group, or one per group.
#pragma once

#include <vector>

#include "ember/optim/lr_scheduler.h"

namespace ember::optim {

enum class AnnealStrategy { Cos, Linear };

class OneCycleLROptions {
 public:
  OneCycleLROptions(std::vector<double> max_lr, int64_t total_steps)
      : max_lr_(std::move(max_lr)), total_steps_(total_steps) {}
  EMBER_OPTIM_OPTION(OneCycleLROptions, std::vector<double>, max_lr, {})
  EMBER_OPTIM_OPTION(OneCycleLROptions, int64_t, total_steps, 0)
  EMBER_OPTIM_OPTION(OneCycleLROptions, double, pct_start, 0.3)
  EMBER_OPTIM_OPTION(OneCycleLROptions, AnnealStrategy, anneal_strategy, AnnealStrategy::Cos)
  EMBER_OPTIM_OPTION(OneCycleLROptions, bool, cycle_momentum, true)
  EMBER_OPTIM_OPTION(OneCycleLROptions, std::vector<double>, base_momentum, {0.85})
  EMBER_OPTIM_OPTION(OneCycleLROptions, std::vector<double>, max_momentum, {0.95})
  EMBER_OPTIM_OPTION(OneCycleLROptions, double, div_factor, 25)
  EMBER_OPTIM_OPTION(OneCycleLROptions, double, final_div_factor, 1e4)
  EMBER_OPTIM_OPTION(OneCycleLROptions, bool, three_phase, false)
};

class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

 private:
  // The per-group values a phase starts or ends at.
  enum class Level { InitialLr, MaxLr, MinLr, MaxMomentum, BaseMomentum };
  struct Phase {
    double end_step;
    Level start_lr, end_lr, start_momentum, end_momentum;
  };
  struct GroupLevels {
    double initial_lr, max_lr, min_lr, max_momentum, base_momentum;
    double at(Level l) const;
  };

  std::vector<double> compute_lrs() override;
  double anneal(double start, double end, double pct) const;
  // The option cycled as momentum in group g ("beta1" or "momentum").
  double& momentum_of(size_t g);

  int64_t total_steps_;
  AnnealStrategy strategy_;
  bool cycle_momentum_;
  const char* momentum_name_ = nullptr;
  std::vector<Phase> phases_;
  std::vector<GroupLevels> levels_;
};

}  // namespace ember::optim
