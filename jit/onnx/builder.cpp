// ModelBuilder (Note [ONNX export] in jit/onnx/builder.h).
#include "jit/onnx/builder.h"

#include <bit>

#include "ember/error.h"
#include "ember/ops.h"

namespace ember::onnx {

int32_t elem_type(DType t) {
  using P = ::onnx::TensorProto;
  switch (t) {
    case DType::Float32: return P::FLOAT;
    case DType::Float64: return P::DOUBLE;
    case DType::Float16: return P::FLOAT16;
    case DType::BFloat16: return P::BFLOAT16;
    case DType::Int32: return P::INT32;
    case DType::Int64: return P::INT64;
    case DType::UInt8: return P::UINT8;
    case DType::Bool: return P::BOOL;
  }
  EMBER_FAIL("onnx::export_graph: dtype ", static_cast<int>(t), " has no ONNX element type");
}

namespace {

::onnx::AttributeProto& new_attr(::onnx::NodeProto& node, const std::string& name,
                                 ::onnx::AttributeProto::AttributeType type) {
  ::onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return *a;
}

}  // namespace

void attr_int(::onnx::NodeProto& node, const std::string& name, int64_t value) {
  new_attr(node, name, ::onnx::AttributeProto::INT).set_i(value);
}

void attr_ints(::onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  ::onnx::AttributeProto& a = new_attr(node, name, ::onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}

void attr_float(::onnx::NodeProto& node, const std::string& name, double value) {
  new_attr(node, name, ::onnx::AttributeProto::FLOAT).set_f(static_cast<float>(value));
}

void attr_str(::onnx::NodeProto& node, const std::string& name, const std::string& value) {
  new_attr(node, name, ::onnx::AttributeProto::STRING).set_s(value);
}

ModelBuilder::ModelBuilder(::onnx::GraphProto& graph, const jit::Graph& source, std::string batch_dim)
    : graph_(graph), source_(source), batch_dim_(std::move(batch_dim)) {}

std::string ModelBuilder::fresh(const std::string& hint) {
  std::string name = hint;
  for (int i = 1; used_.count(name) != 0; ++i) name = hint + "_" + std::to_string(i);
  used_.insert(name);
  return name;
}

void ModelBuilder::reserve(const jit::Value* v, const std::string& name) {
  used_.insert(name);
  reserved_[v] = name;
}

std::string ModelBuilder::define(const jit::Value* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  auto r = reserved_.find(v);
  const std::string name = r != reserved_.end() ? r->second : fresh("v" + std::to_string(v->id));
  names_[v] = name;
  return name;
}

void ModelBuilder::bind(const jit::Value* v, const std::string& name) {
  used_.insert(name);
  names_[v] = name;
}

const std::string& ModelBuilder::name(const jit::Value* v) const {
  auto it = names_.find(v);
  EMBER_CHECK(it != names_.end(), "onnx::export_graph: value ", v->ref(),
              " is read before it is defined (or is an output the mapping does not produce)");
  return it->second;
}

::onnx::NodeProto& ModelBuilder::add(const std::string& op_type, const std::vector<std::string>& inputs,
                                     const std::vector<std::string>& outputs) {
  ::onnx::NodeProto* node = graph_.add_node();
  node->set_op_type(op_type);
  for (const std::string& in : inputs) node->add_input(in);
  for (const std::string& out : outputs) node->add_output(out);
  return *node;
}

std::string ModelBuilder::op(const std::string& op_type, const std::vector<std::string>& inputs,
                             const std::string& hint) {
  std::string out = fresh(hint);
  add(op_type, inputs, {out});
  return out;
}

void ModelBuilder::initializer(const Tensor& t, const std::string& name) {
  const Tensor c = t.to(Device::cpu()).contiguous();
  ::onnx::TensorProto* proto = graph_.add_initializer();
  proto->set_name(name);
  proto->set_data_type(elem_type(c.dtype()));
  for (int64_t s : c.sizes()) proto->add_dims(s);
  // raw_data is little-endian, as ember's tensors are on every platform it builds for.
  if (c.numel() > 0) proto->set_raw_data(c.data_ptr(), c.nbytes());
}

std::string ModelBuilder::ints(const std::vector<int64_t>& values) {
  auto it = int_constants_.find(values);
  if (it != int_constants_.end()) return it->second;
  const std::string name = fresh("ints");
  ::onnx::TensorProto* proto = graph_.add_initializer();
  proto->set_name(name);
  proto->set_data_type(::onnx::TensorProto::INT64);
  proto->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) proto->add_int64_data(v);
  int_constants_[values] = name;
  return name;
}

std::string ModelBuilder::scalar(double value, DType dtype) {
  const auto key = std::make_pair(std::bit_cast<uint64_t>(value), static_cast<int>(dtype));
  auto it = scalar_constants_.find(key);
  if (it != scalar_constants_.end()) return it->second;
  const std::string name = fresh("scalar");
  initializer(scalar_tensor(value, TensorOptions(DType::Float64)).to(dtype), name);
  scalar_constants_[key] = name;
  return name;
}

std::string ModelBuilder::cast(const std::string& x, DType from, DType to) {
  if (from == to) return x;
  std::string out = op("Cast", {x}, x + "/" + std::string(dtype_name(to)));
  attr_int(last(), "to", elem_type(to));
  return out;
}

std::string ModelBuilder::batch() {
  if (!batch_.empty()) return batch_;
  for (const jit::Value* v : source_.inputs()) {
    if (v->role != jit::InputRole::User) continue;
    for (size_t d = 0; d < v->shape.size(); ++d) {
      if (v->shape[d] != jit::SymDim{1, 0}) continue;
      batch_ = op("Shape", {name(v)}, "batch");
      attr_int(last(), "start", static_cast<int64_t>(d));
      attr_int(last(), "end", static_cast<int64_t>(d + 1));
      return batch_;
    }
  }
  EMBER_FAIL("onnx::export_graph: a shape depends on the batch N, but no input of the graph has a dimension N "
             "to read it from");
}

std::string ModelBuilder::shape(const jit::SymShape& dims) {
  bool dynamic = false;
  std::vector<int64_t> values;
  for (const jit::SymDim& d : dims) {
    dynamic = dynamic || !d.is_static();
    values.push_back(d.offset);
  }
  if (!dynamic) return ints(values);
  std::vector<std::string> parts;
  for (const jit::SymDim& d : dims) {
    if (d.is_static()) {
      parts.push_back(ints({d.offset}));
      continue;
    }
    std::string n = batch();
    if (d.coeff != 1) n = op("Mul", {n, ints({d.coeff})}, "batch_dim");
    if (d.offset != 0) n = op("Add", {n, ints({d.offset})}, "batch_dim");
    parts.push_back(n);
  }
  std::string out = op("Concat", parts, "shape");
  attr_int(last(), "axis", 0);
  return out;
}

std::string ModelBuilder::dim_param(const jit::SymDim& d) const {
  std::string s = d.coeff == 1 ? batch_dim_ : std::to_string(d.coeff) + "*" + batch_dim_;
  if (d.offset > 0) s += "+" + std::to_string(d.offset);
  if (d.offset < 0) s += std::to_string(d.offset);
  return s;
}

void ModelBuilder::set_type(::onnx::ValueInfoProto& info, const std::string& name, DType dtype,
                            const jit::SymShape& shape) const {
  info.set_name(name);
  ::onnx::TypeProto_Tensor* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type(dtype));
  ::onnx::TensorShapeProto* s = tensor->mutable_shape();
  for (const jit::SymDim& d : shape) {
    ::onnx::TensorShapeProto_Dimension* dim = s->add_dim();
    if (d.is_static()) dim->set_dim_value(d.offset);
    else dim->set_dim_param(dim_param(d));
  }
}

void ModelBuilder::add_value_info(const jit::Value* v) {
  set_type(*graph_.add_value_info(), name(v), v->dtype, v->shape);
}

}  // namespace ember::onnx
