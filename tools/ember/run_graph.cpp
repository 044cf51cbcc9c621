// `ember run`: runs a graph archive on inputs from a safetensors file.
#include <algorithm>
#include <chrono>
#include <iostream>

#include "ember/jit.h"
#include "ember/serialize.h"
#include "jit/graph.h"
#include "tools/ember/commands.h"
#include "tools/ember/graph_json.h"
#include "tools/ember/json_output.h"

namespace ember::cli {

int run_graph(const RunCommand& command) {
  jit::GraphModule module = jit::load(command.archive);
  std::vector<std::string> names;
  for (const jit::Value* v : module.graph().inputs())
    if (v->role == jit::InputRole::User) names.push_back(v->name);
  const TensorDict file = load(command.input);
  std::vector<Tensor> inputs;
  for (const std::string& name : names) {
    auto it = file.find(name);
    if (it == file.end() && names.size() == 1 && file.size() == 1) it = file.begin();  // one input: any name
    EMBER_CHECK(it != file.end(), "run: ", command.input, " has no tensor '", name, "' (the graph's inputs: ",
                names.size(), ", the file's tensors: ", file.size(), ")");
    inputs.push_back(it->second);
  }
  std::vector<Tensor> outputs = module.forward(inputs);
  if (command.bench > 0) {
    std::vector<double> ms;
    for (int64_t i = 0; i < command.bench; ++i) {
      const auto start = std::chrono::steady_clock::now();
      outputs = module.forward(inputs);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    std::cout << "run: " << command.bench << " runs, median " << ms[ms.size() / 2] << " ms, min " << ms.front()
              << " ms\n";
  }
  TensorDict out;
  for (size_t i = 0; i < outputs.size(); ++i)
    out[outputs.size() == 1 ? "output" : "output" + std::to_string(i)] = outputs[i];
  if (!command.output.empty()) save(out, command.output);
  for (const auto& [name, t] : out) std::cout << name << ": " << t.sizes() << " " << t.dtype() << "\n";
  return 0;
}

int inspect_graph(const std::string& path, bool passes, bool dot, bool json) {
  jit::GraphModule module = jit::load(path);
  if (json) {
    EMBER_CHECK(!dot, "inspect graph: give --dot or --json, not both");
    nlohmann::json out = {{"path", path}};
    if (passes) {
      jit::OptimizeOptions options;
      out["graph_before"] = graph_json(module.graph());
      out["log"] = jit::optimize(module, options);
    }
    out["graph"] = graph_json(module.graph());
    print_json(out);
    return 0;
  }
  if (passes) {
    jit::OptimizeOptions options;
    options.print_graphs = true;
    std::cout << module.graph_text() << "\n";
    for (const std::string& line : jit::optimize(module, options)) std::cout << line << "\n";
    return 0;
  }
  std::cout << (dot ? module.graph_dot() : module.graph_text());
  return 0;
}

}  // namespace ember::cli
