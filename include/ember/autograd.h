// Autograd: gradients recorded on a dynamic tape.
//
//   ember::Tensor w = ember::randn({3, 2}).requires_grad_();
//   ember::Tensor loss = ember::randn({4, 3}).matmul(w).relu().sum();
//   loss.backward();            // w.grad() now holds d loss / d w
//
// Note [How autograd records]
// Autograd is a dispatch layer (DispatchKey::Autograd). A tensor that
// requires grad, or has a grad_fn, carries the Autograd key. When an op sees
// it, the autograd kernel runs the op below itself, then creates a Node for
// the op's backward: the node keeps the tensors its derivative formula needs
// (each with the version it was saved at) and one Edge per differentiable
// input, pointing at the node that produced that input (or at the leaf's
// gradient accumulator). Outputs get the node as their grad_fn. backward()
// walks the nodes from the loss in dependency order (autograd/engine.cpp).
// Kernels never know autograd exists.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember {

class Node;

// An input slot of a node: gradients flowing along the edge are the
// `input_nr`-th gradient input of `function`.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return static_cast<bool>(function); }
};

// A step of the backward graph. Built-in nodes are named after the forward op
// ("MulBackward", "SumBackward"); leaves end in "AccumulateGrad".
class Node : public std::enable_shared_from_this<Node> {
 public:
  virtual ~Node();  // releases long chains iteratively, never by deep recursion
  virtual std::string name() const = 0;
  // Gradients w.r.t. this node's outputs in, gradients w.r.t. its inputs out
  // (one per next edge; an undefined tensor means "no gradient").
  virtual TensorList apply(TensorList&& grad_outputs) = 0;
  // Frees the saved tensors (called after backward unless retain_graph).
  virtual void release_saved() {}
  // Saved tensors, named, for inspection (to_dot).
  virtual std::vector<std::pair<std::string, Tensor>> saved_tensors() const { return {}; }

  const std::vector<Edge>& next_functions() const { return next_; }
  std::vector<Edge>& mutable_next_functions() { return next_; }
  size_t num_inputs() const { return input_meta_.size(); }
  // Shape, dtype and device of each gradient this node receives.
  struct InputMeta {
    DimVector sizes;
    DType dtype = DType::Float32;
    Device device;
  };
  const std::vector<InputMeta>& input_meta() const { return input_meta_; }
  uint32_t add_input_meta(const Tensor& t);
  // Nodes created later run earlier when both are ready (like PyTorch).
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Forward op that created the node, with its argument shapes: for anomaly
  // mode and to_dot ("mul(Tensor[2, 3] float32, Tensor[3] float32)").
  const std::string& forward_description() const { return forward_description_; }
  void set_forward_description(std::string s) { forward_description_ = std::move(s); }

  // Hooks on the gradients this node produces for its inputs (leaf hooks
  // live on AccumulateGrad); see Tensor::register_hook.
  using PreHook = std::function<Tensor(const Tensor&)>;
  void add_pre_hook(uint32_t output_nr, uint64_t id, PreHook h);
  void remove_pre_hook(uint64_t id);
  Tensor run_pre_hooks(uint32_t output_nr, Tensor grad) const;
  bool has_pre_hooks() const { return !pre_hooks_.empty(); }

 protected:
  Node();
  std::vector<Edge> next_;

 private:
  std::vector<InputMeta> input_meta_;
  uint64_t sequence_nr_;
  std::string forward_description_;
  struct HookEntry {
    uint32_t output_nr;
    uint64_t id;
    PreHook fn;
  };
  std::vector<HookEntry> pre_hooks_;
};

// ---- grad mode (thread-local) ----
bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// Disables recording in a scope (like torch::NoGradGuard).
class NoGradGuard {
 public:
  NoGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(prev_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

// Enables recording in a scope, e.g. inside a NoGradGuard.
class EnableGradGuard {
 public:
  EnableGradGuard() : prev_(is_grad_enabled()) { set_grad_enabled(true); }
  ~EnableGradGuard() { set_grad_enabled(prev_); }
  EnableGradGuard(const EnableGradGuard&) = delete;
  EnableGradGuard& operator=(const EnableGradGuard&) = delete;

 private:
  bool prev_;
};

// Inference mode: code that never needs gradients (serving a model). Turns
// recording off like NoGradGuard; is_inference_mode_enabled() lets layers
// skip other training-only work.
bool is_inference_mode_enabled();
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  ~InferenceMode();
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;

 private:
  bool prev_grad_;
  bool prev_inference_;
};

namespace autograd {

// Computes gradients of `outputs` and accumulates them into the .grad of the
// leaves of the graph (or only of `inputs`, when given). `grad_outputs`
// default to ones for one-element outputs. The graph is freed afterwards
// unless `retain_graph` (which defaults to `create_graph`).
void backward(const TensorList& outputs, const TensorList& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
              const TensorList& inputs = {});

// Returns d outputs / d inputs without touching any .grad. With create_graph
// the result has a graph of its own (second derivatives). An input that the
// outputs do not depend on is an error unless allow_unused (then undefined).
TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs = {},
                std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                bool allow_unused = false);

// Anomaly mode: a backward node that produces NaN raises an error naming
// that node and the forward op (with its argument shapes) that created it.
bool is_anomaly_enabled();
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool prev_;
};

// Graphviz DOT of the graph behind `t`: one box per node (name, forward op),
// saved tensors with their shapes, leaves with their shapes.
std::string to_dot(const Tensor& t);

}  // namespace autograd
}  // namespace ember
