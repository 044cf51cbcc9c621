// RMSprop (include/ember/optim/rmsprop.h): one _fused_rmsprop_ call per group.
#include "ember/optim/rmsprop.h"

#include "core/op_decls_optim.h"
#include "ember/error.h"
#include "optim/param_batch.h"

namespace ember::optim {

std::unique_ptr<OptimizerOptions> RMSpropOptions::clone() const { return std::make_unique<RMSpropOptions>(*this); }

std::vector<OptionField> RMSpropOptions::fields() {
  return {{"lr", &lr_},
          {"alpha", &alpha_},
          {"eps", &eps_},
          {"weight_decay", &weight_decay_},
          {"momentum", &momentum_},
          {"centered", &centered_},
          {"maximize", &maximize_}};
}

void RMSpropOptions::validate(std::string_view optimizer) const {
  EMBER_CHECK(lr_ >= 0, optimizer, ": invalid learning rate ", lr_, " (expected lr >= 0)");
  EMBER_CHECK(eps_ >= 0, optimizer, ": invalid eps ", eps_, " (expected eps >= 0)");
  EMBER_CHECK(momentum_ >= 0, optimizer, ": invalid momentum ", momentum_, " (expected momentum >= 0)");
  EMBER_CHECK(weight_decay_ >= 0, optimizer, ": invalid weight_decay ", weight_decay_, " (expected >= 0)");
  EMBER_CHECK(alpha_ >= 0, optimizer, ": invalid alpha ", alpha_, " (expected alpha >= 0)");
}

RMSprop::RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults)
    : RMSprop(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}

RMSprop::RMSprop(std::vector<ParamGroup> groups, const RMSpropOptions& defaults)
    : Optimizer("RMSprop", defaults.clone(), {"square_avg", "momentum_buffer", "grad_avg"}, /*counts_steps=*/true) {
  add_param_groups(std::move(groups));
}

void RMSprop::step_group(ParamGroup& group) {
  const auto& o = static_cast<const RMSpropOptions&>(group.options());
  ParamBatch batch = params_with_grad(group);
  if (batch.empty()) return;
  op::_fused_rmsprop_.call(batch.params, batch.grads, batch.buffers("square_avg"),
                           o.centered() ? batch.buffers("grad_avg") : TensorList{},
                           o.momentum() > 0 ? batch.buffers("momentum_buffer") : TensorList{}, o.lr(), o.alpha(),
                           o.eps(), o.weight_decay(), o.momentum(), o.centered(), o.maximize());
  batch.finish(/*count_step=*/true);
}

}  // namespace ember::optim
