// ember::jit: capture a model as a static graph, inspect it, run it.
//
//   Net net;                                    // any module whose forward takes one Tensor
//   net->eval();
//   ember::jit::GraphModule g = ember::jit::trace(net, ember::randn({8, 1, 28, 28}));
//   std::cout << g.graph_text();                // graph(%x : Float(*, 1, 28, 28), %0.weight : ...
//   ember::Tensor y = g(ember::randn({3, 1, 28, 28}));   // any batch size: dim 0 is symbolic
//
// trace() runs the model once with the Tracer dispatch key active and records
// every dispatched op (name, schema, constant arguments, shapes, dtypes,
// devices). Parameters and buffers become named graph inputs bound to the
// module's own tensors, so training the module trains the graph (or baked-in
// constants with `freeze`). Running a graph calls the same ops through the
// dispatcher, so autograd records them as in eager mode: a traced graph is
// differentiable. docs/graphs.md describes the IR, its text form and limits.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/tensor.h"

namespace ember::nn {
class Module;
template <class Impl> class ModuleHolder;
}  // namespace ember::nn

namespace ember::jit {

class Graph;      // jit/graph.h
struct CheckPlan;  // jit/optimize.cpp

struct TraceOptions {
  // Dim 0 of every input is the batch N: the model is traced at the example
  // batch and at one more, and sizes that change with N become symbolic.
  bool dynamic_batch = true;
  // A value read into C++ during the trace (item(), data_ptr<T>()), or
  // control flow that differs between the two batch sizes, is an ember::Error
  // instead of a warning.
  bool strict = false;
  // Parameters and buffers become constants of the graph instead of inputs.
  bool freeze = false;
};

struct OptimizeOptions {
  // Pass names in the order to run (ember inspect graph --passes lists them);
  // empty: every pass in the default order (constant_folding, simplify, cse,
  // batchnorm_folding, fusion, dce).
  std::vector<std::string> passes;
  // Self-check: every later forward also runs the graph as it was before each
  // pass on the same inputs and raises an ember::Error naming the pass and
  // the first value that differs beyond tolerance. EMBER_JIT_CHECK=1 turns
  // it on for every optimize() call.
  bool check = false;
  // Append the graph's text after each pass to the returned log.
  bool print_graphs = false;
};

using TracedFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// A graph with the tensors bound to its parameter and buffer inputs.
class GraphModule {
 public:
  GraphModule(std::shared_ptr<Graph> graph, std::vector<Tensor> bound);

  // Runs the graph on `inputs` (one per user input of the graph). Shapes and
  // dtypes are checked against the graph's (dim 0 may differ when the batch
  // is dynamic); a mismatch is an ember::Error naming the input.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs) const;
  // The graph of one input and one output.
  Tensor forward(const Tensor& input) const;
  Tensor operator()(const Tensor& input) const { return forward(input); }

  // The bound parameters (inputs with role Parameter), e.g. for an optimiser.
  std::vector<Tensor> parameters() const;
  // Names and tensors of every bound input (parameters and buffers).
  std::vector<std::pair<std::string, Tensor>> named_bound() const;

  std::string graph_text() const;  // graph(%x : Float(*, 784), ...): TorchScript-like
  std::string graph_dot() const;   // Graphviz DOT
  // Tracing warnings (escapes, batch-dependent values).
  const std::vector<std::string>& warnings() const;

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }
  const std::shared_ptr<Graph>& graph_ptr() const { return graph_; }

 private:
  friend std::vector<std::string> optimize(GraphModule& module, const OptimizeOptions& options);
  std::vector<Tensor> all_inputs(const std::vector<Tensor>& inputs) const;

  std::shared_ptr<Graph> graph_;
  std::vector<Tensor> bound_;          // one per non-user input, in graph order
  std::shared_ptr<const CheckPlan> check_;  // set by optimize() with check on
};

// Writes the graph and its bound tensors to one file (docs/graphs.md has the
// format: a safetensors file whose metadata holds the graph as JSON).
void save(const GraphModule& module, const std::string& path);
// Reads an archive written by save(); the file is untrusted input: anything
// malformed is an ember::Error naming the file and the problem.
GraphModule load(const std::string& path);

// Runs graph passes on the module's graph, in place, and returns their log
// (one line per change, "cse: %7 = mul(%3, %2) is %4").
std::vector<std::string> optimize(GraphModule& module, const OptimizeOptions& options = {});

// Traces a function of tensors; tensors it uses that are not inputs become
// constants of the graph.
GraphModule trace_function(const TracedFunction& fn, const std::vector<Tensor>& example_inputs,
                           const TraceOptions& options = {});
// trace(fn, inputs): any callable taking and returning std::vector<Tensor>
// (module holders take the overload below).
template <class F>
  requires(!requires { typename F::ImplType; })
GraphModule trace(const F& fn, const std::vector<Tensor>& example_inputs, const TraceOptions& options = {}) {
  return trace_function(TracedFunction(fn), example_inputs, options);
}
// Traces `forward` of `module`: its parameters and buffers become named inputs
// (or constants with options.freeze). The graph records module->is_training().
GraphModule trace_module(const std::shared_ptr<nn::Module>& module, const TracedFunction& forward,
                         const std::vector<Tensor>& example_inputs, const TraceOptions& options = {});

// A module holder whose forward takes and returns one Tensor.
template <class Impl>
GraphModule trace(const nn::ModuleHolder<Impl>& module, const Tensor& example_input, const TraceOptions& options = {}) {
  std::shared_ptr<Impl> impl = module.ptr();
  return trace_module(
      impl, [raw = impl.get()](const std::vector<Tensor>& x) { return std::vector<Tensor>{raw->forward(x[0])}; },
      {example_input}, options);
}

}  // namespace ember::jit
