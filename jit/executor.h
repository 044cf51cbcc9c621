// Running a graph: every node is one boxed call through the dispatcher, as
// the traced program made it, so autograd, autocast and a running trace see
// the calls as they would in eager mode.
#pragma once

#include <functional>

#include "jit/graph.h"

namespace ember::jit {

// Checks `inputs` (one per graph input, in order) against the graph's input
// types and returns the batch size N they imply (0 when nothing is symbolic).
// A mismatch is an ember::Error naming the input, the expected and the actual
// shape or dtype.
int64_t check_inputs(const Graph& g, const std::vector<Tensor>& inputs, const std::string& who);

// Called after each node with its outputs (used by the self-check).
using NodeObserver = std::function<void(const Node& node, const std::vector<Tensor>& outputs)>;

// Runs the graph and returns its outputs.
std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs, const NodeObserver& observe = {});

}  // namespace ember::jit
