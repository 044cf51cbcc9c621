// Adagrad (include/ember/optim/adagrad.h): one _fused_adagrad_ call per group.
#include "ember/optim/adagrad.h"

#include "core/op_decls_optim.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "optim/param_batch.h"

namespace ember::optim {

std::unique_ptr<OptimizerOptions> AdagradOptions::clone() const { return std::make_unique<AdagradOptions>(*this); }

std::vector<OptionField> AdagradOptions::fields() {
  return {{"lr", &lr_},
          {"lr_decay", &lr_decay_},
          {"weight_decay", &weight_decay_},
          {"initial_accumulator_value", &initial_accumulator_value_},
          {"eps", &eps_},
          {"maximize", &maximize_}};
}

void AdagradOptions::validate(std::string_view optimizer) const {
  EMBER_CHECK(lr_ >= 0, optimizer, ": invalid learning rate ", lr_, " (expected lr >= 0)");
  EMBER_CHECK(lr_decay_ >= 0, optimizer, ": invalid lr_decay ", lr_decay_, " (expected >= 0)");
  EMBER_CHECK(weight_decay_ >= 0, optimizer, ": invalid weight_decay ", weight_decay_, " (expected >= 0)");
  EMBER_CHECK(initial_accumulator_value_ >= 0, optimizer, ": invalid initial_accumulator_value ",
              initial_accumulator_value_, " (expected >= 0)");
  EMBER_CHECK(eps_ >= 0, optimizer, ": invalid eps ", eps_, " (expected eps >= 0)");
}

Adagrad::Adagrad(std::vector<Tensor> params, const AdagradOptions& defaults)
    : Adagrad(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}

Adagrad::Adagrad(std::vector<ParamGroup> groups, const AdagradOptions& defaults)
    : Optimizer("Adagrad", defaults.clone(), {"sum"}, /*counts_steps=*/true) {
  add_param_groups(std::move(groups));
}

void Adagrad::init_param_state(ParamState& state, const Tensor& param, const OptimizerOptions& options) {
  const double init = static_cast<const AdagradOptions&>(options).initial_accumulator_value();
  state.step = 0;
  state.buffers["sum"] = full(param.sizes(), init, param.options());
}

void Adagrad::step_group(ParamGroup& group) {
  const auto& o = static_cast<const AdagradOptions&>(group.options());
  ParamBatch batch = params_with_grad(group);
  if (batch.empty()) return;
  op::_fused_adagrad_.call(batch.params, batch.grads, batch.buffers("sum"), batch.next_steps(), o.lr(), o.lr_decay(),
                           o.weight_decay(), o.eps(), o.maximize());
  batch.finish(/*count_step=*/true);
}

}  // namespace ember::optim
