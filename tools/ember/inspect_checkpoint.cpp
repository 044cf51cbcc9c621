// `ember inspect checkpoint PATH [--json]`: how a training checkpoint was
// made (epoch, step, generator state, the run's info strings) and its tensors
// by part, with dtypes, shapes and element counts. A plain safetensors file
// (a model's state_dict) is listed too: its metadata and tensors.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "ember/training_checkpoint.h"
#include "tools/ember/commands.h"
#include "tools/ember/json_output.h"

namespace ember::cli {
namespace {

std::string shape_text(const Tensor& t) {
  std::ostringstream os;
  os << t.sizes();
  return os.str();
}

void print_tensors(const TensorDict& tensors, const std::string& indent) {
  size_t width = 4;
  for (const auto& [name, t] : tensors) width = std::max(width, name.size());
  int64_t total = 0;
  for (const auto& [name, t] : tensors) {
    std::cout << indent << std::left << std::setw(static_cast<int>(width) + 2) << name << std::setw(10)
              << dtype_name(t.dtype()) << shape_text(t) << "\n";
    total += t.numel();
  }
  std::cout << indent << tensors.size() << " tensors, " << total << " elements\n";
}

nlohmann::json tensors_json(const TensorDict& tensors) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, t] : tensors) {
    out.push_back({{"name", name},
                   {"dtype", std::string(dtype_name(t.dtype()))},
                   {"shape", std::vector<int64_t>(t.sizes().begin(), t.sizes().end())},
                   {"numel", t.numel()}});
  }
  return out;
}

}  // namespace

int inspect_checkpoint(const std::string& path, bool json) {
  SafetensorsFile file = load_safetensors(path);
  const auto format = file.metadata.find("format");
  const bool checkpoint = format != file.metadata.end() && format->second == "ember.training_checkpoint.v1";
  if (json) {
    nlohmann::json out = {{"path", path}, {"kind", checkpoint ? "training_checkpoint" : "safetensors"}};
    if (!checkpoint) {
      out["metadata"] = file.metadata;
      out["tensors"] = tensors_json(file.tensors);
    } else {
      const TrainingCheckpoint ckpt = load_training_checkpoint(path);  // verifies the checksum
      out["checksum"] = file.metadata["checksum"];
      out["ember_version"] = file.metadata["ember_version"];
      out["epoch"] = ckpt.epoch;
      out["step"] = ckpt.step;
      out["generator"] = {{"seed", ckpt.rng_seed}, {"offset", ckpt.rng_offset}};
      out["info"] = ckpt.info;
      nlohmann::json parts = nlohmann::json::object();
      for (const auto& [part, tensors] : ckpt.states) parts[part] = tensors_json(tensors);
      out["parts"] = parts;
    }
    print_json(out);
    return 0;
  }
  if (!checkpoint) {
    std::cout << path << ": a safetensors file\n";
    for (const auto& [key, value] : file.metadata) std::cout << "  " << key << ": " << value << "\n";
    print_tensors(file.tensors, "  ");
    return 0;
  }
  const TrainingCheckpoint ckpt = load_training_checkpoint(path);  // verifies the checksum
  std::cout << path << ": an ember training checkpoint (checksum " << file.metadata["checksum"] << " verified)\n"
            << "  made by ember " << file.metadata["ember_version"] << "\n"
            << "  epoch " << ckpt.epoch << ", step " << ckpt.step << "\n"
            << "  generator: seed " << ckpt.rng_seed << ", offset " << ckpt.rng_offset << "\n";
  if (!ckpt.info.empty()) {
    std::cout << "  how it was made:\n";
    for (const auto& [key, value] : ckpt.info) {
      if (value.find('\n') == std::string::npos) {
        std::cout << "    " << key << ": " << value << "\n";
        continue;
      }
      std::cout << "    " << key << ":\n";  // a multi-line value (the run's config) as an indented block
      std::istringstream lines(value);
      for (std::string line; std::getline(lines, line);) std::cout << "      " << line << "\n";
    }
  }
  for (const auto& [part, tensors] : ckpt.states) {
    std::cout << "  " << part << ":\n";
    print_tensors(tensors, "    ");
  }
  return 0;
}

}  // namespace ember::cli
