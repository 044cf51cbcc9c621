// The graph IR: construction, edits, verification and copies (jit/graph.h).
#include "jit/graph.h"

#include <algorithm>
#include <unordered_map>

namespace ember::jit {

std::string to_string(const SymDim& d) {
  if (d.is_static()) return std::to_string(d.offset);
  std::string s = d.coeff == 1 ? "*" : d.coeff == -1 ? "-*" : "*" + std::to_string(d.coeff);
  if (d.offset > 0) s += "+" + std::to_string(d.offset);
  if (d.offset < 0) s += std::to_string(d.offset);
  return s;
}

SymShape static_shape(IntArrayRef sizes) {
  SymShape s;
  for (int64_t v : sizes) s.push_back(SymDim{0, v});
  return s;
}

std::vector<int64_t> eval_shape(const SymShape& s, int64_t n) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const SymDim& d : s) out.push_back(d.eval(n));
  return out;
}

std::string Value::ref() const { return name.empty() ? "%" + std::to_string(id) : "%" + name; }

IValue Arg::materialize(int64_t n) const {
  if (sym.empty()) return constant;
  const IValue::Payload& p = constant.payload();
  if (std::holds_alternative<std::vector<int64_t>>(p)) {
    std::vector<int64_t> v = std::get<std::vector<int64_t>>(p);
    for (size_t i = 0; i < v.size() && i < sym.size(); ++i)
      if (!sym[i].is_static()) v[i] = sym[i].eval(n);
    return IValue::Payload(std::move(v));
  }
  if (std::holds_alternative<Scalar>(p)) return IValue::Payload(Scalar(sym[0].eval(n)));
  return IValue::Payload(sym[0].eval(n));
}

std::vector<Value*> Node::input_values() const {
  std::vector<Value*> out;
  for (const Arg& a : args) {
    if (a.kind == Arg::Kind::Value && a.value) out.push_back(a.value);
    if (a.kind == Arg::Kind::ValueList)
      for (Value* v : a.values)
        if (v) out.push_back(v);
  }
  return out;
}

Value* Graph::new_value(ValueKind kind) {
  values_.push_back(std::make_unique<Value>());
  Value* v = values_.back().get();
  v->id = next_id_++;
  v->kind = kind;
  return v;
}

Value* Graph::add_input(std::string name, InputRole role, DType dtype, Device device, SymShape shape) {
  Value* v = new_value(ValueKind::Input);
  v->name = std::move(name);
  v->role = role;
  v->dtype = dtype;
  v->device = device;
  v->shape = std::move(shape);
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_constant(Tensor t) {
  Value* v = new_value(ValueKind::Constant);
  v->dtype = t.dtype();
  v->device = t.device();
  v->shape = static_shape(t.sizes());
  v->constant = std::move(t);
  return v;
}

Node* Graph::insert_node(size_t pos, const OpEntry* op, std::vector<Arg> args, size_t num_outputs) {
  auto node = std::make_unique<Node>();
  node->op = op;
  node->args = std::move(args);
  for (size_t i = 0; i < num_outputs; ++i) {
    Value* v = new_value(ValueKind::NodeOutput);
    v->producer = node.get();
    v->index = i;
    node->outputs.push_back(v);
  }
  Node* raw = node.get();
  nodes_.insert(nodes_.begin() + static_cast<std::ptrdiff_t>(std::min(pos, nodes_.size())), std::move(node));
  return raw;
}

Node* Graph::add_node(const OpEntry* op, std::vector<Arg> args, size_t num_outputs) {
  return insert_node(nodes_.size(), op, std::move(args), num_outputs);
}

std::vector<Value*> Graph::constants() const {
  std::vector<Value*> out;
  for (const auto& v : values_)
    if (v->kind == ValueKind::Constant) out.push_back(v.get());
  return out;
}

void Graph::replace_all_uses(const Value* from, Value* to) {
  for (auto& n : nodes_) {
    for (Arg& a : n->args) {
      if (a.kind == Arg::Kind::Value && a.value == from) a.value = to;
      if (a.kind == Arg::Kind::ValueList) std::replace(a.values.begin(), a.values.end(), const_cast<Value*>(from), to);
    }
  }
  std::replace(outputs_.begin(), outputs_.end(), const_cast<Value*>(from), to);
}

std::vector<int64_t> Graph::use_counts() const {
  std::vector<int64_t> uses(static_cast<size_t>(next_id_), 0);
  for (const auto& n : nodes_)
    for (Value* v : n->input_values()) ++uses[static_cast<size_t>(v->id)];
  for (Value* v : outputs_) ++uses[static_cast<size_t>(v->id)];
  return uses;
}

void Graph::remove_nodes_if(const std::function<bool(const Node&)>& dead) {
  std::vector<const Value*> gone;
  std::erase_if(nodes_, [&](const std::unique_ptr<Node>& n) {
    if (!dead(*n)) return false;
    gone.insert(gone.end(), n->outputs.begin(), n->outputs.end());
    return true;
  });
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) {
    return std::find(gone.begin(), gone.end(), v.get()) != gone.end();
  });
}

void Graph::remove_unused_constants() {
  const std::vector<int64_t> uses = use_counts();
  std::erase_if(values_, [&](const std::unique_ptr<Value>& v) {
    return v->kind == ValueKind::Constant && uses[static_cast<size_t>(v->id)] == 0;
  });
}

void Graph::verify(const std::string& where) const {
  std::vector<char> defined(static_cast<size_t>(next_id_), 0);
  auto known = [&](const Value* v) {
    return v != nullptr && v->id >= 0 && v->id < next_id_ && defined[static_cast<size_t>(v->id)];
  };
  for (const Value* v : inputs_) {
    EMBER_CHECK(v->kind == ValueKind::Input, where, ": graph input ", v->ref(), " is not an input value");
    defined[static_cast<size_t>(v->id)] = 1;
  }
  for (const auto& v : values_)
    if (v->kind == ValueKind::Constant) {
      EMBER_CHECK(v->constant.defined(), where, ": constant ", v->ref(), " holds no tensor");
      defined[static_cast<size_t>(v->id)] = 1;
    }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = *nodes_[i];
    EMBER_CHECK(n.op != nullptr, where, ": node ", i, " has no op");
    EMBER_CHECK(n.args.size() == n.op->schema().args.size(), where, ": node ", i, " (", n.name(), ") has ",
                n.args.size(), " arguments but the schema has ", n.op->schema().args.size());
    for (const Value* v : n.input_values())
      EMBER_CHECK(known(v), where, ": node ", i, " (", n.name(), ") reads ", v ? v->ref() : "a null value",
                  ", which is not defined before it");
    for (const Value* v : n.outputs) {
      EMBER_CHECK(v && v->producer == &n && !defined[static_cast<size_t>(v->id)], where, ": node ", i, " (",
                  n.name(), ") has an output that is defined elsewhere");
      defined[static_cast<size_t>(v->id)] = 1;
    }
  }
  for (const Value* v : outputs_) EMBER_CHECK(known(v), where, ": a graph output is not defined by the graph");
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  std::unordered_map<const Value*, Value*> map;
  auto copy_meta = [](const Value& from, Value& to) {
    to.id = from.id;
    to.name = from.name;
    to.role = from.role;
    to.defined = from.defined;
    to.dtype = from.dtype;
    to.device = from.device;
    to.shape = from.shape;
    to.constant = from.constant;
  };
  for (const Value* v : inputs_) map[v] = g->add_input(v->name, v->role, v->dtype, v->device, v->shape);
  for (const auto& v : values_)
    if (v->kind == ValueKind::Constant) map[v.get()] = g->add_constant(v->constant);
  for (const auto& n : nodes_) {
    std::vector<Arg> args = n->args;
    for (Arg& a : args) {
      if (a.value) a.value = map.at(a.value);
      for (Value*& v : a.values)
        if (v) v = map.at(v);
    }
    Node* c = g->add_node(n->op, std::move(args), n->outputs.size());
    c->list_output = n->list_output;
    c->random_blocks = n->random_blocks;
    for (size_t i = 0; i < n->outputs.size(); ++i) map[n->outputs[i]] = c->outputs[i];
  }
  for (auto& [from, to] : map) copy_meta(*from, *to);
  for (const Value* v : outputs_) g->outputs_.push_back(map.at(v));
  g->next_id_ = next_id_;
  g->training = training;
  g->dynamic_batch = dynamic_batch;
  g->passes_applied = passes_applied;
  g->warnings = warnings;
  return g;
}

}  // namespace ember::jit
