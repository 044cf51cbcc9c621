// The autograd state of a tensor and the functions that connect tensors to
// the graph. Internal: users see it through Tensor's autograd methods.
//
// Note [Leaves, histories and views]
// A leaf that requires grad has no grad_fn; gradients reach it through its
// AccumulateGrad node, made on first use and owned by the tensor (the node
// refers back to the tensor without owning it). A non-leaf has grad_fn + output_nr.
// A view (TensorImpl::view_base() is set by the view kernels) shares its
// base's storage. An in-place op on a view rewrites the *base's* history with
// a CopySlices node; the view's own grad_fn is then re-derived from the
// base's (an AsStridedBackward node) the next time it is used. A view knows
// its grad_fn is stale because the storage version moved since it was made.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/autograd.h"
#include "ember/tensor.h"

namespace ember::autograd {

struct AutogradMeta : AutogradMetaInterface {
  ~AutogradMeta() override;

  bool requires_grad = false;  // set by requires_grad_() on a leaf
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;
  // Leaves only. Owned by the tensor, so repeated forward passes reuse it; it
  // points back at the tensor without owning it (no cycle), and the tensor
  // detaches it when it dies. Threads recording ops on one leaf at once
  // make it under accumulator_mutex (made once, read by all).
  std::shared_ptr<Node> grad_accumulator;
  std::mutex accumulator_mutex;

  // Views: the storage version grad_fn was recorded at. A different version
  // means an in-place op may have changed the base's history.
  bool history_is_view = false;
  uint32_t attr_version = 0;

  // retain_grad() on a non-leaf: the gradient lands in this cell (the hook
  // that fills it holds it weakly, so the tensor owns its gradient).
  std::shared_ptr<Tensor> retained_grad;
  uint64_t retain_hook_id = 0;
  // Nodes that hold this tensor's hooks (a later in-place op moves the
  // tensor to a new grad_fn; remove_hook must still find them).
  std::vector<std::pair<uint64_t, std::weak_ptr<Node>>> hook_nodes;

  // Hooks of a leaf (non-leaf hooks sit on grad_fn as pre-hooks).
  struct LeafHook {
    uint64_t id;
    std::function<Tensor(const Tensor&)> fn;
  };
  std::vector<LeafHook> leaf_hooks;
  std::vector<std::pair<uint64_t, std::function<void(const Tensor&)>>> post_accumulate_hooks;
};

// The meta of `t`, or null.
AutogradMeta* get_meta(const Tensor& t);
// The meta of `t`, created when missing.
AutogradMeta& ensure_meta(const Tensor& t);

// Whether `t` takes part in autograd (requires grad or has a history).
bool requires_grad(const Tensor& t);

// The sequence number the next Node will get: a node whose number is at
// least this value was created after the call (the profiler links an op to
// the backward node it recorded this way).
uint64_t next_node_sequence_nr();

// Where a gradient w.r.t. `t` must be sent: (grad_fn, output_nr) for a
// non-leaf, (AccumulateGrad, 0) for a leaf that requires grad, an invalid
// edge otherwise. Re-derives a stale view history (see the note above).
Edge gradient_edge(const Tensor& t);

// Makes `t` the `output_nr`-th result of `fn`: sets its grad_fn and adds the
// Autograd dispatch key. `fn` gets t's shape/dtype as an input meta when
// `output_nr` equals its current number of inputs.
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t output_nr);

// retain_grad(): (re)attaches the hook that fills meta.retained_grad to
// `fn`'s input `output_nr` (called again when an in-place op gives the tensor
// a new grad_fn, so the retained gradient is the one of the current value).
void attach_retain_hook(AutogradMeta& meta, const std::shared_ptr<Node>& fn, uint32_t output_nr);

// Edges for a list of inputs (invalid for inputs that do not require grad).
std::vector<Edge> collect_next_edges(const TensorList& inputs);

// An alias of `t`'s data with no autograd state (what a saved result keeps,
// so a node does not own its own output).
Tensor data_alias(const Tensor& t);

// Releases a node; when a release would destroy a long chain of nodes, the
// chain is destroyed iteratively instead of by recursion (a 100,000-op
// chain must not overflow the C stack).
void release_node(std::shared_ptr<Node>&& node);

// A new id for hook handles.
uint64_t next_hook_id();

}  // namespace ember::autograd
