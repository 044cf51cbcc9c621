// SequentialLR (include/ember/optim/lr_scheduler.h): hands the steps to one
// scheduler after another, as torch's SequentialLR (1.13).
#include <algorithm>
#include <charconv>

#include "ember/error.h"
#include "ember/optim/lr_scheduler.h"

namespace ember::optim {

SequentialLR::SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
                           std::vector<int64_t> milestones)
    : LRScheduler(optimizer, "SequentialLR"), schedulers_(std::move(schedulers)), milestones_(std::move(milestones)) {
  EMBER_CHECK(!schedulers_.empty(), "SequentialLR: expected at least one scheduler");
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    EMBER_CHECK(schedulers_[i] != nullptr, "SequentialLR: scheduler ", i, " is null");
    EMBER_CHECK(&schedulers_[i]->optimizer_ == &optimizer, "SequentialLR: scheduler ", i, " (", schedulers_[i]->name(),
                ") drives another optimiser; all must drive this one");
  }
  EMBER_CHECK(milestones_.size() == schedulers_.size() - 1, "SequentialLR: expected one milestone fewer than the ",
              schedulers_.size(), " schedulers, got ", milestones_.size(), " milestones");
  EMBER_CHECK(std::is_sorted(milestones_.begin(), milestones_.end()), "SequentialLR: milestones must be increasing");
  // Each scheduler's constructor took its first step; undo them all, back to
  // the groups' initial lrs, and take the first scheduler's first step again.
  last_epoch_ = 0;
  for (ParamGroup& g : optimizer.param_groups()) g.options().lr(*g.initial_lr());
  for (const std::shared_ptr<LRScheduler>& s : schedulers_) --s->last_epoch_;
  schedulers_[0]->initial_step();
  last_lr_ = schedulers_[0]->get_last_lr();
}

size_t SequentialLR::turn() const {
  return static_cast<size_t>(std::upper_bound(milestones_.begin(), milestones_.end(), last_epoch_) -
                             milestones_.begin());
}

std::vector<double> SequentialLR::compute_lrs() {
  const size_t now = turn();
  LRScheduler& s = *schedulers_[now];
  if (now > 0 && milestones_[now - 1] == last_epoch_)
    s.step_to(0);
  else
    s.step();
  return s.get_last_lr();
}

bool SequentialLR::relayout() {
  LRScheduler& s = *schedulers_[turn()];
  if (!s.relayout()) return false;
  last_lr_ = s.get_last_lr();
  return true;
}

TensorDict SequentialLR::state_dict() const {
  TensorDict d = LRScheduler::state_dict();
  for (size_t i = 0; i < schedulers_.size(); ++i) {
    for (auto& [key, value] : schedulers_[i]->state_dict()) d["schedulers." + std::to_string(i) + "." + key] = value;
  }
  return d;
}

void SequentialLR::load_state_dict(const TensorDict& dict) {
  std::vector<TensorDict> parts(schedulers_.size());
  TensorDict own;
  for (const auto& [key, value] : dict) {
    if (key.rfind("schedulers.", 0) != 0) {
      own[key] = value;
      continue;
    }
    constexpr size_t kPrefix = 11;  // "schedulers."
    const size_t dot = key.find('.', kPrefix);
    size_t i = parts.size();
    const char* first = key.data() + kPrefix;
    const char* last = key.data() + std::min(dot, key.size());
    const auto [end, ec] = std::from_chars(first, last, i);
    EMBER_CHECK(ec == std::errc() && end == last && dot != std::string::npos && i < parts.size(),
                "SequentialLR::load_state_dict: unexpected key '", key, "' (this SequentialLR runs ", parts.size(),
                " schedulers)");
    parts[i][key.substr(dot + 1)] = value;
  }
  // Each scheduler checks its own part as it loads; checking the kinds up
  // front makes the usual mistake (another schedule) fail before any loads.
  for (size_t i = 0; i < parts.size(); ++i) {
    EMBER_CHECK(parts[i].count("kind." + schedulers_[i]->name()), "SequentialLR::load_state_dict: scheduler ", i,
                " is a ", schedulers_[i]->name(), ", but the state dict has no matching 'schedulers.", i, ".kind.",
                schedulers_[i]->name(), "'");
  }
  LRScheduler::load_state_dict(own);
  for (size_t i = 0; i < parts.size(); ++i) schedulers_[i]->load_state_dict(parts[i]);
}

}  // namespace ember::optim
