// ember::jit::GraphModule (include/ember/jit.h).
#include "ember/jit.h"
#include "jit/executor.h"
#include "jit/optimize.h"

namespace ember::jit {

GraphModule::GraphModule(std::shared_ptr<Graph> graph, std::vector<Tensor> bound)
    : graph_(std::move(graph)), bound_(std::move(bound)) {
  EMBER_CHECK(graph_ != nullptr, "GraphModule: the graph is null");
  size_t bound_inputs = 0;
  for (const Value* v : graph_->inputs()) bound_inputs += v->role != InputRole::User;
  EMBER_CHECK(bound_.size() == bound_inputs, "GraphModule: the graph has ", bound_inputs,
              " parameter and buffer inputs but ", bound_.size(), " tensors are bound");
}

std::vector<Tensor> GraphModule::forward(const std::vector<Tensor>& inputs) const {
  if (check_) return run_checked(*check_, *graph_, all_inputs(inputs));
  return run_graph(*graph_, all_inputs(inputs));
}

std::vector<Tensor> GraphModule::all_inputs(const std::vector<Tensor>& inputs) const {
  size_t users = 0;
  for (const Value* v : graph_->inputs()) users += v->role == InputRole::User;
  EMBER_CHECK(users == inputs.size(), "GraphModule: the graph takes ", users, " inputs, got ", inputs.size());
  std::vector<Tensor> all;
  all.reserve(graph_->inputs().size());
  size_t user = 0, bound = 0;
  for (const Value* v : graph_->inputs()) all.push_back(v->role == InputRole::User ? inputs[user++] : bound_[bound++]);
  return all;
}

Tensor GraphModule::forward(const Tensor& input) const {
  std::vector<Tensor> out = forward(std::vector<Tensor>{input});
  EMBER_CHECK(out.size() == 1, "GraphModule: forward(Tensor) needs a graph with one output; this one has ", out.size());
  return out[0];
}

std::vector<Tensor> GraphModule::parameters() const {
  std::vector<Tensor> out;
  size_t bound = 0;
  for (const Value* v : graph_->inputs()) {
    if (v->role == InputRole::User) continue;
    if (v->role == InputRole::Parameter) out.push_back(bound_[bound]);
    ++bound;
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> GraphModule::named_bound() const {
  std::vector<std::pair<std::string, Tensor>> out;
  size_t bound = 0;
  for (const Value* v : graph_->inputs())
    if (v->role != InputRole::User) out.emplace_back(v->name, bound_[bound++]);
  return out;
}

std::string GraphModule::graph_text() const { return graph_->str(); }
std::string GraphModule::graph_dot() const { return graph_->dot(); }
const std::vector<std::string>& GraphModule::warnings() const { return graph_->warnings; }

}  // namespace ember::jit
