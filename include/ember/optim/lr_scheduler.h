// Learning-rate schedulers, as torch.optim.lr_scheduler (1.13).
//
//   ember::optim::SGD opt(params, ember::optim::SGDOptions(0.1).momentum(0.9));
//   ember::optim::StepLR sched(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 90; ++epoch) {
//     train_one_epoch(opt);  // calls opt.step()
//     sched.step();
//   }
//
// Note [How a scheduler steps]
// A scheduler owns a counter, last_epoch (-1 before the constructor), and
// writes each group's lr (group.options().lr(...)). The constructor records
// each group's starting lr in group.initial_lr() unless a scheduler already
// did (base_lrs are those values), then performs the first step, which moves
// last_epoch to 0 and sets the lrs for step 0. Each step() adds one and sets
// the lrs from the scheduler's rule. The rules are PyTorch's "chainable"
// forms: most compute the new lr from the group's current lr (StepLR
// multiplies it by gamma at each multiple of step_size), in the same double
// arithmetic as PyTorch, so the values match torch's bit for bit.
// SequentialLR restarts a scheduler at its milestone with the closed form
// (the lr as a function of the step alone), as PyTorch does.
//
// state_dict() holds "kind.<Name>", "last_epoch", "step_count", "base_lrs"
// and "last_lr" (float64 [groups]); SequentialLR adds "schedulers.<i>.<key>"
// for each scheduler it runs. The configuration (step_size, gamma, ...)
// comes from the constructor: to resume, construct the scheduler as before,
// then load the optimiser's and the scheduler's state.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/optim/optimizer.h"
#include "ember/serialize.h"

namespace ember::optim {

class LRScheduler {
 public:
  virtual ~LRScheduler();
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  // Advances one step and sets every group's lr.
  void step();
  // The lrs of the last step, one per group.
  const std::vector<double>& get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  const std::string& name() const { return name_; }
  Optimizer& optimizer() const { return optimizer_; }

  virtual TensorDict state_dict() const;
  virtual void load_state_dict(const TensorDict& dict);
  // Sets every group's lr for the current step from the closed form (the
  // lr as a function of the step alone), not from the lr reached so far.
  // For a run resumed with a longer or shorter schedule: construct the
  // scheduler for the new length, load_state_dict(), then relayout(), and
  // the run goes on from where it stands on the new schedule (a chainable
  // cosine that already reached eta_min would otherwise stay there).
  // Returns false, changing nothing, for a scheduler without a closed form.
  virtual bool relayout();

 protected:
  // Records initial_lr and base_lrs; a derived constructor ends with initial_step().
  LRScheduler(Optimizer& optimizer, std::string name);
  // The first step (last_epoch -1 -> 0), as PyTorch's constructor does.
  void initial_step();
  // The lrs for last_epoch (already advanced); may read the groups' lrs.
  virtual std::vector<double> compute_lrs() = 0;
  // The lrs at last_epoch as a function of base_lrs and the step alone;
  // schedulers without one use compute_lrs().
  virtual std::optional<std::vector<double>> closed_form_lrs() const { return std::nullopt; }
  // The groups' current lrs.
  std::vector<double> group_lrs() const;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;  // steps taken, the constructor's first one included
  std::vector<double> last_lr_;

 private:
  friend class SequentialLR;
  // Jumps to `epoch` with the closed form (SequentialLR's milestones).
  void step_to(int64_t epoch);
  void set_lrs(const std::vector<double>& lrs);
  std::string name_;
};

// lr *= gamma every step_size steps.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);

 private:
  std::vector<double> compute_lrs() override;
  std::optional<std::vector<double>> closed_form_lrs() const override;
  int64_t step_size_;
  double gamma_;
};

// lr *= gamma at each milestone (a milestone listed k times multiplies by gamma^k).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 private:
  std::vector<double> compute_lrs() override;
  std::optional<std::vector<double>> closed_form_lrs() const override;
  std::vector<int64_t> milestones_;  // sorted
  double gamma_;
};

// lr *= gamma every step.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 private:
  std::vector<double> compute_lrs() override;
  std::optional<std::vector<double>> closed_form_lrs() const override;
  double gamma_;
};

// Cosine annealing from base_lr to eta_min over T_max steps (and back up
// over the next T_max, and so on):
//   lr_t = eta_min + (base_lr - eta_min) (1 + cos(pi t / T_max)) / 2,
// computed in PyTorch's recursive form.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 private:
  std::vector<double> compute_lrs() override;
  std::optional<std::vector<double>> closed_form_lrs() const override;
  int64_t t_max_;
  double eta_min_;
};

// Warm-up: the lr factor goes linearly from start_factor to end_factor over
// total_iters steps, then stays.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 private:
  std::vector<double> compute_lrs() override;
  std::optional<std::vector<double>> closed_form_lrs() const override;
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

// Runs schedulers[0] until milestones[0], then schedulers[1] (restarted at
// its step 0) until milestones[1], and so on. The schedulers must drive this
// optimiser and be constructed before the SequentialLR, e.g.
//   SequentialLR sched(opt, {std::make_shared<LinearLR>(opt, 0.1, 1.0, 5),
//                            std::make_shared<CosineAnnealingLR>(opt, 95)}, {5});
class SequentialLR : public LRScheduler {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);
  const std::vector<std::shared_ptr<LRScheduler>>& schedulers() const { return schedulers_; }

  TensorDict state_dict() const override;
  void load_state_dict(const TensorDict& dict) override;
  // Lays out again the scheduler whose turn it is.
  bool relayout() override;

 private:
  // The index of the scheduler whose turn it is at last_epoch.
  size_t turn() const;
  // Steps the scheduler whose turn it is and returns its lrs.
  std::vector<double> compute_lrs() override;
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
};

}  // namespace ember::optim
