// `ember inspect autograd --config CFG [--dot | --json]`: the backward graph
// a config's model records for one batch (inspect_model.h), from the loss's
// grad_fn down to the AccumulateGrad leaf of each parameter: every node's
// name, the forward op that recorded it, the gradients it receives, the
// tensors it saved and its next functions.
#include <iostream>
#include <map>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "autograd/functions.h"
#include "core/dot_escape.h"
#include "tools/ember/commands.h"
#include "tools/ember/inspect_model.h"
#include "tools/ember/json_output.h"

namespace ember::cli {
namespace {

std::string shape_text(IntArrayRef sizes, DType dtype) {
  std::ostringstream os;
  os << sizes << " " << dtype;
  return os.str();
}

nlohmann::json meta_json(IntArrayRef sizes, DType dtype) {
  return {{"shape", std::vector<int64_t>(sizes.begin(), sizes.end())}, {"dtype", std::string(dtype_name(dtype))}};
}

struct GraphNode {
  const Node* node = nullptr;
  std::string parameter;   // AccumulateGrad of a named parameter
  bool leaf = false;
  std::vector<int64_t> next;  // node index per next edge; -1: no gradient flows there
  std::vector<uint32_t> next_input_nr;
};

// The nodes reachable from `root`, breadth first (root is node 0).
std::vector<GraphNode> walk(const std::shared_ptr<Node>& root, const std::map<const TensorImpl*, std::string>& names) {
  std::vector<GraphNode> nodes;
  std::unordered_map<const Node*, int64_t> index;
  auto visit = [&](const Node* n) {
    auto [it, added] = index.try_emplace(n, static_cast<int64_t>(nodes.size()));
    if (added) {
      GraphNode g;
      g.node = n;
      nodes.push_back(std::move(g));
    }
    return it->second;
  };
  visit(root.get());
  for (size_t i = 0; i < nodes.size(); ++i) {  // `nodes` grows as they are found
    const Node* n = nodes[i].node;
    if (auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(n)) {
      nodes[i].leaf = true;
      const Tensor v = acc->variable();
      auto name = v.defined() ? names.find(v.impl()) : names.end();
      nodes[i].parameter = name != names.end() ? name->second : "";
    }
    std::vector<int64_t> next;
    std::vector<uint32_t> input_nr;
    for (const Edge& e : n->next_functions()) {
      next.push_back(e.valid() ? visit(e.function.get()) : -1);
      input_nr.push_back(e.input_nr);
    }
    nodes[i].next = std::move(next);
    nodes[i].next_input_nr = std::move(input_nr);
  }
  return nodes;
}

void print_text(const SampleBatch& b, const std::vector<GraphNode>& nodes, const std::vector<std::string>& unreached) {
  int64_t leaves = 0;
  for (const GraphNode& g : nodes) leaves += g.leaf;
  std::cout << "autograd graph of model " << b.config.model.name << " on one batch of " << b.input.size(0)
            << " (loss = cross_entropy): " << nodes.size() << " nodes, " << leaves << " of them AccumulateGrad leaves\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& g = nodes[i];
    const Node* n = g.node;
    std::cout << "[" << i << "] " << n->name();
    if (g.leaf) {
      const Tensor v = static_cast<const autograd::AccumulateGrad*>(n)->variable();
      std::cout << "  " << (g.parameter.empty() ? "(a leaf that is not a parameter)" : g.parameter);
      if (v.defined()) std::cout << " " << shape_text(v.sizes(), v.dtype());
      std::cout << "\n";
      continue;
    }
    if (!n->forward_description().empty()) std::cout << "  from " << n->forward_description();
    std::cout << "\n";
    for (const Node::InputMeta& m : n->input_meta()) std::cout << "      grad in: " << shape_text(m.sizes, m.dtype) << "\n";
    for (const auto& [name, saved] : n->saved_tensors())
      std::cout << "      saved " << name << ": " << shape_text(saved.sizes(), saved.dtype()) << "\n";
    std::cout << "      next:";
    if (g.next.empty()) std::cout << " (none)";
    for (int64_t c : g.next) {
      if (c < 0) std::cout << " (no gradient)";
      else std::cout << " [" << c << "] " << nodes[static_cast<size_t>(c)].node->name();
    }
    std::cout << "\n";
  }
  if (!unreached.empty()) {
    std::cout << "parameters the loss does not reach:";
    for (const std::string& name : unreached) std::cout << " " << name;
    std::cout << "\n";
  }
}

void print_dot(const std::vector<GraphNode>& nodes) {
  std::cout << "digraph autograd {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& g = nodes[i];
    std::ostringstream label;
    label << g.node->name();
    if (g.leaf) {
      const Tensor v = static_cast<const autograd::AccumulateGrad*>(g.node)->variable();
      if (!g.parameter.empty()) label << "\\n" << dot_escape(g.parameter);
      if (v.defined()) label << "\\n" << dot_escape(shape_text(v.sizes(), v.dtype()));
    } else if (!g.node->forward_description().empty()) {
      label << "\\n" << dot_escape(g.node->forward_description());
    }
    std::cout << "  n" << i << " [label=\"" << label.str() << "\""
              << (g.leaf ? ", style=filled, fillcolor=lightblue" : "") << "];\n";
    for (int64_t c : g.next)
      if (c >= 0) std::cout << "  n" << i << " -> n" << c << ";\n";
  }
  std::cout << "}\n";
}

nlohmann::json graph_json(const SampleBatch& b, const Tensor& loss, const std::vector<GraphNode>& nodes,
                          const std::vector<std::string>& unreached) {
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& g = nodes[i];
    const Node* n = g.node;
    nlohmann::json grad_inputs = nlohmann::json::array();
    for (const Node::InputMeta& m : n->input_meta()) grad_inputs.push_back(meta_json(m.sizes, m.dtype));
    nlohmann::json saved = nlohmann::json::array();
    for (const auto& [name, t] : n->saved_tensors()) {
      nlohmann::json s = meta_json(t.sizes(), t.dtype());
      s["name"] = name;
      saved.push_back(s);
    }
    nlohmann::json next = nlohmann::json::array();
    for (size_t e = 0; e < g.next.size(); ++e) {
      if (g.next[e] < 0) next.push_back(nullptr);
      else next.push_back({{"node", g.next[e]}, {"input_nr", g.next_input_nr[e]}});
    }
    nlohmann::json entry = {{"id", i},
                            {"name", n->name()},
                            {"forward", n->forward_description()},
                            {"sequence_nr", n->sequence_nr()},
                            {"leaf", g.leaf},
                            {"grad_inputs", grad_inputs},
                            {"saved", saved},
                            {"next", next}};
    if (g.leaf) {
      entry["parameter"] = g.parameter.empty() ? nlohmann::json(nullptr) : nlohmann::json(g.parameter);
      const Tensor v = static_cast<const autograd::AccumulateGrad*>(n)->variable();
      if (v.defined()) entry["variable"] = meta_json(v.sizes(), v.dtype());
    }
    list.push_back(entry);
  }
  return {{"model", b.config.model.name},
          {"batch_size", b.input.size(0)},
          {"loss", loss.item<double>()},
          {"root", 0},
          {"nodes", list},
          {"unreached_parameters", unreached}};
}

}  // namespace

int inspect_autograd(const InspectModelCommand& command) {
  EMBER_CHECK(!(command.dot && command.json), "inspect autograd: give --dot or --json, not both");
  const SampleBatch batch = sample_batch(command);
  // Anomaly mode makes every node keep its forward call with the argument shapes.
  const Tensor loss = [&] {
    autograd::DetectAnomalyGuard describe_calls;
    return sample_loss(batch);
  }();
  std::map<const TensorImpl*, std::string> names;
  for (const auto& [name, p] : batch.model.module->named_parameters()) names[p.impl()] = name;
  const std::shared_ptr<Node> root = loss.grad_fn();
  EMBER_CHECK(root != nullptr, "inspect autograd: the loss of model ", batch.config.model.name,
              " has no grad_fn (no parameter requires grad)");
  const std::vector<GraphNode> nodes = walk(root, names);
  std::vector<std::string> unreached;
  for (const auto& [name, p] : batch.model.module->named_parameters()) {
    bool found = false;
    for (const GraphNode& g : nodes) found = found || g.parameter == name;
    if (!found && p.requires_grad()) unreached.push_back(name);
  }
  if (command.json) print_json(graph_json(batch, loss, nodes, unreached));
  else if (command.dot) print_dot(nodes);
  else print_text(batch, nodes, unreached);
  return 0;
}

}  // namespace ember::cli
