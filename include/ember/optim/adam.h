// Adam, as torch.optim.Adam (1.13), with L2 weight decay added to the
// gradient, amsgrad and maximize:
//   g = grad (negated when maximize) + weight_decay * p
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   vmax = max(vmax, v) (amsgrad: v below is vmax)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// t counts this parameter's updates. State per parameter: "step",
// "exp_avg", "exp_avg_sq", and "max_exp_avg_sq" (amsgrad).
// AdamW (ember/optim/adamw.h) is the same with decoupled weight decay.
#pragma once

#include <tuple>

#include "ember/optim/optimizer.h"

namespace ember::optim {

// (beta1, beta2) of Adam and AdamW.
using Betas = std::tuple<double, double>;

class AdamOptions : public OptimizerOptions {
 public:
  explicit AdamOptions(double lr = 1e-3) : OptimizerOptions(lr) {}
  EMBER_OPTIM_LR_SETTER(AdamOptions)
  EMBER_OPTIM_OPTION(AdamOptions, Betas, betas, Betas(0.9, 0.999))
  EMBER_OPTIM_OPTION(AdamOptions, double, eps, 1e-8)
  EMBER_OPTIM_OPTION(AdamOptions, double, weight_decay, 0)
  EMBER_OPTIM_OPTION(AdamOptions, bool, amsgrad, false)
  EMBER_OPTIM_OPTION(AdamOptions, bool, maximize, false)
  std::unique_ptr<OptimizerOptions> clone() const override;
  // The betas appear as "beta1" and "beta2".
  std::vector<OptionField> fields() override;
  void validate(std::string_view optimizer) const override;
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = AdamOptions());
  Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults = AdamOptions());

 private:
  void step_group(ParamGroup& group) override;
};

}  // namespace ember::optim
