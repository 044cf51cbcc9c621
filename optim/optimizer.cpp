// The optimiser base: groups, step, zero_grad, and the batches the fused
// updates take (Note [Optimiser groups, state and fused steps] in
// include/ember/optim/optimizer.h). State dicts are in state_dict.cpp.
#include "ember/optim/optimizer.h"

#include <optional>
#include <typeinfo>
#include <unordered_set>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "ember/profiler.h"
#include "optim/param_batch.h"

namespace ember::optim {

double* OptimizerOptions::find_number(std::string_view name) {
  for (const OptionField& f : fields()) {
    if (f.name == name && f.number) return f.number;
  }
  return nullptr;
}

// ---- ParamGroup ----

ParamGroup::ParamGroup(const ParamGroup& other)
    : params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr),
      initial_lr_(other.initial_lr_) {}

ParamGroup& ParamGroup::operator=(const ParamGroup& other) {
  if (this != &other) *this = ParamGroup(other);
  return *this;
}

OptimizerOptions& ParamGroup::options() {
  EMBER_CHECK(options_ != nullptr, "ParamGroup: the group has no options yet (an optimiser gives it its defaults)");
  return *options_;
}

const OptimizerOptions& ParamGroup::options() const {
  EMBER_CHECK(options_ != nullptr, "ParamGroup: the group has no options yet (an optimiser gives it its defaults)");
  return *options_;
}

// ---- ParamBatch ----

Tensor& state_buffer(ParamState& state, const std::string& name, const Tensor& param) {
  Tensor& b = state.buffers[name];
  if (!b.defined()) b = zeros(param.sizes(), param.options());
  return b;
}

TensorList ParamBatch::buffers(const std::string& name) const {
  TensorList out;
  out.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) out.push_back(state_buffer(*states[i], name, params[i]));
  return out;
}

std::vector<int64_t> ParamBatch::next_steps() const {
  std::vector<int64_t> steps;
  steps.reserve(states.size());
  for (const ParamState* s : states) steps.push_back(s->step + 1);
  return steps;
}

void ParamBatch::finish(bool count_step) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].is_same(originals[i])) originals[i].copy_(params[i]);
    if (count_step) ++states[i]->step;
  }
}

// ---- Optimizer ----

Optimizer::Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults,
                     std::vector<std::string> buffer_names, bool counts_steps)
    : name_(std::move(name)),
      defaults_(std::move(defaults)),
      buffer_names_(std::move(buffer_names)),
      counts_steps_(counts_steps) {
  defaults_->validate(name_);
}

Optimizer::~Optimizer() = default;

void Optimizer::add_param_groups(std::vector<ParamGroup> groups) {
  bool any = false;
  for (const ParamGroup& g : groups) any = any || !g.params().empty();
  EMBER_CHECK(any, name_, ": got an empty parameter list");
  for (ParamGroup& g : groups) add_param_group(std::move(g));
}

void Optimizer::add_param_group(ParamGroup group) {
  std::unordered_set<const TensorImpl*> seen;
  for (const ParamGroup& g : groups_) {
    for (const Tensor& p : g.params()) seen.insert(p.impl());
  }
  for (size_t i = 0; i < group.params().size(); ++i) {
    const Tensor& p = group.params()[i];
    EMBER_CHECK(p.defined(), name_, ": parameter ", i, " of the new group is an undefined tensor");
    EMBER_CHECK(p.is_floating_point(), name_, ": can only optimise floating-point tensors, but parameter ", i,
                " of the new group is ", p.dtype());
    EMBER_CHECK(p.is_leaf(), name_, ": can't optimise a non-leaf tensor (parameter ", i, " of the new group, ",
                p.sizes(), ", has a grad_fn); optimise the leaf it was computed from");
    EMBER_CHECK(seen.insert(p.impl()).second, name_, ": parameter ", i, " of the new group (", p.sizes(),
                ") appears in more than one parameter group");
  }
  if (!group.has_options()) {
    group.set_options(defaults_->clone());
  } else {
    const OptimizerOptions& o = group.options();
    const OptimizerOptions& defaults = *defaults_;
    EMBER_CHECK(typeid(o) == typeid(defaults), name_, ": a parameter group has the options of another optimiser (",
                typeid(o).name(), "), expected the options type of ", name_);
    o.validate(name_);
  }
  for (const Tensor& p : group.params()) {
    auto [it, added] = state_.try_emplace(p.impl());
    if (added) init_param_state(it->second, p, group.options());
  }
  groups_.push_back(std::move(group));
}

void Optimizer::init_param_state(ParamState&, const Tensor&, const OptimizerOptions&) {}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const ParamGroup& g : groups_) out.insert(out.end(), g.params().begin(), g.params().end());
  return out;
}

void Optimizer::step() {
  std::optional<profiler::Range> range;
  if (profiler::is_profiling()) range.emplace("Optimizer.step#" + name_ + ".step", profiler::EventKind::Optimizer);
  NoGradGuard no_grad;
  for (ParamGroup& g : groups_) step_group(g);
}

Tensor Optimizer::step(const std::function<Tensor()>& closure) {
  Tensor loss;
  {
    EnableGradGuard grad_on;
    loss = closure();
  }
  step();
  return loss;
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (ParamGroup& g : groups_) {
    for (const Tensor& p : g.params()) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
        continue;
      }
      if (grad.grad_fn()) {  // a gradient with history (create_graph): zero a detached copy instead
        grad = grad.detach();
        p.set_grad(grad);
      }
      grad.zero_();
    }
  }
}

const ParamState* Optimizer::state(const Tensor& param) const {
  auto it = state_.find(param.impl());
  return it == state_.end() ? nullptr : &it->second;
}

ParamBatch Optimizer::params_with_grad(ParamGroup& group) {
  ParamBatch batch;
  for (const Tensor& p : group.params()) {
    const Tensor grad = p.grad();
    if (!grad.defined()) continue;
    EMBER_CHECK(grad.dtype() == p.dtype() && grad.device() == p.device(), name_, ": the gradient of a ", p.dtype(),
                " parameter on ", p.device(), " is ", grad.dtype(), " on ", grad.device());
    batch.params.push_back(p.is_contiguous() ? p : p.contiguous());
    batch.grads.push_back(grad.is_contiguous() ? grad : grad.contiguous());
    batch.originals.push_back(p);
    ParamState& state = state_[p.impl()];
    // After Module::to() the parameter is the same tensor with new data; its
    // state follows it to the new dtype and device.
    for (auto& entry : state.buffers) {
      Tensor& buffer = entry.second;
      if (buffer.dtype() != p.dtype() || buffer.device() != p.device()) buffer = buffer.to(p.device(), p.dtype());
    }
    batch.states.push_back(&state);
  }
  return batch;
}

}  // namespace ember::optim
