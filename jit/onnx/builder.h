// The ONNX graph under construction (Note [ONNX export]): names, nodes,
// initializers, value types and the shape tensors that depend on the batch.
//
// Note [ONNX export]
// export_graph walks the ember graph in execution order and asks the op
// table (op_table.h) to emit each node as one or more ONNX nodes. Every
// ember Value gets one ONNX name: user inputs keep theirs ("x"), parameters
// and buffers become initializers under their names ("fc1.weight"), node
// outputs are "v<id>" and graph outputs "output" (or "output0", ...).
// Values an op emits on its way (a transposed key, a scale constant) get
// fresh names derived from the node's output. ONNX operators need their
// inputs of one type where ember promotes (float32 * a float64 wrapped
// number), so mappings cast to the dtype the ember node computed in.
//
// The batch N: a value of shape [N, 784] has the dim_param "N"; a dimension
// 16N or N+1 gets the dim_param "16*N" / "N+1" (symbolic names only: ONNX
// has no arithmetic on dim_params). Shapes that ops take as tensors (Reshape,
// Expand) are constants when at most one entry depends on N (it becomes -1
// for Reshape, 1 for Expand where the input already has that size); otherwise
// they are computed in the graph from the first user input whose dim is N.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/graph.h"

namespace ember::onnx {

// TensorProto::DataType of an ember dtype.
int32_t elem_type(DType t);

// Attributes of a node.
void attr_int(::onnx::NodeProto& node, const std::string& name, int64_t value);
void attr_ints(::onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values);
void attr_float(::onnx::NodeProto& node, const std::string& name, double value);
void attr_str(::onnx::NodeProto& node, const std::string& name, const std::string& value);

class ModelBuilder {
 public:
  ModelBuilder(::onnx::GraphProto& graph, const jit::Graph& source, std::string batch_dim);

  // A name not used yet, from `hint`.
  std::string fresh(const std::string& hint);
  // Graph outputs get their name ("output") before the node that defines them.
  void reserve(const jit::Value* v, const std::string& name);
  // Binds `v` to its reserved name, or to "v<id>"; returns the name.
  std::string define(const jit::Value* v);
  // The ONNX name of an ember value (bound by an earlier node or input).
  void bind(const jit::Value* v, const std::string& name);
  bool is_bound(const jit::Value* v) const { return names_.count(v) != 0; }
  const std::string& name(const jit::Value* v) const;

  ::onnx::NodeProto& add(const std::string& op_type, const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs);
  // One node of one output named from `hint`; returns the output's name.
  std::string op(const std::string& op_type, const std::vector<std::string>& inputs, const std::string& hint);
  ::onnx::NodeProto& last() { return *graph_.mutable_node(graph_.node_size() - 1); }

  // Initializers: a tensor under `name`, 1-D int64 constants, 0-d scalars.
  void initializer(const Tensor& t, const std::string& name);
  std::string ints(const std::vector<int64_t>& values);
  std::string scalar(double value, DType dtype);
  // `x` (of dtype `from`) as dtype `to`; `x` itself when they are equal.
  std::string cast(const std::string& x, DType from, DType to);

  // A 1-D int64 tensor of the sizes `dims` at the run's batch size.
  std::string shape(const jit::SymShape& dims);
  // The batch N as a 1-D int64 tensor of one element.
  std::string batch();

  void set_type(::onnx::ValueInfoProto& info, const std::string& name, DType dtype, const jit::SymShape& shape) const;
  void add_value_info(const jit::Value* v);

 private:
  std::string dim_param(const jit::SymDim& d) const;

  ::onnx::GraphProto& graph_;
  const jit::Graph& source_;
  std::string batch_dim_;
  std::unordered_map<const jit::Value*, std::string> names_;
  std::unordered_map<const jit::Value*, std::string> reserved_;
  std::set<std::string> used_;
  std::map<std::vector<int64_t>, std::string> int_constants_;
  std::map<std::pair<uint64_t, int>, std::string> scalar_constants_;  // (bits of the value, dtype)
  std::string batch_;
};

}  // namespace ember::onnx
