// The engine's own node types: AccumulateGrad (leaves), FormulaNode (every
// op with a registered derivative), CopySlices (an in-place op on a view,
// recorded on the view's base) and GraphRoot-less helpers.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "autograd/formula.h"
#include "autograd/saved_variable.h"
#include "core/dispatcher.h"
#include "ember/autograd.h"

namespace ember::autograd {

// The end of the graph for a leaf that requires grad: adds the incoming
// gradient to variable.grad(), after the leaf's hooks, then runs its
// post-accumulate-grad hooks. Backward passes on several threads may reach
// one leaf at once: the accumulation holds the node's lock (as PyTorch's).
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(const Tensor& variable);
  std::string name() const override { return "AccumulateGrad"; }
  TensorList apply(TensorList&& grads) override;
  // The leaf (undefined once it died: its gradient has nowhere to go).
  Tensor variable() const { return variable_ ? Tensor(IntrusivePtr<TensorImpl>(variable_)) : Tensor(); }
  void forget_variable() { variable_ = nullptr; }

 private:
  TensorImpl* variable_;  // not owned: the leaf owns this node
  std::mutex mutex_;       // guards variable.grad()
};

// The backward of one call of a dispatched op, computed by its Formula.
class FormulaNode final : public Node, public GradContext {
 public:
  FormulaNode(const OpEntry& op, const Formula& formula);
  std::string name() const override;
  TensorList apply(TensorList&& grads) override;
  void release_saved() override;
  std::vector<std::pair<std::string, Tensor>> saved_tensors() const override;

  // Recording (autograd_kernel.cpp).
  // Records the arguments; inputs that require grad (floating point) get edges.
  void record_arguments(const Stack& args, bool with_layout);
  void record_results(const Stack& results);
  // For an in-place op: saves `original` (a copy taken before the op) in
  // place of argument `arg` (self, or another argument aliasing self).
  void save_original(size_t arg, const Tensor& original);
  // Whether argument `arg` is one the formula reads.
  bool saves_arg(size_t arg) const;

  // GradContext
  Tensor saved(size_t arg) const override;
  TensorList saved_list(size_t arg) const override;
  Tensor result(size_t i) const override;
  const IValue& value(size_t arg) const override;
  const TensorMeta& meta(size_t arg, size_t elem) const override;
  size_t list_size(size_t arg) const override;
  size_t slot(size_t arg, size_t elem) const override;
  size_t num_slots() const override { return num_slots_; }
  bool needs_grad(size_t arg, size_t elem) const override;
  const TensorMeta& result_meta(size_t i) const override;

  const OpEntry& op() const { return op_; }

 private:
  [[noreturn]] void fail_released() const;

  const OpEntry& op_;
  const Formula& formula_;
  // Tensor inputs are stored by slot; argument a owns slots
  // [args_[a].first_slot, args_[a].end_slot) (none for a non-tensor argument).
  struct Arg {
    IValue value;  // a non-tensor argument (None for tensor ones)
    uint32_t first_slot = 0;
    uint32_t end_slot = 0;
  };
  std::vector<Arg> args_;
  struct Input {
    TensorMeta meta;
    SavedVariable saved;  // empty unless the formula reads this argument
  };
  std::vector<Input> inputs_;          // by slot
  uint64_t list_args_ = 0;             // bit a: argument a is a Tensor[]
  size_t num_slots_ = 0;
  std::vector<SavedVariable> saved_results_;
  mutable std::vector<TensorMeta> result_metas_;  // made from input_meta() when a formula asks
  bool released_ = false;
};

// An in-place op on a view of `base`: the op's own node (`fn`) computes the
// gradient of the view's region; the rest of the base's gradient passes
// through. next_functions: [base's previous history, fn's inputs 1..].
class CopySlices final : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn, Edge base_edge);
  std::string name() const override { return "CopySlices"; }
  TensorList apply(TensorList&& grads) override;
  void release_saved() override { fn_->release_saved(); }
  std::vector<std::pair<std::string, Tensor>> saved_tensors() const override { return fn_->saved_tensors(); }

 private:
  TensorMeta base_;
  DimVector view_sizes_, view_strides_;
  int64_t view_offset_;
  std::shared_ptr<Node> fn_;
};

// The history of a view re-derived from its base after an in-place op:
// gradient w.r.t. the view, scattered into the base's shape.
class ViewOfBase final : public Node {
 public:
  ViewOfBase(const Tensor& base, const Tensor& view);
  std::string name() const override { return "AsStridedBackward"; }
  TensorList apply(TensorList&& grads) override;

 private:
  TensorMeta base_;
  DimVector view_sizes_, view_strides_;
  int64_t view_offset_;
};

// `with_layout`: also strides and storage offset (view formulas need them).
TensorMeta meta_of(const Tensor& t, bool with_layout = true);

}  // namespace ember::autograd
