// Activation checkpointing (see Note [How checkpoint saves memory] in
// ember/activation_checkpoint.h).
#include "ember/activation_checkpoint.h"

#include <algorithm>

#include "autograd/autograd_meta.h"
#include "autograd/saved_variable.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/generator.h"

namespace ember::autograd {

namespace {

using BlockFn = std::function<TensorList(const TensorList&)>;

// Puts the default generator back to the state it had at construction.
class GeneratorStateGuard {
 public:
  GeneratorStateGuard() : seed_(default_generator().seed()), offset_(default_generator().offset()) {}
  ~GeneratorStateGuard() {
    default_generator().manual_seed(seed_);
    default_generator().set_offset(offset_);
  }
  GeneratorStateGuard(const GeneratorStateGuard&) = delete;
  GeneratorStateGuard& operator=(const GeneratorStateGuard&) = delete;

 private:
  uint64_t seed_, offset_;
};

// next_functions: one edge per input of the checkpointed block.
class CheckpointBackward final : public Node {
 public:
  CheckpointBackward(BlockFn fn, uint64_t seed, uint64_t offset) : fn_(std::move(fn)), seed_(seed), offset_(offset) {}
  std::string name() const override { return "CheckpointBackward"; }
  TensorList apply(TensorList&& grad_outputs) override;
  void release_saved() override {
    for (SavedVariable& s : inputs) s.release();
  }
  std::vector<std::pair<std::string, Tensor>> saved_tensors() const override {
    std::vector<std::pair<std::string, Tensor>> out;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].defined()) out.emplace_back("input" + std::to_string(i), inputs[i].peek());
    return out;
  }

  std::vector<SavedVariable> inputs;  // aliases of the block's inputs, without history

 private:
  BlockFn fn_;
  uint64_t seed_, offset_;  // the default generator when forward ran
};

TensorList CheckpointBackward::apply(TensorList&& grad_outputs) {
  EMBER_CHECK(!is_grad_enabled(), name(),
              ": create_graph (double backward) through a checkpointed block is not supported");
  // Fresh leaves for each run, so a second backward (retain_graph) does not
  // find the first one's .grad.
  auto self = shared_from_this();
  TensorList leaves;
  leaves.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor saved = inputs[i].unpack(self);
    Tensor t = saved.defined() ? data_alias(saved) : Tensor();
    if (next_[i].valid()) t.requires_grad_();
    leaves.push_back(std::move(t));
  }

  TensorList outputs;
  {
    GeneratorStateGuard restore_afterwards;
    default_generator().manual_seed(seed_);
    default_generator().set_offset(offset_);
    EnableGradGuard record;
    outputs = fn_(leaves);
  }
  EMBER_CHECK(outputs.size() == grad_outputs.size(), name(), ": the block returned ", outputs.size(),
              " tensors when recomputed but ", grad_outputs.size(), " in forward");

  TensorList roots, root_grads;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!grad_outputs[i].defined() || !requires_grad(outputs[i])) continue;
    roots.push_back(outputs[i]);
    root_grads.push_back(std::move(grad_outputs[i]));
  }
  // backward, not grad: parameters the block closes over accumulate their
  // gradients just as they would without checkpointing.
  if (!roots.empty()) autograd::backward(roots, root_grads, /*retain_graph=*/false);

  TensorList grads(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i)
    if (next_[i].valid()) grads[i] = leaves[i].grad();
  return grads;
}

bool contains(const TensorList& list, const Tensor& t) {
  return std::any_of(list.begin(), list.end(), [&](const Tensor& x) { return x.is_same(t); });
}

}  // namespace

TensorList checkpoint(const BlockFn& fn, const TensorList& inputs) {
  const bool any_input_requires_grad =
      std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return requires_grad(t); });
  // Nothing to save memory on: without grad mode nothing is recorded, and
  // without an input that requires grad a gradient could reach the block's
  // parameters only through the recording we would skip.
  if (!is_grad_enabled() || !any_input_requires_grad) return fn(inputs);

  auto node = std::make_shared<CheckpointBackward>(fn, default_generator().seed(), default_generator().offset());
  TensorList outputs;
  {
    NoGradGuard no_grad;
    outputs = fn(inputs);
  }
  node->mutable_next_functions() = collect_next_edges(inputs);
  for (const Tensor& t : inputs) node->inputs.emplace_back(t.defined() ? data_alias(t) : Tensor(), false);
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    EMBER_CHECK(out.defined(), "checkpoint: the block returned an undefined tensor as output ", i);
    if (contains(inputs, out)) {  // keep the input's own history intact
      NoGradGuard no_grad;
      out = out.view_as(out);
    }
    if (out.is_floating_point()) set_history(out, node, static_cast<uint32_t>(i));
    else node->add_input_meta(out);
  }
  return outputs;
}

}  // namespace ember::autograd
