// Text and DOT forms of a graph (jit/graph.h), e.g.
//   graph(%x : Float(*, 784),
//         %fc1.weight : Float(128, 784)):
//     %2 : Float(784, 128) = transpose(%fc1.weight, dim0=0, dim1=1)
//     %3 : Float(*, 128) = mm(%x, %2)
//     return (%3)
#include <sstream>

#include "core/dot_escape.h"
#include "jit/graph.h"

namespace ember::jit {
namespace {

// TorchScript's type names.
const char* type_name(DType t) {
  switch (t) {
    case DType::Float32: return "Float";
    case DType::Float64: return "Double";
    case DType::Float16: return "Half";
    case DType::BFloat16: return "BFloat16";
    case DType::Int32: return "Int";
    case DType::Int64: return "Long";
    case DType::UInt8: return "Byte";
    case DType::Bool: return "Bool";
  }
  return "?";
}

std::string type_string(const Value& v) {
  if (!v.defined) return "None";
  std::string s = std::string(type_name(v.dtype)) + "(";
  for (size_t i = 0; i < v.shape.size(); ++i) s += (i ? ", " : "") + to_string(v.shape[i]);
  if (!v.device.is_cpu()) {
    std::ostringstream d;
    d << v.device;
    s += (v.shape.empty() ? "device=" : ", device=") + d.str();
  }
  return s + ")";
}

std::string attribute_string(const Arg& a) {
  if (a.sym.empty()) {
    if (const auto* str = std::get_if<std::string>(&a.constant.payload())) return "\"" + *str + "\"";
    return a.constant.to_string();
  }
  if (const auto* list = std::get_if<std::vector<int64_t>>(&a.constant.payload())) {
    std::string s = "[";
    for (size_t i = 0; i < list->size(); ++i)
      s += (i ? ", " : "") + (i < a.sym.size() && !a.sym[i].is_static() ? to_string(a.sym[i]) : std::to_string((*list)[i]));
    return s + "]";
  }
  return to_string(a.sym.at(0));
}

std::string arg_string(const Arg& a, const SchemaArg& schema) {
  switch (a.kind) {
    case Arg::Kind::Value: return a.value->ref();
    case Arg::Kind::ValueList: {
      std::string s = "[";
      for (size_t i = 0; i < a.values.size(); ++i) s += (i ? ", " : "") + (a.values[i] ? a.values[i]->ref() : "None");
      return s + "]";
    }
    case Arg::Kind::Constant:
      if (schema.type.rfind("Tensor", 0) == 0) return "None";
      return schema.name + "=" + attribute_string(a);
  }
  return "";
}

std::string constant_string(const Tensor& t) {
  if (t.numel() != 1) return "constant()";
  std::ostringstream os;
  os << "constant(" << t.cpu().item() << ")";
  return os.str();
}

}  // namespace

std::string shape_string(const SymShape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + to_string(s[i]);
  return out + "]";
}

std::string Graph::str() const {
  std::ostringstream os;
  os << "graph(";
  for (size_t i = 0; i < inputs_.size(); ++i)
    os << (i ? ",\n      " : "") << inputs_[i]->ref() << " : " << type_string(*inputs_[i]);
  os << "):\n";
  os << "  # mode: " << (training ? "train" : "eval") << (dynamic_batch ? ", batch: * (dynamic)" : "") << "\n";
  for (const Value* c : constants()) os << "  " << c->ref() << " : " << type_string(*c) << " = " << constant_string(c->constant) << "\n";
  for (const auto& n : nodes_) {
    os << "  ";
    for (size_t i = 0; i < n->outputs.size(); ++i)
      os << (i ? ", " : "") << n->outputs[i]->ref() << " : " << type_string(*n->outputs[i]);
    os << " = " << n->name() << "(";
    for (size_t i = 0; i < n->args.size(); ++i) os << (i ? ", " : "") << arg_string(n->args[i], n->op->schema().args[i]);
    os << ")\n";
  }
  os << "  return (";
  for (size_t i = 0; i < outputs_.size(); ++i) os << (i ? ", " : "") << outputs_[i]->ref();
  os << ")\n";
  return os.str();
}

std::string Graph::dot() const {
  std::ostringstream os;
  os << "digraph ember_graph {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  auto id_of = [](const Value* v) {
    return v->kind == ValueKind::NodeOutput ? "n" + std::to_string(v->producer->outputs.at(0)->id)
                                            : "v" + std::to_string(v->id);
  };
  for (const Value* v : inputs_)
    os << "  " << id_of(v) << " [shape=ellipse, label=\"" << dot_escape(v->ref()) << "\\n" << dot_escape(type_string(*v)) << "\"];\n";
  for (const Value* v : constants())
    os << "  " << id_of(v) << " [shape=note, label=\"" << dot_escape(v->ref()) << "\\n" << dot_escape(type_string(*v)) << "\"];\n";
  for (const auto& n : nodes_) {
    std::string label = dot_escape(n->name());
    for (const Value* o : n->outputs) label += "\\n" + dot_escape(o->ref() + " : " + type_string(*o));
    os << "  " << id_of(n->outputs.at(0)) << " [shape=box, label=\"" << label << "\"];\n";
    for (const Value* in : n->input_values()) os << "  " << id_of(in) << " -> " << id_of(n->outputs.at(0)) << ";\n";
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    os << "  out" << i << " [shape=doublecircle, label=\"output " << i << "\"];\n";
    os << "  " << id_of(outputs_[i]) << " -> out" << i << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace ember::jit
