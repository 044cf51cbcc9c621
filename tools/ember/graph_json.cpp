// A traced graph as JSON (graph_json.h).
#include "tools/ember/graph_json.h"

#include <sstream>

namespace ember::cli {
namespace {

std::vector<std::string> dims(const jit::SymShape& shape) {
  std::vector<std::string> out;
  for (const jit::SymDim& d : shape) out.push_back(jit::to_string(d));
  return out;
}

nlohmann::json value_json(const jit::Value& v) {
  std::ostringstream device;
  device << v.device;
  nlohmann::json j = {{"id", v.id}, {"dtype", std::string(dtype_name(v.dtype))}, {"device", device.str()},
                      {"shape", dims(v.shape)}};
  if (!v.name.empty()) j["name"] = v.name;
  if (!v.defined) j["defined"] = false;
  return j;
}

const char* role_name(jit::InputRole role) {
  switch (role) {
    case jit::InputRole::User: return "user";
    case jit::InputRole::Parameter: return "parameter";
    case jit::InputRole::Buffer: return "buffer";
  }
  return "user";
}

nlohmann::json arg_json(const jit::Arg& a) {
  switch (a.kind) {
    case jit::Arg::Kind::Value: return {{"value", a.value->id}};
    case jit::Arg::Kind::ValueList: {
      nlohmann::json ids = nlohmann::json::array();
      for (const jit::Value* v : a.values) ids.push_back(v ? nlohmann::json(v->id) : nlohmann::json(nullptr));
      return {{"values", ids}};
    }
    case jit::Arg::Kind::Constant: {
      nlohmann::json j = {{"constant", a.constant.to_string()}};
      if (!a.sym.empty()) j["symbolic"] = dims(a.sym);
      return j;
    }
  }
  return nullptr;
}

}  // namespace

nlohmann::json graph_json(const jit::Graph& graph) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const jit::Value* v : graph.inputs()) {
    nlohmann::json j = value_json(*v);
    j["role"] = role_name(v->role);
    inputs.push_back(j);
  }
  nlohmann::json constants = nlohmann::json::array();
  for (const jit::Value* v : graph.constants()) constants.push_back(value_json(*v));
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& node : graph.nodes()) {
    nlohmann::json args = nlohmann::json::array();
    for (const jit::Arg& a : node->args) args.push_back(arg_json(a));
    nlohmann::json outputs = nlohmann::json::array();
    for (const jit::Value* v : node->outputs) outputs.push_back(value_json(*v));
    nodes.push_back({{"op", node->name()}, {"schema", node->op->schema().text}, {"args", args}, {"outputs", outputs}});
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (const jit::Value* v : graph.outputs()) outputs.push_back(v->id);
  return {{"inputs", inputs},
          {"constants", constants},
          {"nodes", nodes},
          {"outputs", outputs},
          {"training", graph.training},
          {"dynamic_batch", graph.dynamic_batch},
          {"passes_applied", graph.passes_applied},
          {"warnings", graph.warnings}};
}

}  // namespace ember::cli
