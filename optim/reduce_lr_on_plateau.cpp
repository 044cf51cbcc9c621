// ReduceLROnPlateau (include/ember/optim/reduce_lr_on_plateau.h), with the
// comparisons of torch's (1.13).
#include "ember/optim/reduce_lr_on_plateau.h"

#include <algorithm>
#include <limits>

#include "ember/error.h"
#include "optim/scheduler_state.h"

namespace ember::optim {

ReduceLROnPlateau::ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options)
    : optimizer_(optimizer), options_(options) {
  const size_t groups = optimizer.param_groups().size();
  EMBER_CHECK(options.factor() < 1.0, "ReduceLROnPlateau: factor should be < 1.0, got ", options.factor());
  EMBER_CHECK(options.patience() >= 0 && options.cooldown() >= 0,
              "ReduceLROnPlateau: patience and cooldown must be >= 0, got ", options.patience(), " and ",
              options.cooldown());
  const std::vector<double>& min_lr = options.min_lr();
  EMBER_CHECK(min_lr.size() == 1 || min_lr.size() == groups, "ReduceLROnPlateau: expected 1 or ", groups,
              " min_lr values (one per parameter group), got ", min_lr.size());
  min_lrs_ = min_lr.size() == 1 ? std::vector<double>(groups, min_lr[0]) : min_lr;
  // The worst value for the mode, so that the first metric is an improvement.
  best_ = options.mode() == PlateauMode::Min ? std::numeric_limits<double>::infinity()
                                             : -std::numeric_limits<double>::infinity();
  for (const ParamGroup& g : optimizer.param_groups()) last_lr_.push_back(g.options().lr());
}

bool ReduceLROnPlateau::is_better(double metric) const {
  const double threshold = options_.threshold();
  const bool rel = options_.threshold_mode() == ThresholdMode::Rel;
  if (options_.mode() == PlateauMode::Min) return rel ? metric < best_ * (1. - threshold) : metric < best_ - threshold;
  return rel ? metric > best_ * (threshold + 1.) : metric > best_ + threshold;
}

void ReduceLROnPlateau::reduce_lrs() {
  std::vector<ParamGroup>& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double old_lr = groups[i].options().lr();
    const double new_lr = std::max(old_lr * options_.factor(), min_lrs_[i]);
    if (old_lr - new_lr > options_.eps()) groups[i].options().lr(new_lr);
  }
}

void ReduceLROnPlateau::step(double metric) {
  EMBER_CHECK(optimizer_.param_groups().size() == min_lrs_.size(), "ReduceLROnPlateau: the optimiser has ",
              optimizer_.param_groups().size(), " parameter groups, but the scheduler was made for ", min_lrs_.size(),
              " (groups added after the scheduler are not scheduled)");
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (in_cooldown()) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad epochs during the cooldown do not count
  }
  if (num_bad_epochs_ > options_.patience()) {
    reduce_lrs();
    cooldown_counter_ = options_.cooldown();
    num_bad_epochs_ = 0;
  }
  last_lr_.clear();
  for (const ParamGroup& g : optimizer_.param_groups()) last_lr_.push_back(g.options().lr());
}

TensorDict ReduceLROnPlateau::state_dict() const {
  return {{"kind.ReduceLROnPlateau", int_entry(1)},
          {"last_epoch", int_entry(last_epoch_)},
          {"best", number_entry(best_)},
          {"num_bad_epochs", int_entry(num_bad_epochs_)},
          {"cooldown_counter", int_entry(cooldown_counter_)},
          {"last_lr", numbers_entry(last_lr_)}};
}

void ReduceLROnPlateau::load_state_dict(const TensorDict& dict) {
  const std::string who = "ReduceLROnPlateau::load_state_dict";
  check_kind(dict, "ReduceLROnPlateau", who);
  std::vector<double> last_lr = read_numbers_entry(dict, "last_lr", min_lrs_.size(), who);
  const int64_t last_epoch = read_int_entry(dict, "last_epoch", who, 0);
  const double best = read_number_entry(dict, "best", who);
  const int64_t num_bad_epochs = read_int_entry(dict, "num_bad_epochs", who, 0);
  const int64_t cooldown_counter = read_int_entry(dict, "cooldown_counter", who, 0);
  last_lr_ = std::move(last_lr);
  last_epoch_ = last_epoch;
  best_ = best;
  num_bad_epochs_ = num_bad_epochs;
  cooldown_counter_ = cooldown_counter;
}

}  // namespace ember::optim
