// RMSprop, as torch.optim.RMSprop (1.13):
//   g = grad (negated when maximize) + weight_decay * p
//   s = alpha s + (1 - alpha) g^2
//   centered: a = alpha a + (1 - alpha) g, avg = sqrt(s - a^2) + eps; else avg = sqrt(s) + eps
//   momentum > 0: buf = momentum buf + g / avg, p -= lr buf;  else p -= lr g / avg
// State per parameter: "step", "square_avg", "momentum_buffer" (momentum > 0),
// "grad_avg" (centered).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

class RMSpropOptions : public OptimizerOptions {
 public:
  explicit RMSpropOptions(double lr = 1e-2) : OptimizerOptions(lr) {}
  EMBER_OPTIM_LR_SETTER(RMSpropOptions)
  EMBER_OPTIM_OPTION(RMSpropOptions, double, alpha, 0.99)
  EMBER_OPTIM_OPTION(RMSpropOptions, double, eps, 1e-8)
  EMBER_OPTIM_OPTION(RMSpropOptions, double, weight_decay, 0)
  EMBER_OPTIM_OPTION(RMSpropOptions, double, momentum, 0)
  EMBER_OPTIM_OPTION(RMSpropOptions, bool, centered, false)
  EMBER_OPTIM_OPTION(RMSpropOptions, bool, maximize, false)
  std::unique_ptr<OptimizerOptions> clone() const override;
  std::vector<OptionField> fields() override;
  void validate(std::string_view optimizer) const override;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults = RMSpropOptions());
  RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults = RMSpropOptions());

 private:
  void step_group(ParamGroup& group) override;
};

}  // namespace ember::optim
