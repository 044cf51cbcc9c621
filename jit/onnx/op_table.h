// The table from ember op names to the functions that emit them as ONNX
// nodes (Note [ONNX export] in jit/onnx/builder.h), and the view of one
// ember node those functions read their arguments through.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "jit/onnx/builder.h"

namespace ember::onnx {

// One ember node being exported.
class NodeExport {
 public:
  NodeExport(ModelBuilder& builder, const jit::Node& node, const std::vector<int64_t>& use_counts)
      : b(builder), node(node), uses_(use_counts) {}

  ModelBuilder& b;
  const jit::Node& node;

  // Tensor arguments (schema position i): present (not None), the value, its
  // ONNX name, and its name cast to `dtype`.
  bool has(size_t i) const;
  const jit::Value& value(size_t i) const;
  std::string in(size_t i) const;
  std::string in_as(size_t i, DType dtype) const;
  int64_t rank(size_t i) const { return static_cast<int64_t>(value(i).shape.size()); }
  // The elements of a Tensor[] argument.
  std::vector<const jit::Value*> values(size_t i) const;

  // Constant arguments.
  int64_t int_arg(size_t i) const;
  std::optional<int64_t> opt_int(size_t i) const;
  std::vector<int64_t> ints_arg(size_t i) const;
  double float_arg(size_t i) const;  // float or Scalar
  std::optional<double> opt_float(size_t i) const;
  bool bool_arg(size_t i) const;
  std::string str_arg(size_t i) const;
  std::optional<DType> opt_dtype(size_t i) const;
  // An int argument as a size that may depend on the batch (Arg::sym).
  jit::SymDim sym_int(size_t i) const;

  // Outputs: the value, whether anything reads it, and its ONNX name (the
  // first call defines it).
  const jit::Value& out_value(size_t i = 0) const { return *node.outputs.at(i); }
  DType out_dtype(size_t i = 0) const { return out_value(i).dtype; }
  int64_t out_rank(size_t i = 0) const { return static_cast<int64_t>(out_value(i).shape.size()); }
  bool used(size_t i) const;
  std::string out(size_t i = 0);
  // A fresh name for a value the mapping emits on its way: "<stem>/<what>",
  // the stem naming the node's first output ("v12").
  std::string tmp(const std::string& what) const;
  std::string stem() const;

  // `dim` in [-rank, rank) made non-negative; an error naming the node otherwise.
  int64_t axis(int64_t dim, int64_t rank) const;
  // Raises an ember::Error naming the node and the op.
  [[noreturn]] void fail(const std::string& why) const;
  // A used output the mapping does not produce is an error.
  void require_unused(size_t i, const std::string& what) const;
  std::string describe() const;  // "%9 = convolution"

 private:
  const jit::Arg& arg(size_t i) const;
  const std::vector<int64_t>& uses_;
};

using OpExporter = void (*)(NodeExport& e);
using OpTable = std::map<std::string, OpExporter>;

// The families, one file each: ops_elementwise.cpp, ops_reduce.cpp,
// ops_shape.cpp, ops_nn.cpp, ops_attention.cpp, ops_fused.cpp.
void add_elementwise_ops(OpTable& table);
void add_reduce_ops(OpTable& table);
void add_shape_ops(OpTable& table);
void add_nn_ops(OpTable& table);
void add_attention_ops(OpTable& table);
void add_fused_ops(OpTable& table);

const OpTable& op_table();

}  // namespace ember::onnx
