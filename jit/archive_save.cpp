// jit::save: a GraphModule to a graph archive (Note [Graph archive format]).
#include <cmath>

#include <nlohmann/json.hpp>

#include "ember/jit.h"
#include "ember/serialize.h"
#include "ember/version.h"
#include "jit/archive_format.h"
#include "jit/graph.h"

namespace ember::jit {
namespace {

using nlohmann::json;

json shape_json(const SymShape& s) {
  json out = json::array();
  for (const SymDim& d : s) out.push_back({d.coeff, d.offset});
  return out;
}

json float_json(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

std::string device_string(Device d) { return d.str(); }

json value_type_json(const Value& v) {
  return {{"id", v.id}, {"dtype", std::string(dtype_name(v.dtype))}, {"device", device_string(v.device)},
          {"shape", shape_json(v.shape)}, {"defined", v.defined}};
}

json arg_json(const Arg& a) {
  json out;
  switch (a.kind) {
    case Arg::Kind::Value: return {{"value", a.value->id}};
    case Arg::Kind::ValueList: {
      json ids = json::array();
      for (const Value* v : a.values) ids.push_back(v ? json(v->id) : json(nullptr));
      return {{"values", ids}};
    }
    case Arg::Kind::Constant: break;
  }
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, NoneValue>) out["none"] = nullptr;
        else if constexpr (std::is_same_v<T, int64_t>) out["int"] = x;
        else if constexpr (std::is_same_v<T, double>) out["float"] = float_json(x);
        else if constexpr (std::is_same_v<T, bool>) out["bool"] = x;
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) out["ints"] = x;
        else if constexpr (std::is_same_v<T, std::string>) out["str"] = x;
        else if constexpr (std::is_same_v<T, DType>) out["dtype"] = std::string(dtype_name(x));
        else if constexpr (std::is_same_v<T, Scalar>) {
          if (x.is_floating_point()) out["scalar_float"] = float_json(x.template to<double>());
          else if (x.is_bool()) out["scalar_bool"] = x.template to<bool>();
          else out["scalar_int"] = x.template to<int64_t>();
        } else {
          EMBER_FAIL("jit::save: a node attribute holds a tensor, which archives store only as values");
        }
      },
      a.constant.payload());
  if (!a.sym.empty()) {
    json sym = json::array();
    for (const SymDim& d : a.sym) sym.push_back({d.coeff, d.offset});
    out["sym"] = sym;
  }
  return out;
}

const char* role_name(InputRole r) {
  return r == InputRole::User ? "user" : r == InputRole::Parameter ? "parameter" : "buffer";
}

}  // namespace

void save(const GraphModule& module, const std::string& path) {
  const Graph& g = module.graph();
  g.verify("jit::save(" + path + ")");
  json j;
  j["training"] = g.training;
  j["dynamic_batch"] = g.dynamic_batch;
  j["passes"] = g.passes_applied;
  TensorDict tensors;
  json inputs = json::array();
  const auto bound = module.named_bound();
  size_t b = 0;
  for (const Value* v : g.inputs()) {
    json in = value_type_json(*v);
    in.erase("defined");
    in["name"] = v->name;
    in["role"] = role_name(v->role);
    inputs.push_back(in);
    if (v->role != InputRole::User) tensors["input/" + v->name] = bound.at(b++).second;
  }
  j["inputs"] = inputs;
  json constants = json::array();
  for (const Value* c : g.constants()) {
    constants.push_back({{"id", c->id}, {"name", c->name}, {"wrapped", c->constant.impl()->is_wrapped_number()}});
    tensors["const/" + std::to_string(c->id)] = c->constant;
  }
  j["constants"] = constants;
  json nodes = json::array();
  for (const auto& n : g.nodes()) {
    json node = {{"op", n->name()}, {"list_output", n->list_output},
                 {"random_blocks", {n->random_blocks.coeff, n->random_blocks.offset}}};
    json args = json::array();
    for (const Arg& a : n->args) args.push_back(arg_json(a));
    node["args"] = args;
    json outs = json::array();
    for (const Value* v : n->outputs) outs.push_back(value_type_json(*v));
    node["outputs"] = outs;
    nodes.push_back(node);
  }
  j["nodes"] = nodes;
  json outputs = json::array();
  for (const Value* v : g.outputs()) outputs.push_back(v->id);
  j["outputs"] = outputs;
  save_safetensors(tensors, path,
                   {{"format", std::string(kArchiveFormat)},
                    {"format_version", std::to_string(kArchiveVersion)},
                    {"ember_version", version()},
                    {"graph", j.dump()}});
}

}  // namespace ember::jit
