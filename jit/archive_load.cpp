// jit::load: a graph archive to a GraphModule, treating the file as
// untrusted (Note [Graph archive format]).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "ember/jit.h"
#include "ember/serialize.h"
#include "jit/archive_format.h"
#include "jit/graph.h"
#include "jit/op_traits.h"

namespace ember::jit {
namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    EMBER_FAIL("jit::load(", path_, "): ", where, ": ", what);
  }
  const json& field(const json& obj, const char* key, const std::string& where) const {
    if (!obj.is_object()) fail(where, "expected a JSON object");
    auto it = obj.find(key);
    if (it == obj.end()) fail(where, std::string("missing field '") + key + "'");
    return *it;
  }
  const json& array(const json& obj, const char* key, const std::string& where, size_t max) const {
    const json& a = field(obj, key, where);
    if (!a.is_array()) fail(where, std::string("'") + key + "' is not an array");
    if (a.size() > max) fail(where, std::string("'") + key + "' has " + std::to_string(a.size()) + " entries (at most " + std::to_string(max) + ")");
    return a;
  }
  int64_t integer(const json& v, const std::string& where, int64_t lo, int64_t hi) const {
    if (!v.is_number_integer()) fail(where, "expected an integer, got " + v.dump());
    const bool is_unsigned = v.is_number_unsigned();
    if (is_unsigned && v.get<uint64_t>() > static_cast<uint64_t>(hi)) fail(where, "integer " + v.dump() + " out of range");
    const int64_t x = is_unsigned ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
    if (x < lo || x > hi) fail(where, "integer " + v.dump() + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return x;
  }
  bool boolean(const json& v, const std::string& where) const {
    if (!v.is_boolean()) fail(where, "expected true or false, got " + v.dump());
    return v.get<bool>();
  }
  std::string string(const json& v, const std::string& where) const {
    if (!v.is_string()) fail(where, "expected a string, got " + v.dump());
    return v.get<std::string>();
  }
  double real(const json& v, const std::string& where) const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    }
    fail(where, "expected a number, got " + v.dump());
  }
  DType dtype(const json& v, const std::string& where) const {
    const std::string s = string(v, where);
    for (int i = 0; i < kNumDTypes; ++i)
      if (dtype_name(static_cast<DType>(i)) == s) return static_cast<DType>(i);
    fail(where, "unknown dtype '" + s + "'");
  }
  Device device(const json& v, const std::string& where) const {
    const std::string s = string(v, where);
    try {
      return Device(s);
    } catch (const Error&) {
      fail(where, "unknown device '" + s + "'");
    }
  }
  SymDim sym_dim(const json& v, const std::string& where) const {
    if (!v.is_array() || v.size() != 2) fail(where, "a size is a [coeff, offset] pair, got " + v.dump());
    return SymDim{integer(v[0], where, -(int64_t{1} << 20), int64_t{1} << 20),
                  integer(v[1], where, -(int64_t{1} << 40), int64_t{1} << 40)};
  }
  SymShape shape(const json& v, const std::string& where) const {
    if (!v.is_array() || v.size() > kMaxArchiveDims) fail(where, "a shape is a list of at most 64 sizes");
    SymShape s;
    for (const json& d : v) {
      s.push_back(sym_dim(d, where));
      // A size is coeff*N + offset for every batch N >= 1: never negative.
      if (s.back().coeff < 0 || s.back().coeff + s.back().offset < 0)
        fail(where, "a size is negative for some batch size: " + to_string(s.back()) + " (" + d.dump() + ")");
    }
    return s;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Base schema type: "Tensor(a!)?" -> "Tensor?", "Tensor(b!)[]" -> "Tensor[]".
std::string base_type(std::string t) {
  const size_t open = t.find('(');
  if (open != std::string::npos) t.erase(open, t.find(')') - open + 1);
  return t;
}

class GraphLoader {
 public:
  GraphLoader(const Reader& r, Graph& g) : r_(r), g_(g) {}

  void define(const json& id_json, Value* v, const std::string& where) {
    const int64_t id = r_.integer(id_json, where + " id", 0, kMaxArchiveValues - 1);
    if (!ids_.emplace(id, v).second) r_.fail(where, "value id " + std::to_string(id) + " is defined twice");
    g_.set_id(v, id);
  }
  Value* use(const json& id_json, const std::string& where) {
    const int64_t id = r_.integer(id_json, where, 0, kMaxArchiveValues - 1);
    auto it = ids_.find(id);
    if (it == ids_.end())
      r_.fail(where, "value " + std::to_string(id) + " is not defined before this use (dangling value or cycle)");
    return it->second;
  }

  Arg arg(const json& a, const SchemaArg& schema, const std::string& where) {
    if (!a.is_object() || a.size() < 1 || a.size() > 2 || (a.size() == 2 && !a.contains("sym")))
      r_.fail(where, "an argument is an object with one kind (and maybe 'sym'), got " + a.dump());
    const std::string type = base_type(schema.type);
    const std::string kind = a.begin().key() == "sym" ? std::next(a.begin()).key() : a.begin().key();
    const json& v = a.at(kind);
    const bool optional = type.back() == '?';
    auto expect = [&](bool ok) {
      if (!ok) r_.fail(where, "argument '" + schema.name + "' of type " + schema.type + " cannot be '" + kind + "'");
    };
    Arg out;
    if (kind == "none") {
      expect(optional);
      return out;
    }
    if (kind == "value") {
      expect(type == "Tensor" || type == "Tensor?");
      return Arg::of_value(use(v, where));
    }
    if (kind == "values") {
      expect(type == "Tensor[]" || type == "Tensor?[]");
      if (!v.is_array() || v.size() > static_cast<size_t>(kMaxArchiveValues)) r_.fail(where, "'values' is not a list");
      out.kind = Arg::Kind::ValueList;
      for (const json& id : v) {
        if (id.is_null() && type != "Tensor?[]") r_.fail(where, "argument '" + schema.name + "' cannot hold None");
        out.values.push_back(id.is_null() ? nullptr : use(id, where));
      }
      return out;
    }
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
    if (kind == "int") {
      expect(type == "int" || type == "int?");
      out.constant = IValue::Payload(r_.integer(v, where, kMin, kMax));
    } else if (kind == "ints") {
      expect(type == "int[]");
      if (!v.is_array() || v.size() > kMaxArchiveDims * 16) r_.fail(where, "'ints' is not a short list of integers");
      std::vector<int64_t> xs;
      for (const json& x : v) xs.push_back(r_.integer(x, where, kMin, kMax));
      out.constant = IValue::Payload(std::move(xs));
    } else if (kind == "float") {
      expect(type == "float");
      out.constant = IValue::Payload(r_.real(v, where));
    } else if (kind == "bool") {
      expect(type == "bool");
      out.constant = IValue::Payload(r_.boolean(v, where));
    } else if (kind == "str") {
      expect(type == "str");
      out.constant = IValue::Payload(r_.string(v, where));
    } else if (kind == "dtype") {
      expect(type == "ScalarType?");
      out.constant = IValue::Payload(r_.dtype(v, where));
    } else if (kind == "scalar_int" || kind == "scalar_float" || kind == "scalar_bool") {
      expect(type == "Scalar" || type == "Scalar?");
      out.constant = IValue::Payload(kind == "scalar_int"     ? Scalar(r_.integer(v, where, kMin, kMax))
                                     : kind == "scalar_float" ? Scalar(r_.real(v, where))
                                                              : Scalar(r_.boolean(v, where)));
    } else {
      r_.fail(where, "unknown argument kind '" + kind + "'");
    }
    if (a.contains("sym")) {
      const json& sym = a.at("sym");
      const size_t want = kind == "ints" ? v.size() : 1;
      if ((kind != "int" && kind != "ints" && kind != "scalar_int") || !sym.is_array() || sym.size() != want)
        r_.fail(where, "'sym' must list one size per integer of an int, ints or scalar_int argument");
      for (const json& d : sym) out.sym.push_back(r_.sym_dim(d, where));
    }
    return out;
  }

  // A fused node's program is parsed and checked now, as any attribute is
  // (Note [Fused elementwise programs] in core/fused_program.h).
  void fused_program(const std::vector<Arg>& args, const std::string& where) {
    const auto* expr = std::get_if<std::string>(&args.at(1).constant.payload());
    if (expr == nullptr) r_.fail(where, "_fused_elementwise's expr is not a string");
    try {
      fused::FusedProgram::parse(*expr, args.at(0).values.size(), "_fused_elementwise");
    } catch (const Error& e) {
      r_.fail(where, e.what());
    }
  }

  // The output rank a fused program gives for its inputs: their broadcast
  // rank, none (or all, with keepdim) for a full reduction, one less (or the
  // same, with keepdim) for a last-dim reduction, which needs a dim.
  void fused_output(const Node& n, const std::string& where) {
    const auto& expr = std::get<std::string>(n.args.at(1).constant.payload());
    const fused::FusedProgram p = fused::FusedProgram::parse(expr, n.args.at(0).values.size(), "_fused_elementwise");
    size_t rank = 0;
    for (const Value* v : n.args[0].values) {
      if (v == nullptr) r_.fail(where, "_fused_elementwise has an undefined input");
      rank = std::max(rank, v->shape.size());
    }
    size_t want = rank;
    const bool keepdim = p.reduces() && p.code.back().keepdim;
    if (p.reduces_rows()) {
      if (rank == 0) r_.fail(where, "_fused_elementwise '" + expr + "' reduces the last dim, but its inputs are 0-d");
      want = keepdim ? rank : rank - 1;
    } else if (p.reduces()) {
      want = keepdim ? rank : 0;
    }
    const size_t got = n.outputs.at(0)->shape.size();
    if (got != want)
      r_.fail(where, "_fused_elementwise '" + expr + "' over inputs of rank " + std::to_string(rank) + " gives rank " +
                         std::to_string(want) + ", the node's output has rank " + std::to_string(got));
  }

  void node(const json& n, size_t index) {
    const std::string where = "node " + std::to_string(index);
    const std::string name = r_.string(r_.field(n, "op", where), where + " op");
    const OpEntry* op = Dispatcher::instance().find(name);
    if (op == nullptr) r_.fail(where, "unknown op '" + name + "'");
    const auto& schema = op->schema();
    const json& args = r_.array(n, "args", where, 64);
    if (args.size() != schema.args.size())
      r_.fail(where, name + " takes " + std::to_string(schema.args.size()) + " arguments, the node has " +
                         std::to_string(args.size()));
    std::vector<Arg> parsed;
    for (size_t i = 0; i < args.size(); ++i)
      parsed.push_back(arg(args[i], schema.args[i], where + " (" + name + ") argument '" + schema.args[i].name + "'"));
    const bool list = r_.boolean(r_.field(n, "list_output", where), where + " list_output");
    const bool returns_list = schema.returns.size() == 1 && base_type(schema.returns[0]) == "Tensor[]";
    if (list != returns_list) r_.fail(where, "list_output does not match " + name + "'s schema");
    const json& outs = r_.array(n, "outputs", where, list ? static_cast<size_t>(kMaxArchiveValues) : 8);
    if (!list && outs.size() != schema.returns.size())
      r_.fail(where, name + " returns " + std::to_string(schema.returns.size()) + " tensors, the node lists " +
                         std::to_string(outs.size()));
    const SymDim blocks = r_.sym_dim(r_.field(n, "random_blocks", where), where + " random_blocks");
    if (!is_random(*op) && !(blocks == SymDim{})) r_.fail(where, name + " draws no random numbers but has random_blocks");
    if (blocks.coeff < 0 || blocks.offset < 0) r_.fail(where, "random_blocks must not be negative");
    if (op == &op::_fused_elementwise.entry()) fused_program(parsed, where);
    Node* node = g_.add_node(op, std::move(parsed), outs.size());
    node->list_output = list;
    node->random_blocks = blocks;
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string w = where + " output " + std::to_string(k);
      Value* v = node->outputs[k];
      v->dtype = r_.dtype(r_.field(outs[k], "dtype", w), w);
      v->device = r_.device(r_.field(outs[k], "device", w), w);
      v->shape = r_.shape(r_.field(outs[k], "shape", w), w);
      v->defined = r_.boolean(r_.field(outs[k], "defined", w), w);
      define(r_.field(outs[k], "id", w), v, w);
    }
    if (op == &op::_fused_elementwise.entry()) fused_output(*node, where);
  }

 private:
  const Reader& r_;
  Graph& g_;
  std::unordered_map<int64_t, Value*> ids_;
};

Tensor take_tensor(const Reader& r, TensorDict& tensors, const std::string& key, DType dtype, const SymShape& shape,
                   const std::string& where) {
  auto it = tensors.find(key);
  if (it == tensors.end()) r.fail(where, "the file has no tensor '" + key + "'");
  Tensor t = it->second;
  tensors.erase(it);
  if (t.dtype() != dtype || !(static_shape(t.sizes()) == shape))
    r.fail(where, "tensor '" + key + "' is " + std::string(dtype_name(t.dtype())) + " " + shape_string(static_shape(t.sizes())) +
                      " but the graph declares " + std::string(dtype_name(dtype)) + " " + shape_string(shape));
  return t;
}

}  // namespace

GraphModule load(const std::string& path) {
  const Reader r(path);
  SafetensorsFile file = load_safetensors(path);
  auto meta = [&](const char* key) {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end()) r.fail("metadata", std::string("missing '") + key + "' (not a graph archive?)");
    return it->second;
  };
  if (meta("format") != kArchiveFormat) r.fail("metadata", "format is '" + meta("format") + "', expected 'ember.graph'");
  const std::string version = meta("format_version");
  if (version != std::to_string(kArchiveVersion))
    r.fail("metadata", "format version " + version + " is not supported (this ember reads version " +
                           std::to_string(kArchiveVersion) + ")");
  json j;
  try {
    j = json::parse(meta("graph"));
  } catch (const json::exception& e) {
    r.fail("graph", std::string("not valid JSON: ") + e.what());
  }
  auto g = std::make_shared<Graph>();
  g->training = r.boolean(r.field(j, "training", "graph"), "training");
  g->dynamic_batch = r.boolean(r.field(j, "dynamic_batch", "graph"), "dynamic_batch");
  for (const json& p : r.array(j, "passes", "graph", 1000)) g->passes_applied.push_back(r.string(p, "passes"));
  GraphLoader loader(r, *g);
  std::vector<Tensor> bound;
  const json& inputs = r.array(j, "inputs", "graph", static_cast<size_t>(kMaxArchiveValues));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string where = "input " + std::to_string(i);
    const json& in = inputs[i];
    const std::string name = r.string(r.field(in, "name", where), where);
    const std::string role_name = r.string(r.field(in, "role", where), where);
    const InputRole role = role_name == "user"        ? InputRole::User
                           : role_name == "parameter" ? InputRole::Parameter
                           : role_name == "buffer"    ? InputRole::Buffer
                                                      : (r.fail(where, "unknown role '" + role_name + "'"), InputRole::User);
    Value* v = g->add_input(name, role, r.dtype(r.field(in, "dtype", where), where),
                            r.device(r.field(in, "device", where), where), r.shape(r.field(in, "shape", where), where));
    loader.define(r.field(in, "id", where), v, where);
    if (role != InputRole::User) {
      for (const SymDim& d : v->shape)
        if (!d.is_static()) r.fail(where, "a parameter or buffer cannot have a batch-dependent shape");
      Tensor t = take_tensor(r, file.tensors, "input/" + name, v->dtype, v->shape, where).to(v->device);
      if (role == InputRole::Parameter && is_floating_point(t.dtype())) t.requires_grad_(true);  // trainable, as in the module
      bound.push_back(t);
    }
  }
  const json& constants = r.array(j, "constants", "graph", static_cast<size_t>(kMaxArchiveValues));
  for (size_t i = 0; i < constants.size(); ++i) {
    const std::string where = "constant " + std::to_string(i);
    const json& c = constants[i];
    const int64_t id = r.integer(r.field(c, "id", where), where, 0, kMaxArchiveValues - 1);
    auto it = file.tensors.find("const/" + std::to_string(id));
    if (it == file.tensors.end()) r.fail(where, "the file has no tensor 'const/" + std::to_string(id) + "'");
    const std::string key = it->first;
    Tensor t = take_tensor(r, file.tensors, key, it->second.dtype(), static_shape(it->second.sizes()), where);
    if (r.boolean(r.field(c, "wrapped", where), where)) {
      if (t.dim() != 0) r.fail(where, "a wrapped number must be 0-d");
      t.impl()->set_wrapped_number(true);
    }
    Value* v = g->add_constant(t);
    v->name = r.string(r.field(c, "name", where), where);
    loader.define(c.at("id"), v, where);
  }
  const json& nodes = r.array(j, "nodes", "graph", static_cast<size_t>(kMaxArchiveValues));
  for (size_t i = 0; i < nodes.size(); ++i) loader.node(nodes[i], i);
  for (const json& id : r.array(j, "outputs", "graph", static_cast<size_t>(kMaxArchiveValues)))
    g->outputs().push_back(loader.use(id, "graph outputs"));
  if (!file.tensors.empty()) r.fail("tensors", "tensor '" + file.tensors.begin()->first + "' is not used by the graph");
  g->verify("jit::load(" + path + ")");
  return GraphModule(std::move(g), std::move(bound));
}

}  // namespace ember::jit
