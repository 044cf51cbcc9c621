// Stochastic gradient descent with momentum, dampening, Nesterov momentum,
// weight decay and maximize, as torch.optim.SGD (1.13):
//   d = grad (negated when maximize) + weight_decay * p
//   buf = d at the first step, then momentum * buf + (1 - dampening) * d
//   d = d + momentum * buf (nesterov) or buf        (when momentum != 0)
//   p -= lr * d
// State per parameter: "momentum_buffer" (when momentum != 0).
#pragma once

#include "ember/optim/optimizer.h"

namespace ember::optim {

class SGDOptions : public OptimizerOptions {
 public:
  explicit SGDOptions(double lr) : OptimizerOptions(lr) {}
  EMBER_OPTIM_LR_SETTER(SGDOptions)
  EMBER_OPTIM_OPTION(SGDOptions, double, momentum, 0)
  EMBER_OPTIM_OPTION(SGDOptions, double, dampening, 0)
  EMBER_OPTIM_OPTION(SGDOptions, double, weight_decay, 0)
  EMBER_OPTIM_OPTION(SGDOptions, bool, nesterov, false)
  EMBER_OPTIM_OPTION(SGDOptions, bool, maximize, false)
  std::unique_ptr<OptimizerOptions> clone() const override;
  std::vector<OptionField> fields() override;
  void validate(std::string_view optimizer) const override;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, const SGDOptions& defaults);
  SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults);

 private:
  void step_group(ParamGroup& group) override;
};

}  // namespace ember::optim
