// NodeExport's argument readers and the op table (jit/onnx/op_table.h).
#include "jit/onnx/op_table.h"

#include "ember/error.h"

namespace ember::onnx {

const jit::Arg& NodeExport::arg(size_t i) const {
  if (i >= node.args.size()) fail("argument " + std::to_string(i) + " is missing");
  return node.args[i];
}

std::string NodeExport::describe() const {
  std::string outs;
  for (const jit::Value* v : node.outputs) outs += (outs.empty() ? "" : ", ") + v->ref();
  return (outs.empty() ? "" : outs + " = ") + node.name();
}

void NodeExport::fail(const std::string& why) const {
  EMBER_FAIL("onnx::export_graph: node ", describe(), ": ", why);
}

bool NodeExport::has(size_t i) const {
  const jit::Arg& a = arg(i);
  return a.kind == jit::Arg::Kind::Value && a.value != nullptr && a.value->defined;
}

const jit::Value& NodeExport::value(size_t i) const {
  if (!has(i)) fail("argument '" + node.op->schema().args.at(i).name + "' is not a defined tensor");
  return *arg(i).value;
}

std::string NodeExport::in(size_t i) const { return b.name(&value(i)); }

std::string NodeExport::in_as(size_t i, DType dtype) const {
  const jit::Value& v = value(i);
  if (v.dtype == dtype) return in(i);
  if (v.kind == jit::ValueKind::Constant) {  // convert now rather than in the graph
    const std::string name = b.fresh(in(i) + "/" + std::string(dtype_name(dtype)));
    b.initializer(v.constant.to(dtype), name);
    return name;
  }
  return b.cast(in(i), v.dtype, dtype);
}

std::vector<const jit::Value*> NodeExport::values(size_t i) const {
  const jit::Arg& a = arg(i);
  if (a.kind != jit::Arg::Kind::ValueList) fail("argument " + std::to_string(i) + " is not a tensor list");
  std::vector<const jit::Value*> out;
  for (const jit::Value* v : a.values) {
    if (v == nullptr || !v->defined) fail("a tensor list argument holds an undefined tensor");
    out.push_back(v);
  }
  return out;
}

int64_t NodeExport::int_arg(size_t i) const {
  std::optional<int64_t> v = opt_int(i);
  if (!v) fail("argument " + std::to_string(i) + " is None where an int is expected");
  return *v;
}

std::optional<int64_t> NodeExport::opt_int(size_t i) const {
  const jit::Arg& a = arg(i);
  if (a.kind == jit::Arg::Kind::Constant) {
    const IValue::Payload& p = a.constant.payload();
    if (std::holds_alternative<NoneValue>(p)) return std::nullopt;
    if (const auto* x = std::get_if<int64_t>(&p)) return *x;
    if (const auto* s = std::get_if<Scalar>(&p); s && !s->is_floating_point()) return s->to<int64_t>();
  }
  fail("argument " + std::to_string(i) + " is not a constant int");
}

std::vector<int64_t> NodeExport::ints_arg(size_t i) const {
  const jit::Arg& a = arg(i);
  if (a.kind == jit::Arg::Kind::Constant)
    if (const auto* x = std::get_if<std::vector<int64_t>>(&a.constant.payload())) return *x;
  fail("argument " + std::to_string(i) + " is not a constant int[]");
}

double NodeExport::float_arg(size_t i) const {
  std::optional<double> v = opt_float(i);
  if (!v) fail("argument " + std::to_string(i) + " is None where a number is expected");
  return *v;
}

std::optional<double> NodeExport::opt_float(size_t i) const {
  const jit::Arg& a = arg(i);
  if (a.kind == jit::Arg::Kind::Constant) {
    const IValue::Payload& p = a.constant.payload();
    if (std::holds_alternative<NoneValue>(p)) return std::nullopt;
    if (const auto* x = std::get_if<double>(&p)) return *x;
    if (const auto* x = std::get_if<int64_t>(&p)) return static_cast<double>(*x);
    if (const auto* s = std::get_if<Scalar>(&p)) return s->to<double>();
  }
  fail("argument " + std::to_string(i) + " is not a constant number");
}

bool NodeExport::bool_arg(size_t i) const {
  const jit::Arg& a = arg(i);
  if (a.kind == jit::Arg::Kind::Constant)
    if (const auto* x = std::get_if<bool>(&a.constant.payload())) return *x;
  fail("argument " + std::to_string(i) + " is not a constant bool");
}

std::string NodeExport::str_arg(size_t i) const {
  const jit::Arg& a = arg(i);
  if (a.kind == jit::Arg::Kind::Constant)
    if (const auto* x = std::get_if<std::string>(&a.constant.payload())) return *x;
  fail("argument " + std::to_string(i) + " is not a constant string");
}

std::optional<DType> NodeExport::opt_dtype(size_t i) const {
  const jit::Arg& a = arg(i);
  if (a.kind == jit::Arg::Kind::Constant) {
    if (a.constant.is_none()) return std::nullopt;
    if (const auto* x = std::get_if<DType>(&a.constant.payload())) return *x;
  }
  fail("argument " + std::to_string(i) + " is not a constant dtype");
}

jit::SymDim NodeExport::sym_int(size_t i) const {
  const jit::Arg& a = arg(i);
  if (!a.sym.empty()) return a.sym[0];
  return {0, int_arg(i)};
}

bool NodeExport::used(size_t i) const {
  const jit::Value* v = node.outputs.at(i);
  return static_cast<size_t>(v->id) < uses_.size() && uses_[static_cast<size_t>(v->id)] > 0;
}

std::string NodeExport::out(size_t i) { return b.define(node.outputs.at(i)); }

std::string NodeExport::stem() const {
  return node.outputs.empty() ? node.name() : "v" + std::to_string(node.outputs[0]->id);
}

std::string NodeExport::tmp(const std::string& what) const { return b.fresh(stem() + "/" + what); }

int64_t NodeExport::axis(int64_t dim, int64_t rank) const {
  const int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r)
    fail("dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

void NodeExport::require_unused(size_t i, const std::string& what) const {
  if (i < node.outputs.size() && used(i))
    fail("its output " + std::to_string(i) + " (" + what + ") is used, and ONNX has no equivalent of it");
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_elementwise_ops(t);
    add_reduce_ops(t);
    add_shape_ops(t);
    add_nn_ops(t);
    add_attention_ops(t);
    add_fused_ops(t);
    return t;
  }();
  return table;
}

}  // namespace ember::onnx
