// The Tracer dispatch layer: records every op call of a traced function into
// a Graph (Note [Tracing] below). trace.cpp drives it; wiring/wire.cpp
// installs it.
//
// Note [Tracing]
// A TraceSession adds the Tracer key to the thread's included keys. Tracer is
// the highest key below Profiler, above Autocast and Autograd, so it sees the
// calls the program made (an add of two float32 tensors, not the casts
// autocast inserts or the backward ops autograd records), and one boxed
// fallback serves every op. For each call the fallback
//  1. looks up each tensor argument: a Value of the graph (an input or a
//     result of a recorded node) or, when the call reads at least one Value,
//     a new constant; a call that reads no computed Value (only untracked
//     tensors and constants) is not recorded: its result is a constant too
//     (a mask built from factories, a frozen weight's transpose), unless the
//     op draws random numbers;
//  2. runs the op below the Tracer key (Dispatcher::call_boxed), so the
//     program gets real results and ops called from inside kernels are not
//     recorded;
//  3. adds a Node with the arguments (non-tensor ones as attributes) and binds
//     each result tensor to a new Value; an in-place op rebinds its mutated
//     tensor to its output Value, so later uses read the mutated value.
// Tensors are identified by their TensorImpl, held alive for the session so
// that an address is never reused for another tensor.
#pragma once

#include <unordered_map>

#include "jit/graph.h"

namespace ember::jit {

class TraceSession {
 public:
  // `report`: print warnings to stderr (off for the second, batch-probing trace).
  TraceSession(Graph& graph, bool strict, bool report = true);
  ~TraceSession();
  TraceSession(const TraceSession&) = delete;
  TraceSession& operator=(const TraceSession&) = delete;

  static TraceSession* current();

  void bind(const Tensor& t, Value* v);
  // The Value a tensor is bound to, or nullptr.
  Value* lookup(const Tensor& t) const;
  // The bound Value, or a new constant for an untracked tensor.
  Value* value_or_constant(const Tensor& t);

  void record(const OpEntry& op, Stack& stack);
  void escape(const Tensor& t, const char* what);
  // Warns (or raises in strict mode) about constants modified in place after
  // the graph captured them.
  void check_constants();
  void warn(const std::string& message);

 private:
  struct Binding {
    Tensor tensor;  // keeps the TensorImpl alive
    Value* value;
    uint32_t version;  // constants: the storage version when captured
  };
  Graph& graph_;
  bool strict_;
  bool report_;
  TraceSession* previous_;
  std::unordered_map<const TensorImpl*, Binding> bindings_;
  const Node* last_node_ = nullptr;
};

void install_tracer();

}  // namespace ember::jit
