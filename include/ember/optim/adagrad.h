// Adagrad, as torch.optim.Adagrad (1.13), dense gradients:
//   g = grad (negated when maximize) + weight_decay * p
//   sum += g^2;  p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps)
// t counts this parameter's updates. State per parameter, created with the
// optimiser (as PyTorch does): "step" = 0 and "sum" = initial_accumulator_value.
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

class AdagradOptions : public OptimizerOptions {
 public:
  explicit AdagradOptions(double lr = 1e-2) : OptimizerOptions(lr) {}
  EMBER_OPTIM_LR_SETTER(AdagradOptions)
  EMBER_OPTIM_OPTION(AdagradOptions, double, lr_decay, 0)
  EMBER_OPTIM_OPTION(AdagradOptions, double, weight_decay, 0)
  EMBER_OPTIM_OPTION(AdagradOptions, double, initial_accumulator_value, 0)
  EMBER_OPTIM_OPTION(AdagradOptions, double, eps, 1e-10)
  EMBER_OPTIM_OPTION(AdagradOptions, bool, maximize, false)
  std::unique_ptr<OptimizerOptions> clone() const override;
  std::vector<OptionField> fields() override;
  void validate(std::string_view optimizer) const override;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults = AdagradOptions());
  Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults = AdagradOptions());

 private:
  void step_group(ParamGroup& group) override;
  void init_param_state(ParamState& state, const Tensor& param, const OptimizerOptions& options) override;
};

}  // namespace ember::optim
