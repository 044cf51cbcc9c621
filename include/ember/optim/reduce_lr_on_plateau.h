// ReduceLROnPlateau, as torch.optim.lr_scheduler.ReduceLROnPlateau (1.13):
// multiplies the lrs by `factor` once a metric has stopped improving for
// more than `patience` steps.
//
//   ReduceLROnPlateau sched(opt, ReduceLROnPlateauOptions().factor(0.5).patience(2));
//   for (...) { train(); sched.step(validation_loss); }
//
// A metric improves on the best so far when it is below best * (1 - threshold)
// (mode Min, threshold_mode Rel), below best - threshold (Min, Abs), above
// best * (1 + threshold) (Max, Rel) or above best + threshold (Max, Abs).
// After a reduction, `cooldown` steps pass before bad steps count again. An
// lr never drops below its group's min_lr, and a change smaller than eps is
// not made. state_dict(): "kind.ReduceLROnPlateau", "last_epoch", "best",
// "num_bad_epochs", "cooldown_counter", "last_lr".
#pragma once

#include <vector>

#include "ember/optim/optimizer.h"
#include "ember/serialize.h"

namespace ember::optim {

enum class PlateauMode { Min, Max };
enum class ThresholdMode { Rel, Abs };

class ReduceLROnPlateauOptions {
 public:
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, PlateauMode, mode, PlateauMode::Min)
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, double, factor, 0.1)
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, int64_t, patience, 10)
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, double, threshold, 1e-4)
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, ThresholdMode, threshold_mode, ThresholdMode::Rel)
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, int64_t, cooldown, 0)
  // One value for every group, or one per group.
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, std::vector<double>, min_lr, {0.0})
  EMBER_OPTIM_OPTION(ReduceLROnPlateauOptions, double, eps, 1e-8)
};

class ReduceLROnPlateau {
 public:
  explicit ReduceLROnPlateau(Optimizer& optimizer, const ReduceLROnPlateauOptions& options = {});

  // One step with the metric of this epoch (a validation loss, say).
  void step(double metric);
  // The groups' lrs after the last step.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  bool in_cooldown() const { return cooldown_counter_ > 0; }

  TensorDict state_dict() const;
  void load_state_dict(const TensorDict& dict);

 private:
  bool is_better(double metric) const;
  void reduce_lrs();

  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lr_;
};

}  // namespace ember::optim
