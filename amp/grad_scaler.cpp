// GradScaler: dynamic loss scaling for float16 training (include/ember/amp.h).
#include <cmath>

#include "ember/amp.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "ember/optim/optimizer.h"

namespace ember::amp {

GradScaler::GradScaler(GradScalerOptions options) : options_(options), scale_(options.init_scale) {
  EMBER_CHECK(options.init_scale > 0 && std::isfinite(options.init_scale),
              "GradScaler: init_scale must be positive and finite, got ", options.init_scale);
  EMBER_CHECK(options.growth_factor > 1, "GradScaler: growth_factor must be > 1, got ", options.growth_factor);
  EMBER_CHECK(options.backoff_factor > 0 && options.backoff_factor < 1,
              "GradScaler: backoff_factor must be in (0, 1), got ", options.backoff_factor);
  EMBER_CHECK(options.growth_interval > 0, "GradScaler: growth_interval must be positive, got ",
              options.growth_interval);
}

Tensor GradScaler::scale(const Tensor& loss) const { return options_.enabled ? loss * scale_ : loss; }

void GradScaler::unscale_(optim::Optimizer& optimizer) {
  if (!options_.enabled) return;
  EMBER_CHECK(!unscaled_, "GradScaler::unscale_: already called since the last update()");
  NoGradGuard no_grad;
  const double inv = 1.0 / scale_;
  bool found = false;
  for (optim::ParamGroup& group : optimizer.param_groups()) {
    for (Tensor& p : group.params()) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      g.mul_(inv);
      // One reduction per tensor: sum is inf/NaN exactly when an element is (or the sum overflows,
      // which is a gradient too large for the step anyway).
      if (!found && !std::isfinite(g.sum({}, false, DType::Float64).item<double>())) found = true;
    }
  }
  found_inf_ = found;
  unscaled_ = true;
}

bool GradScaler::step(optim::Optimizer& optimizer) {
  if (!options_.enabled) {
    optimizer.step();
    return true;
  }
  if (!unscaled_) unscale_(optimizer);
  if (found_inf_) return false;
  optimizer.step();
  return true;
}

void GradScaler::update() {
  if (!options_.enabled) return;
  EMBER_CHECK(unscaled_, "GradScaler::update: call step() (or unscale_()) first");
  if (found_inf_) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
  } else if (++growth_tracker_ == options_.growth_interval) {
    scale_ *= options_.growth_factor;
    growth_tracker_ = 0;
  }
  unscaled_ = false;
  found_inf_ = false;
}

TensorDict GradScaler::state_dict() const {
  return {{"scale", tensor({scale_}).view({})}, {"growth_tracker", tensor({growth_tracker_}).view({})}};
}

void GradScaler::load_state_dict(const TensorDict& state) {
  for (const char* key : {"scale", "growth_tracker"})
    EMBER_CHECK(state.count(key) && state.at(key).numel() == 1, "GradScaler::load_state_dict: expected a one-element '",
                key, "' entry");
  scale_ = state.at("scale").item<double>();
  growth_tracker_ = state.at("growth_tracker").item<int64_t>();
  EMBER_CHECK(scale_ > 0 && std::isfinite(scale_), "GradScaler::load_state_dict: scale must be positive, got ", scale_);
}

}  // namespace ember::amp
