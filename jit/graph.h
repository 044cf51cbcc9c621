// The graph IR of ember::jit: what the tracer records, the passes rewrite, the
// executor runs and archives store.
//
// Note [The graph IR]
// A Graph is a list of Nodes in execution order over SSA Values: every Value
// is defined once (a graph input, a constant tensor, or one output of one
// node) and never reassigned. A Node is one call of a dispatched op
// (its OpEntry, so the schema is at hand) with one Arg per schema argument:
// a Value for a Tensor argument, a list of Values for Tensor[], or a
// constant IValue (an "attribute") for everything else. In-place ops and
// views are recorded as they ran: an in-place node's output is a new Value
// that aliases its mutated input, and the nodes after it use whichever
// Value the traced program used. Passes therefore leave in-place, view and
// random ops alone (jit/op_traits.h says which ops those are).
//
// Shapes are symbolic in one size, the batch N: a dimension is coeff*N+offset
// (SymDim), static when coeff is 0. Integer attributes can be symbolic the
// same way (view(%x, [N, 784]), reshape to [N*16, 64]): the tracer finds
// them by tracing at two batch sizes (Note [Dynamic batch] in jit/trace.cpp)
// and the executor evaluates them for the batch it is given.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dispatcher.h"
#include "core/ivalue.h"

namespace ember::jit {

// coeff * N + offset; static when coeff == 0.
struct SymDim {
  int64_t coeff = 0;
  int64_t offset = 0;
  bool is_static() const { return coeff == 0; }
  int64_t eval(int64_t n) const { return coeff * n + offset; }
  bool operator==(const SymDim&) const = default;
};
using SymShape = std::vector<SymDim>;
std::string to_string(const SymDim& d);  // "784", "*" (N), "*16" (16N), "*16+1"
std::string shape_string(const SymShape& s);  // "[*, 784]"
SymShape static_shape(IntArrayRef sizes);
std::vector<int64_t> eval_shape(const SymShape& s, int64_t n);

class Node;

enum class ValueKind : uint8_t { Input, Constant, NodeOutput };
// What a graph input stands for: an argument of the traced function, or a
// module parameter / buffer bound by name.
enum class InputRole : uint8_t { User, Parameter, Buffer };

struct Value {
  int64_t id = 0;    // unique in its graph; printed as %id unless named
  std::string name;  // inputs: "x", "fc1.weight"; empty for the others
  ValueKind kind = ValueKind::NodeOutput;
  InputRole role = InputRole::User;  // inputs only
  Node* producer = nullptr;          // NodeOutput only
  size_t index = 0;                  // which output of the producer
  bool defined = true;               // false: an op returned an undefined tensor here
  DType dtype = DType::Float32;
  Device device = Device::cpu();
  SymShape shape;
  Tensor constant;  // Constant only

  std::string ref() const;  // "%x", "%7"
};

// One argument of a node, in schema order.
struct Arg {
  enum class Kind : uint8_t { Value, ValueList, Constant };
  Kind kind = Kind::Constant;
  Value* value = nullptr;             // Kind::Value
  std::vector<Value*> values;         // Kind::ValueList (nullptr: an undefined entry)
  IValue constant;                    // Kind::Constant
  std::vector<SymDim> sym;            // Kind::Constant, non-empty when the int / int[] depends on N

  static Arg of_value(Value* v) {
    Arg a;
    a.kind = Kind::Value;
    a.value = v;
    return a;
  }
  static Arg of_constant(IValue c) {
    Arg a;
    a.constant = std::move(c);
    return a;
  }
  // The attribute for batch size n (sym evaluated into the int or int[]).
  IValue materialize(int64_t n) const;
};

class Node {
 public:
  const OpEntry* op = nullptr;
  std::vector<Arg> args;
  std::vector<Value*> outputs;
  bool list_output = false;  // the op returns Tensor[]; outputs are its elements
  // Random ops (jit/op_traits.h): the Philox blocks the op draws. The
  // executor reserves them from the default generator on every run and
  // passes the fresh (seed, offset), so each run draws new numbers.
  SymDim random_blocks;

  const std::string& name() const { return op->name(); }
  // Every Value this node reads, in argument order.
  std::vector<Value*> input_values() const;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Value* add_input(std::string name, InputRole role, DType dtype, Device device, SymShape shape);
  Value* add_constant(Tensor t);
  // Appends a node; its outputs are created with default metadata for the
  // caller to fill in.
  Node* add_node(const OpEntry* op, std::vector<Arg> args, size_t num_outputs);
  // Inserts a node before position `pos` of nodes().
  Node* insert_node(size_t pos, const OpEntry* op, std::vector<Arg> args, size_t num_outputs);

  const std::vector<Value*>& inputs() const { return inputs_; }
  std::vector<Value*>& outputs() { return outputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*> constants() const;

  // Every use of `from` (node arguments, graph outputs) becomes `to`.
  void replace_all_uses(const Value* from, Value* to);
  // Removes the nodes for which `dead` is true; their outputs must be unused.
  void remove_nodes_if(const std::function<bool(const Node&)>& dead);
  // Drops constants no node and no output uses.
  void remove_unused_constants();
  // Number of argument and output references to each value, by id.
  std::vector<int64_t> use_counts() const;

  // Checks the SSA invariants: every value a node reads is an input, a
  // constant or an output of an earlier node of this graph; outputs exist.
  // Raises an ember::Error naming the node. `where` names the caller.
  void verify(const std::string& where) const;
  // A deep copy (constants share their tensors).
  std::unique_ptr<Graph> clone() const;

  // TorchScript-like text, and Graphviz DOT (jit/graph_print.cpp).
  std::string str() const;
  std::string dot() const;

  bool training = false;       // the mode of the module when it was traced
  bool dynamic_batch = false;  // shapes may depend on N
  std::vector<std::string> passes_applied;
  std::vector<std::string> warnings;  // from tracing

  int64_t next_id() const { return next_id_; }
  // Gives `v` the id it had elsewhere (a loaded archive keeps the ids it was
  // saved with); the caller keeps ids unique.
  void set_id(Value* v, int64_t id) {
    v->id = id;
    next_id_ = std::max(next_id_, id + 1);
  }

 private:
  Value* new_value(ValueKind kind);
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  int64_t next_id_ = 0;
};

}  // namespace ember::jit
