// Running passes on a GraphModule, and the self-check of optimised graphs
// (Note [Self-check]).
//
// Note [Self-check]
// With OptimizeOptions::check (or EMBER_JIT_CHECK=1), optimize() keeps a copy
// of the graph before the first pass and after each pass that changed
// something. A forward then runs every stage on the same inputs, each from
// the same generator state and the same buffer contents, and compares each
// stage with the one before it value by value (passes keep the ids of the
// values they keep). The first value outside tolerance raises an ember::Error
// naming the pass and the node; otherwise the last stage's outputs are
// returned, computed with autograd as usual.
#pragma once

#include "ember/jit.h"
#include "jit/graph.h"

namespace ember::jit {

struct CheckPlan {
  struct Stage {
    std::string pass;  // the pass that produced this stage ("" for the first)
    std::shared_ptr<Graph> graph;
  };
  std::vector<Stage> stages;  // before the first pass, then after each pass that changed the graph
};

// Runs every stage of `plan`, then `final` (the optimised graph), on `inputs`.
std::vector<Tensor> run_checked(const CheckPlan& plan, const Graph& final, const std::vector<Tensor>& inputs);

}  // namespace ember::jit
