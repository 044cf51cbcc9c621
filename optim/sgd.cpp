// SGD (include/ember/optim/sgd.h): one _fused_sgd_ call per group.
#include "ember/optim/sgd.h"

#include "core/op_decls_optim.h"
#include "ember/error.h"
#include "optim/param_batch.h"

namespace ember::optim {

std::unique_ptr<OptimizerOptions> SGDOptions::clone() const { return std::make_unique<SGDOptions>(*this); }

std::vector<OptionField> SGDOptions::fields() {
  return {{"lr", &lr_},
          {"momentum", &momentum_},
          {"dampening", &dampening_},
          {"weight_decay", &weight_decay_},
          {"nesterov", &nesterov_},
          {"maximize", &maximize_}};
}

void SGDOptions::validate(std::string_view optimizer) const {
  EMBER_CHECK(lr_ >= 0, optimizer, ": invalid learning rate ", lr_, " (expected lr >= 0)");
  EMBER_CHECK(momentum_ >= 0, optimizer, ": invalid momentum ", momentum_, " (expected momentum >= 0)");
  EMBER_CHECK(weight_decay_ >= 0, optimizer, ": invalid weight_decay ", weight_decay_, " (expected >= 0)");
  EMBER_CHECK(!nesterov_ || (momentum_ > 0 && dampening_ == 0), optimizer,
              ": Nesterov momentum requires a momentum > 0 and zero dampening (got momentum ", momentum_,
              ", dampening ", dampening_, ")");
}

SGD::SGD(std::vector<Tensor> params, const SGDOptions& defaults)
    : SGD(std::vector<ParamGroup>{ParamGroup(std::move(params))}, defaults) {}

SGD::SGD(std::vector<ParamGroup> groups, const SGDOptions& defaults)
    : Optimizer("SGD", defaults.clone(), {"momentum_buffer"}, /*counts_steps=*/false) {
  add_param_groups(std::move(groups));
}

void SGD::step_group(ParamGroup& group) {
  const auto& o = static_cast<const SGDOptions&>(group.options());
  ParamBatch batch = params_with_grad(group);
  if (batch.empty()) return;
  TensorList buffers;
  std::vector<int64_t> new_buffers;
  if (o.momentum() != 0) {
    for (const ParamState* s : batch.states) new_buffers.push_back(s->buffers.count("momentum_buffer") ? 0 : 1);
    buffers = batch.buffers("momentum_buffer");
  }
  op::_fused_sgd_.call(batch.params, batch.grads, buffers, new_buffers, o.lr(), o.momentum(), o.dampening(),
                       o.weight_decay(), o.nesterov(), o.maximize());
  batch.finish(/*count_step=*/false);
}

}  // namespace ember::optim
