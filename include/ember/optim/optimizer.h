// The optimiser base: parameter groups with their own options, per-parameter
// state, zero_grad, step, and a state dict, as libtorch's torch::optim.
//
//   ember::optim::AdamW opt(params, ember::optim::AdamWOptions(1e-3).weight_decay(0.05));
//   loss.backward();
//   opt.step();
//   opt.zero_grad();
//
// Note [Optimiser groups, state and fused steps]
// An optimiser holds groups of parameters; each group has a full copy of the
// options (a group made without options takes the optimiser's defaults).
// Parameters are numbered across groups, in order, as PyTorch does; the
// numbers name their state in state_dict(). step() runs, under NoGradGuard,
// one fused dispatched op per group that updates every parameter with a
// gradient and its state in one pass (core/op_decls_optim.h); parameters
// without a gradient are skipped and keep their state.
//
// state_dict() is a snapshot (copies) that resumes bit for bit:
//   "kind.<Name>"                0-d int64, the optimiser ("kind.Adam")
//   "param_groups.<g>.params"    int64 [n], the numbers of the group's parameters
//   "param_groups.<g>.<option>"  0-d float64 (a number) or int64 (a flag, 0/1)
//   "param_groups.<g>.initial_lr" 0-d float64, once a scheduler has set it
//   "state.<i>.step"             0-d int64, optimisers that count steps
//   "state.<i>.<buffer>"         the buffers ("exp_avg", "momentum_buffer", ...)
// load_state_dict() checks all of it against this optimiser before changing
// anything: the kind, the number of groups and of parameters in each, the
// option names, and every state tensor's name and shape.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ember/serialize.h"
#include "ember/tensor.h"

namespace ember::optim {

// An option of an options class, for state dicts and schedulers: a number or
// a flag, by name ("lr", "momentum", "beta1", "nesterov", ...).
struct OptionField {
  std::string_view name;
  double* number = nullptr;
  bool* flag = nullptr;
  OptionField(std::string_view n, double* v) : name(n), number(v) {}
  OptionField(std::string_view n, bool* v) : name(n), flag(v) {}
};

// The options every optimiser has (the learning rate), and what the base
// needs from each options class.
class OptimizerOptions {
 public:
  explicit OptimizerOptions(double lr) : lr_(lr) {}
  virtual ~OptimizerOptions() = default;
  double lr() const { return lr_; }
  OptimizerOptions& lr(double lr) {
    lr_ = lr;
    return *this;
  }
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  // Every option, "lr" first.
  virtual std::vector<OptionField> fields() = 0;
  // Throws an ember::Error naming `optimizer` and the first invalid option.
  virtual void validate(std::string_view optimizer) const = 0;
  // The number option `name`, or null when this optimiser has none.
  double* find_number(std::string_view name);

 protected:
  double lr_;
};

// Declares an option: a getter name() and a chainable setter name(value).
#define EMBER_OPTIM_OPTION(Self, T, name, default_value) \
 public:                                                 \
  Self& name(T value) {                                  \
    name##_ = value;                                     \
    return *this;                                        \
  }                                                      \
  T name() const { return name##_; }                     \
                                                         \
 private:                                                \
  T name##_ = default_value;                             \
                                                         \
 public:

// The lr setter of an options class `Self` (returns Self&, so calls chain).
#define EMBER_OPTIM_LR_SETTER(Self) \
  using OptimizerOptions::lr;       \
  Self& lr(double value) {          \
    lr_ = value;                    \
    return *this;                   \
  }

class ParamGroup {
 public:
  // A group that takes the optimiser's default options.
  ParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}  // NOLINT: implicit, {p1, p2} is a group
  // A group with options of its own, e.g. ParamGroup(head_params, AdamOptions(1e-2)).
  template <class Options>
    requires std::is_base_of_v<OptimizerOptions, Options>
  ParamGroup(std::vector<Tensor> params, const Options& options)
      : params_(std::move(params)), options_(options.clone()) {}
  ParamGroup(const ParamGroup& other);
  ParamGroup& operator=(const ParamGroup& other);
  ParamGroup(ParamGroup&&) = default;
  ParamGroup& operator=(ParamGroup&&) = default;

  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }
  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  // The lr a scheduler started from (PyTorch's group["initial_lr"]); the
  // first scheduler attached to the optimiser sets it.
  std::optional<double>& initial_lr() { return initial_lr_; }
  std::optional<double> initial_lr() const { return initial_lr_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
  std::optional<double> initial_lr_;
};

// The state an optimiser keeps for one parameter.
struct ParamState {
  int64_t step = 0;    // updates applied so far (optimisers that count them)
  TensorDict buffers;  // "exp_avg", "momentum_buffer", ...: contiguous, the parameter's shape and dtype
};

struct ParamBatch;  // optim/param_batch.h

class Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // "SGD", "Adam", ...
  const std::string& name() const { return name_; }
  // Adds a group; without options of its own it takes the defaults. A
  // parameter may be in one group only.
  void add_param_group(ParamGroup group);
  std::vector<ParamGroup>& param_groups() { return groups_; }
  const std::vector<ParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  OptimizerOptions& defaults() { return *defaults_; }
  // All parameters, numbered as in state_dict().
  std::vector<Tensor> parameters() const;

  // One update of every parameter that has a gradient.
  void step();
  // Runs `closure` with grad mode on (it recomputes the loss and its
  // gradients), then steps; returns the closure's loss.
  Tensor step(const std::function<Tensor()>& closure);
  // Clears the gradients: undefined (set_to_none) or zeroed in place.
  void zero_grad(bool set_to_none = true);

  // The state of `param`, or null before its first update.
  const ParamState* state(const Tensor& param) const;

  TensorDict state_dict() const;
  void load_state_dict(const TensorDict& dict);

 protected:
  // Derived constructors call add_param_groups(groups) in their body, so
  // that init_param_state reaches the derived class.
  Optimizer(std::string name, std::unique_ptr<OptimizerOptions> defaults, std::vector<std::string> buffer_names,
            bool counts_steps);
  // Adds every group (an empty parameter list is an error, as in PyTorch).
  void add_param_groups(std::vector<ParamGroup> groups);
  // Updates the parameters of one group (under NoGradGuard).
  virtual void step_group(ParamGroup& group) = 0;
  // Called for each parameter a group brings in (Adagrad creates its state up front).
  virtual void init_param_state(ParamState& state, const Tensor& param, const OptimizerOptions& options);
  // The parameters of `group` that have a gradient, with their state
  // (created when missing), ready for a fused update op.
  ParamBatch params_with_grad(ParamGroup& group);

 private:
  std::string name_;
  std::vector<ParamGroup> groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<std::string> buffer_names_;  // the buffers state dicts may hold
  bool counts_steps_;
  std::unordered_map<const TensorImpl*, ParamState> state_;
};

}  // namespace ember::optim
