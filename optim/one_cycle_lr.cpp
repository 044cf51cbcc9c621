// OneCycleLR (include/ember/optim/one_cycle_lr.h), in the arithmetic of
// torch's OneCycleLR (1.13).
#include "ember/optim/one_cycle_lr.h"

#include <cmath>
#include <numbers>

#include "ember/error.h"

namespace ember::optim {

namespace {

// One value per group: `values` has one for all, or one per group.
std::vector<double> per_group(const std::vector<double>& values, size_t groups, const char* name) {
  EMBER_CHECK(values.size() == 1 || values.size() == groups, "OneCycleLR: expected 1 or ", groups, " values of ", name,
              " (one per parameter group), got ", values.size());
  return values.size() == 1 ? std::vector<double>(groups, values[0]) : values;
}

}  // namespace

double OneCycleLR::GroupLevels::at(Level l) const {
  switch (l) {
    case Level::InitialLr: return initial_lr;
    case Level::MaxLr: return max_lr;
    case Level::MinLr: return min_lr;
    case Level::MaxMomentum: return max_momentum;
    case Level::BaseMomentum: return base_momentum;
  }
  return initial_lr;
}

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& o)
    : LRScheduler(optimizer, "OneCycleLR"),
      total_steps_(o.total_steps()),
      strategy_(o.anneal_strategy()),
      cycle_momentum_(o.cycle_momentum()) {
  EMBER_CHECK(total_steps_ > 0, "OneCycleLR: expected a positive total_steps, got ", total_steps_);
  EMBER_CHECK(o.pct_start() >= 0 && o.pct_start() <= 1, "OneCycleLR: expected pct_start in [0, 1], got ",
              o.pct_start());
  const double total = static_cast<double>(total_steps_);
  const double rise_end = o.pct_start() * total - 1;
  if (o.three_phase()) {
    phases_ = {{rise_end, Level::InitialLr, Level::MaxLr, Level::MaxMomentum, Level::BaseMomentum},
               {2 * o.pct_start() * total - 2, Level::MaxLr, Level::InitialLr, Level::BaseMomentum, Level::MaxMomentum},
               {total - 1, Level::InitialLr, Level::MinLr, Level::MaxMomentum, Level::MaxMomentum}};
  } else {
    phases_ = {{rise_end, Level::InitialLr, Level::MaxLr, Level::MaxMomentum, Level::BaseMomentum},
               {total - 1, Level::MaxLr, Level::MinLr, Level::BaseMomentum, Level::MaxMomentum}};
  }

  std::vector<ParamGroup>& groups = optimizer.param_groups();
  const std::vector<double> max_lrs = per_group(o.max_lr(), groups.size(), "max_lr");
  const std::vector<double> max_momentums = per_group(o.max_momentum(), groups.size(), "max_momentum");
  const std::vector<double> base_momentums = per_group(o.base_momentum(), groups.size(), "base_momentum");
  if (cycle_momentum_) {
    OptimizerOptions& first = groups.at(0).options();
    momentum_name_ = first.find_number("beta1") ? "beta1" : first.find_number("momentum") ? "momentum" : nullptr;
    EMBER_CHECK(momentum_name_ != nullptr, "OneCycleLR: cycle_momentum needs an optimiser with a momentum or betas, ",
                optimizer.name(), " has neither (pass cycle_momentum(false))");
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    GroupLevels l;
    l.initial_lr = max_lrs[g] / o.div_factor();
    l.max_lr = max_lrs[g];
    l.min_lr = l.initial_lr / o.final_div_factor();
    l.max_momentum = max_momentums[g];
    l.base_momentum = base_momentums[g];
    levels_.push_back(l);
    // The schedule starts at max_lr / div_factor, whatever the group's lr was.
    groups[g].initial_lr() = l.initial_lr;
    base_lrs_[g] = l.initial_lr;
    if (cycle_momentum_) momentum_of(g) = l.max_momentum;
  }
  initial_step();
}

double& OneCycleLR::momentum_of(size_t g) {
  return *optimizer_.param_groups()[g].options().find_number(momentum_name_);
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (strategy_ == AnnealStrategy::Linear) return (end - start) * pct + start;
  const double cos_out = std::cos(std::numbers::pi * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

std::vector<double> OneCycleLR::compute_lrs() {
  EMBER_CHECK(last_epoch_ <= total_steps_, "OneCycleLR: tried to step ", last_epoch_ + 1,
              " times; the schedule has total_steps ", total_steps_);
  const double step = static_cast<double>(last_epoch_);
  std::vector<double> lrs;
  for (size_t g = 0; g < levels_.size(); ++g) {
    double start_step = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (step <= phase.end_step || i == phases_.size() - 1) {
        const double pct = (step - start_step) / (phase.end_step - start_step);
        lrs.push_back(anneal(levels_[g].at(phase.start_lr), levels_[g].at(phase.end_lr), pct));
        if (cycle_momentum_) {
          momentum_of(g) = anneal(levels_[g].at(phase.start_momentum), levels_[g].at(phase.end_momentum), pct);
        }
        break;
      }
      start_step = phase.end_step;
    }
  }
  return lrs;
}

}  // namespace ember::optim
