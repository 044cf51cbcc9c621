// Adam and AdamW (include/ember/optim/adam.h, adamw.h): one _fused_adam_
// call per group; AdamW sets the op's `decoupled` flag.
#include "ember/optim/adam.h"

#include "core/op_decls_optim.h"
#include "ember/error.h"
#include "ember/optim/adamw.h"
#include "optim/param_batch.h"

namespace ember::optim {

namespace {

const std::vector<std::string> kAdamBuffers = {"exp_avg", "exp_avg_sq", "max_exp_avg_sq"};

void validate_adam(std::string_view optimizer, double lr, const Betas& betas, double eps, double weight_decay) {
  const auto [beta1, beta2] = betas;
  EMBER_CHECK(lr >= 0, optimizer, ": invalid learning rate ", lr, " (expected lr >= 0)");
  EMBER_CHECK(eps >= 0, optimizer, ": invalid eps ", eps, " (expected eps >= 0)");
  EMBER_CHECK(beta1 >= 0 && beta1 < 1, optimizer, ": invalid beta1 ", beta1, " (expected 0 <= beta1 < 1)");
  EMBER_CHECK(beta2 >= 0 && beta2 < 1, optimizer, ": invalid beta2 ", beta2, " (expected 0 <= beta2 < 1)");
  EMBER_CHECK(weight_decay >= 0, optimizer, ": invalid weight_decay ", weight_decay, " (expected >= 0)");
}

template <class Options>
void adam_step(ParamBatch batch, const Options& o, bool decoupled) {
  if (batch.empty()) return;
  const auto [beta1, beta2] = o.betas();
  op::_fused_adam_.call(batch.params, batch.grads, batch.buffers("exp_avg"), batch.buffers("exp_avg_sq"),
                        o.amsgrad() ? batch.buffers("max_exp_avg_sq") : TensorList{}, batch.next_steps(), o.lr(), beta1,
                        beta2, o.weight_decay(), o.eps(), o.amsgrad(), o.maximize(), decoupled);
  batch.finish(/*count_step=*/true);
}

}  // namespace

// ---- Adam ----

std::unique_ptr<OptimizerOptions> AdamOptions::clone() const { return std::make_unique<AdamOptions>(*this); }

std::vector<OptionField> AdamOptions::fields() {
  return {{"lr", &lr_},
          {"beta1", &std::get<0>(betas_)},
          {"beta2", &std::get<1>(betas_)},
          {"eps", &eps_},
          {"weight_decay", &weight_decay_},
          {"amsgrad", &amsgrad_},
          {"maximize", &maximize_}};
}

void AdamOptions::validate(std::string_view optimizer) const {
  validate_adam(optimizer, lr_, betas_, eps_, weight_decay_);
}

Adam::Adam(std::vector<Tensor> params, const AdamOptions& defaults)
    : Adam(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}

Adam::Adam(std::vector<ParamGroup> groups, const AdamOptions& defaults)
    : Optimizer("Adam", defaults.clone(), kAdamBuffers, /*counts_steps=*/true) {
  add_param_groups(std::move(groups));
}

void Adam::step_group(ParamGroup& group) {
  adam_step(params_with_grad(group), static_cast<const AdamOptions&>(group.options()), /*decoupled=*/false);
}

// ---- AdamW ----

std::unique_ptr<OptimizerOptions> AdamWOptions::clone() const { return std::make_unique<AdamWOptions>(*this); }

std::vector<OptionField> AdamWOptions::fields() {
  return {{"lr", &lr_},
          {"beta1", &std::get<0>(betas_)},
          {"beta2", &std::get<1>(betas_)},
          {"eps", &eps_},
          {"weight_decay", &weight_decay_},
          {"amsgrad", &amsgrad_},
          {"maximize", &maximize_}};
}

void AdamWOptions::validate(std::string_view optimizer) const {
  validate_adam(optimizer, lr_, betas_, eps_, weight_decay_);
}

AdamW::AdamW(std::vector<Tensor> params, const AdamWOptions& defaults)
    : AdamW(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}

AdamW::AdamW(std::vector<ParamGroup> groups, const AdamWOptions& defaults)
    : Optimizer("AdamW", defaults.clone(), kAdamBuffers, /*counts_steps=*/true) {
  add_param_groups(std::move(groups));
}

void AdamW::step_group(ParamGroup& group) {
  adam_step(params_with_grad(group), static_cast<const AdamWOptions&>(group.options()), /*decoupled=*/true);
}

}  // namespace ember::optim
