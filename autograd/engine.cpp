// The backward engine: runs the graph behind some outputs in dependency order.
//
// Note [How backward runs]
// 1. Discovery: walk the graph from the roots (iteratively, with an explicit
//    stack) and count, for every node, how many edges point at it.
// 2. Execution: a node is ready when all its dependencies have delivered
//    their gradients into its input buffer (fan-in adds them up). Ready
//    nodes run latest-created first. A node's outputs go to its next edges.
// 3. grad(): instead of accumulating into leaves, the engine captures the
//    gradients arriving at the inputs' edges, and runs only the nodes on a
//    path to them.
// Nothing recurses on the C stack, so a 100,000-op chain is fine.
#include <algorithm>
#include <cmath>
#include <queue>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "autograd/autograd_meta.h"
#include "autograd/functions.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "ember/profiler.h"

namespace ember {

namespace autograd {

namespace {

thread_local bool anomaly_mode EMBER_HOT_TLS = false;

class GradModeScope {
 public:
  explicit GradModeScope(bool enabled) : prev_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeScope() { set_grad_enabled(prev_); }

 private:
  bool prev_;
};

struct Capture {
  Node* node;
  uint32_t input_nr;
  size_t index;
};

// Per node of a graph task: edges still to deliver, and the gradients that
// arrived so far (one per node input).
struct NodeState {
  int dependencies = 0;
  TensorList buffer;
};

struct GraphTask {
  bool keep_graph = false;
  bool create_graph = false;
  std::unordered_map<Node*, NodeState> nodes;  // every node reachable from the roots
  // grad(): gradients are captured at these edges; only nodes leading to
  // them run.
  std::vector<Capture> captures;
  std::unordered_set<Node*> should_run;
  bool run_everything = true;
  TensorList captured;
};

void add_to_buffer(TensorList& buffer, uint32_t input_nr, Tensor grad) {
  Tensor& slot = buffer.at(input_nr);
  slot = slot.defined() ? slot + grad : std::move(grad);
}

void discover(GraphTask& task, const std::vector<Node*>& roots) {
  std::vector<Node*> stack;
  for (Node* r : roots)
    if (task.nodes.try_emplace(r).second) stack.push_back(r);
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    for (const Edge& e : n->next_functions()) {
      if (!e.valid()) continue;
      auto [it, added] = task.nodes.try_emplace(e.function.get());
      ++it->second.dependencies;
      if (added) stack.push_back(e.function.get());
    }
  }
}

// Marks the nodes that lie on a path from the roots to a captured edge
// (post-order over the graph, iteratively).
void mark_nodes_to_run(GraphTask& task, const std::vector<Node*>& roots) {
  std::unordered_set<Node*> targets;
  for (const Capture& c : task.captures) targets.insert(c.node);
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack;
  for (Node* r : roots) {
    if (!visited.insert(r).second) continue;
    stack.emplace_back(r, 0);
    while (!stack.empty()) {
      auto& [n, next_index] = stack.back();
      const auto& edges = n->next_functions();
      if (next_index < edges.size()) {
        Node* child = edges[next_index++].function.get();
        if (child && visited.insert(child).second) stack.emplace_back(child, 0);
        continue;
      }
      for (const Edge& e : edges) {
        if (!e.valid()) continue;
        if (targets.count(e.function.get()) || task.should_run.count(e.function.get())) {
          task.should_run.insert(n);
          break;
        }
      }
      stack.pop_back();
    }
  }
}

Tensor run_hooks_for_input(Node& node, uint32_t input_nr, Tensor grad) {
  if (!grad.defined()) return grad;
  const DimVector sizes(grad.sizes());
  if (auto* acc = dynamic_cast<AccumulateGrad*>(&node)) {
    const Tensor variable = acc->variable();
    if (AutogradMeta* m = variable.defined() ? get_meta(variable) : nullptr) {
      for (const auto& h : m->leaf_hooks) {
        Tensor replaced = h.fn(grad);
        if (replaced.defined()) grad = std::move(replaced);
      }
    }
  }
  if (node.has_pre_hooks()) grad = node.run_pre_hooks(input_nr, std::move(grad));
  EMBER_CHECK(grad.sizes() == IntArrayRef(sizes), "a hook on the gradient of ", node.name(), " input ", input_nr,
              " changed its shape from ", IntArrayRef(sizes), " to ", grad.sizes(), "; hooks may change values only");
  return grad;
}

void check_anomaly(const Node& node, const TensorList& outputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& g = outputs[i];
    if (!g.defined() || !is_floating_point(g.dtype())) continue;
    bool has_nan = false;
    {
      GradModeScope off(false);
      has_nan = g.isnan().any().item<bool>();
    }
    if (!has_nan) continue;
    std::ostringstream os;
    os << "anomaly: " << node.name() << " returned NaN values in its gradient output " << i << " (shape "
       << g.sizes() << ")";
    if (!node.forward_description().empty()) os << "; it was created by the forward call " << node.forward_description();
    EMBER_FAIL(os.str());
  }
}

// Makes `grad` fit the input it is sent to: same shape (or an error naming the
// node), same dtype.
Tensor conform(const Node& from, const Node& to, uint32_t input_nr, Tensor grad) {
  const Node::InputMeta& m = to.input_meta().at(input_nr);
  if (grad.sizes() != IntArrayRef(m.sizes)) {
    EMBER_FAIL(from.name(), " returned a gradient of shape ", grad.sizes(), " for ", to.name(), " input ", input_nr,
               ", which expects shape ", IntArrayRef(m.sizes));
  }
  if (grad.dtype() != m.dtype || grad.device() != m.device) grad = grad.to(m.device, m.dtype);
  return grad;
}

void execute(GraphTask& task, const std::vector<Edge>& roots, TensorList root_grads) {
  std::vector<Node*> root_nodes;
  for (const Edge& e : roots) root_nodes.push_back(e.function.get());
  discover(task, root_nodes);
  if (!task.run_everything) mark_nodes_to_run(task, root_nodes);

  auto later_first = [](Node* a, Node* b) { return a->sequence_nr() < b->sequence_nr(); };
  std::priority_queue<Node*, std::vector<Node*>, decltype(later_first)> ready(later_first);
  auto state_of = [&](Node* n) -> NodeState& {
    NodeState& st = task.nodes[n];
    if (st.buffer.empty()) st.buffer.resize(n->num_inputs());
    return st;
  };
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* n = roots[i].function.get();
    add_to_buffer(state_of(n).buffer, roots[i].input_nr, std::move(root_grads[i]));
  }
  std::unordered_set<Node*> queued;
  for (Node* n : root_nodes)
    if (task.nodes[n].dependencies == 0 && queued.insert(n).second) ready.push(n);

  GradModeScope grad_mode(task.create_graph);
  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    TensorList inputs = std::move(state_of(node).buffer);
    const bool runs = task.run_everything || task.should_run.count(node);
    bool captures_here = false;
    for (const Capture& c : task.captures) captures_here = captures_here || c.node == node;
    if (!runs && !captures_here) continue;  // grad(): off the path to the inputs, hooks included
    for (size_t i = 0; i < inputs.size(); ++i)
      inputs[i] = run_hooks_for_input(*node, static_cast<uint32_t>(i), std::move(inputs[i]));
    for (const Capture& c : task.captures)
      if (c.node == node && inputs.at(c.input_nr).defined()) task.captured[c.index] = inputs[c.input_nr];
    if (!runs) continue;

    TensorList outputs;
    if (profiler::is_profiling()) {
      profiler::Range range(node->name(), profiler::EventKind::Backward, static_cast<int64_t>(node->sequence_nr()));
      outputs = node->apply(std::move(inputs));
    } else {
      outputs = node->apply(std::move(inputs));
    }
    if (anomaly_mode) check_anomaly(*node, outputs);
    if (!task.keep_graph) node->release_saved();

    const auto& edges = node->next_functions();
    EMBER_CHECK(outputs.size() == edges.size() || (outputs.empty() && dynamic_cast<AccumulateGrad*>(node)),
                node->name(), " returned ", outputs.size(), " gradients for ", edges.size(), " inputs");
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.valid()) continue;
      Node* next = e.function.get();
      NodeState& st = state_of(next);
      if (outputs[i].defined()) add_to_buffer(st.buffer, e.input_nr, conform(*node, *next, e.input_nr, std::move(outputs[i])));
      if (--st.dependencies == 0) ready.push(next);
    }
  }
}

// The root edges and their gradients for backward()/grad().
std::vector<Edge> root_edges(const TensorList& outputs, const TensorList& grad_outputs, TensorList& root_grads,
                             const char* api) {
  EMBER_CHECK(grad_outputs.empty() || grad_outputs.size() == outputs.size(), api, ": got ", grad_outputs.size(),
              " grad_outputs for ", outputs.size(), " outputs");
  std::vector<Edge> roots;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    EMBER_CHECK(out.defined(), api, ": output ", i, " is an undefined tensor");
    EMBER_CHECK(requires_grad(out), api, ": output ", i, " (", out.dtype(), " ", out.sizes(),
                ") does not require grad and has no grad_fn; nothing to differentiate");
    Tensor g = grad_outputs.empty() ? Tensor() : grad_outputs[i];
    if (!g.defined()) {
      EMBER_CHECK(out.numel() == 1, api, ": a gradient can be created implicitly only for one-element outputs, but "
                  "output ", i, " has shape ", out.sizes(), "; pass grad_outputs");
      g = ones_like(out);
    } else {
      EMBER_CHECK(g.sizes() == out.sizes(), api, ": grad_outputs[", i, "] has shape ", g.sizes(), " but output ", i,
                  " has shape ", out.sizes());
      if (g.dtype() != out.dtype() || g.device() != out.device()) g = g.to(out.device(), out.dtype());
    }
    roots.push_back(gradient_edge(out));
    root_grads.push_back(std::move(g));
  }
  return roots;
}

}  // namespace

TensorList grad(const TensorList& outputs, const TensorList& inputs, const TensorList& grad_outputs,
                std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  EMBER_CHECK(!inputs.empty(), "grad: no inputs given");
  TensorList root_grads;
  std::vector<Edge> roots = root_edges(outputs, grad_outputs, root_grads, "grad");
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  task.run_everything = false;
  task.captured.resize(inputs.size());
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = inputs[i];
    EMBER_CHECK(in.defined() && requires_grad(in), "grad: input ", i,
                in.defined() ? " does not require grad" : " is an undefined tensor");
    input_edges.push_back(gradient_edge(in));
    task.captures.push_back({input_edges.back().function.get(), input_edges.back().input_nr, i});
  }
  execute(task, roots, std::move(root_grads));
  for (size_t i = 0; i < inputs.size(); ++i) {
    EMBER_CHECK(allow_unused || task.captured[i].defined(), "grad: input ", i, " (", inputs[i].dtype(), " ",
                inputs[i].sizes(), ") is not part of the graph of the outputs; pass allow_unused=true to get an "
                "undefined gradient for it");
  }
  return task.captured;
}

void backward(const TensorList& outputs, const TensorList& grad_outputs, std::optional<bool> retain_graph,
              bool create_graph, const TensorList& inputs) {
  if (!inputs.empty()) {
    // Only these inputs get gradients: computed like grad(), then accumulated.
    TensorList grads = grad(outputs, inputs, grad_outputs, retain_graph, create_graph, /*allow_unused=*/true);
    GradModeScope grad_mode(create_graph);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!grads[i].defined()) continue;
      Edge e = gradient_edge(inputs[i]);
      if (auto* acc = dynamic_cast<AccumulateGrad*>(e.function.get())) {
        acc->apply({grads[i]});
      } else {
        Tensor current = inputs[i].grad();
        inputs[i].set_grad(current.defined() ? current + grads[i] : grads[i]);
      }
    }
    return;
  }
  TensorList root_grads;
  std::vector<Edge> roots = root_edges(outputs, grad_outputs, root_grads, "backward");
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.create_graph = create_graph;
  execute(task, roots, std::move(root_grads));
}

bool is_anomaly_enabled() { return anomaly_mode; }
DetectAnomalyGuard::DetectAnomalyGuard() : prev_(anomaly_mode) { anomaly_mode = true; }
DetectAnomalyGuard::~DetectAnomalyGuard() { anomaly_mode = prev_; }

}  // namespace autograd
}  // namespace ember
