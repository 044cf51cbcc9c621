// AdamW, as torch.optim.AdamW (1.13): Adam (ember/optim/adam.h) with
// decoupled weight decay. Each step first shrinks the parameter,
//   p *= 1 - lr * weight_decay,
// then applies Adam's update with the plain gradient. weight_decay defaults
// to 1e-2. State per parameter: "step", "exp_avg", "exp_avg_sq", and
// "max_exp_avg_sq" (amsgrad).
#pragma once

#include "ember/optim/adam.h"

namespace ember::optim {

class AdamWOptions : public OptimizerOptions {
 public:
  explicit AdamWOptions(double lr = 1e-3) : OptimizerOptions(lr) {}
  EMBER_OPTIM_LR_SETTER(AdamWOptions)
  EMBER_OPTIM_OPTION(AdamWOptions, Betas, betas, Betas(0.9, 0.999))
  EMBER_OPTIM_OPTION(AdamWOptions, double, eps, 1e-8)
  EMBER_OPTIM_OPTION(AdamWOptions, double, weight_decay, 1e-2)
  EMBER_OPTIM_OPTION(AdamWOptions, bool, amsgrad, false)
  EMBER_OPTIM_OPTION(AdamWOptions, bool, maximize, false)
  std::unique_ptr<OptimizerOptions> clone() const override;
  // The betas appear as "beta1" and "beta2".
  std::vector<OptionField> fields() override;
  void validate(std::string_view optimizer) const override;
};

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Tensor> params, const AdamWOptions& defaults = AdamWOptions());
  AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults = AdamWOptions());

 private:
  void step_group(ParamGroup& group) override;
};

}  // namespace ember::optim
