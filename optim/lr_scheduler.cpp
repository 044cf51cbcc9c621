// The scheduler base and the schedulers with a closed form
// (include/ember/optim/lr_scheduler.h). Each rule is written in the same
// double arithmetic, in the same order, as torch.optim.lr_scheduler 1.13, so
// the lrs match torch's bit for bit (Python's `x ** n` is std::pow).
#include "ember/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "ember/error.h"
#include "optim/scheduler_state.h"

namespace ember::optim {

// ---- LRScheduler ----

LRScheduler::LRScheduler(Optimizer& optimizer, std::string name) : optimizer_(optimizer), name_(std::move(name)) {
  for (ParamGroup& g : optimizer_.param_groups()) {
    if (!g.initial_lr()) g.initial_lr() = g.options().lr();
    base_lrs_.push_back(*g.initial_lr());
  }
}

LRScheduler::~LRScheduler() = default;

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  ++step_count_;
  ++last_epoch_;
  set_lrs(compute_lrs());
}

void LRScheduler::step_to(int64_t epoch) {
  ++step_count_;
  last_epoch_ = epoch;
  std::optional<std::vector<double>> lrs = closed_form_lrs();
  set_lrs(lrs ? *lrs : compute_lrs());
}

bool LRScheduler::relayout() {
  std::optional<std::vector<double>> lrs = closed_form_lrs();
  if (lrs) set_lrs(*lrs);
  return lrs.has_value();
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  std::vector<ParamGroup>& groups = optimizer_.param_groups();
  EMBER_CHECK(groups.size() == base_lrs_.size() && lrs.size() == groups.size(), name_, ": the optimiser has ",
              groups.size(), " parameter groups, but the scheduler was made for ", base_lrs_.size(),
              " (groups added after the scheduler are not scheduled)");
  for (size_t i = 0; i < groups.size(); ++i) groups[i].options().lr(lrs[i]);
  last_lr_ = lrs;
}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (const ParamGroup& g : optimizer_.param_groups()) lrs.push_back(g.options().lr());
  return lrs;
}

TensorDict LRScheduler::state_dict() const {
  return {{"kind." + name_, int_entry(1)},
          {"last_epoch", int_entry(last_epoch_)},
          {"step_count", int_entry(step_count_)},
          {"base_lrs", numbers_entry(base_lrs_)},
          {"last_lr", numbers_entry(last_lr_)}};
}

void LRScheduler::load_state_dict(const TensorDict& dict) {
  const std::string who = name_ + "::load_state_dict";
  check_kind(dict, name_, who);
  const size_t groups = base_lrs_.size();
  std::vector<double> base_lrs = read_numbers_entry(dict, "base_lrs", groups, who);
  std::vector<double> last_lr = read_numbers_entry(dict, "last_lr", groups, who);
  const int64_t last_epoch = read_int_entry(dict, "last_epoch", who, -1);
  const int64_t step_count = read_int_entry(dict, "step_count", who, 0);
  base_lrs_ = std::move(base_lrs);
  last_lr_ = std::move(last_lr);
  last_epoch_ = last_epoch;
  step_count_ = step_count;
}

// ---- StepLR ----

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer, "StepLR"), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK(step_size >= 1, "StepLR: step_size must be >= 1, got ", step_size);
  initial_step();
}

std::vector<double> StepLR::compute_lrs() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

std::optional<std::vector<double>> StepLR::closed_form_lrs() const {
  std::vector<double> lrs;
  // Python's // floors; last_epoch >= 0 here, where C++'s / agrees.
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_ / step_size_)));
  return lrs;
}

// ---- MultiStepLR ----

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer, "MultiStepLR"), milestones_(std::move(milestones)), gamma_(gamma) {
  std::sort(milestones_.begin(), milestones_.end());
  initial_step();
}

std::vector<double> MultiStepLR::compute_lrs() {
  std::vector<double> lrs = group_lrs();
  const auto hits = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (hits == 0) return lrs;
  for (double& lr : lrs) lr = lr * std::pow(gamma_, static_cast<double>(hits));
  return lrs;
}

std::optional<std::vector<double>> MultiStepLR::closed_form_lrs() const {
  const auto passed = std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) - milestones_.begin();
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(passed)));
  return lrs;
}

// ---- ExponentialLR ----

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer, "ExponentialLR"), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::compute_lrs() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

std::optional<std::vector<double>> ExponentialLR::closed_form_lrs() const {
  std::vector<double> lrs;
  for (double base : base_lrs_) lrs.push_back(base * std::pow(gamma_, static_cast<double>(last_epoch_)));
  return lrs;
}

// ---- CosineAnnealingLR ----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer, "CosineAnnealingLR"), t_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK(T_max >= 1, "CosineAnnealingLR: T_max must be >= 1, got ", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::compute_lrs() {
  constexpr double pi = std::numbers::pi;
  const double t = static_cast<double>(last_epoch_), t_max = static_cast<double>(t_max_);
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  if (step_count_ == 1 && last_epoch_ > 0) {  // resumed at a later step: the closed form
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(t * pi / t_max)) / 2;
    return lrs;
  }
  if ((last_epoch_ - 1 - t_max_) % (2 * t_max_) == 0) {  // the step after a minimum: climbing again
    for (size_t i = 0; i < lrs.size(); ++i)
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / t_max)) / 2;
    return lrs;
  }
  for (double& lr : lrs) {
    lr = (1 + std::cos(pi * t / t_max)) / (1 + std::cos(pi * (t - 1) / t_max)) * (lr - eta_min_) + eta_min_;
  }
  return lrs;
}

std::optional<std::vector<double>> CosineAnnealingLR::closed_form_lrs() const {
  constexpr double pi = std::numbers::pi;
  std::vector<double> lrs;
  for (double base : base_lrs_) {
    lrs.push_back(eta_min_ + (base - eta_min_) *
                                 (1 + std::cos(pi * static_cast<double>(last_epoch_) / static_cast<double>(t_max_))) /
                                 2);
  }
  return lrs;
}

// ---- LinearLR ----

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer, "LinearLR"),
      start_factor_(start_factor),
      end_factor_(end_factor),
      total_iters_(total_iters) {
  EMBER_CHECK(start_factor > 0 && start_factor <= 1, "LinearLR: start_factor must be in (0, 1], got ", start_factor);
  EMBER_CHECK(end_factor >= 0 && end_factor <= 1, "LinearLR: end_factor must be in [0, 1], got ", end_factor);
  EMBER_CHECK(total_iters >= 1, "LinearLR: total_iters must be >= 1, got ", total_iters);
  initial_step();
}

std::vector<double> LinearLR::compute_lrs() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr = lr * start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double slope = end_factor_ - start_factor_;
  const double factor =
      1. + slope / (static_cast<double>(total_iters_) * start_factor_ + static_cast<double>(last_epoch_ - 1) * slope);
  for (double& lr : lrs) lr = lr * factor;
  return lrs;
}

std::optional<std::vector<double>> LinearLR::closed_form_lrs() const {
  const double done = static_cast<double>(std::min(total_iters_, last_epoch_));
  std::vector<double> lrs;
  for (double base : base_lrs_) {
    lrs.push_back(base * (start_factor_ + (end_factor_ - start_factor_) * done / static_cast<double>(total_iters_)));
  }
  return lrs;
}

}  // namespace ember::optim
