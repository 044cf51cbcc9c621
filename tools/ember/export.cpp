// `ember export`: builds a config's model, loads a checkpoint's weights into
// it and writes it as an ONNX model or a graph archive (docs/graphs.md).
#include <iostream>
#include <optional>

#include "ember/autograd.h"
#include "ember/jit.h"
#include "ember/onnx.h"
#include "ember/ops.h"
#include "ember/training_checkpoint.h"
#include "tools/ember/commands.h"
#include "tools/ember/export_model.h"
#include "tools/ember/train_config.h"
#include "tools/ember/train_models.h"

namespace ember::cli {

std::string export_format(const std::string& format, const std::string& path, const char* what) {
  if (!format.empty()) {
    EMBER_CHECK(format == "onnx" || format == "archive", what, ": --format is '", format,
                "'; expected onnx or archive");
    return format;
  }
  if (path.ends_with(".onnx")) return "onnx";
  if (path.ends_with(".emb")) return "archive";
  EMBER_FAIL(what, ": cannot tell the format of ", path, " (give --format onnx|archive, or a path ending in .onnx "
             "or .emb)");
}

void export_trained_model(const TrainableModel& model, const std::string& path, const std::string& format) {
  model.module->eval();
  // Traced without recording gradients, as inference runs: ops that keep
  // something only for backward (max pooling's indices) are not in the graph.
  NoGradGuard no_grad;
  const jit::GraphModule graph = jit::trace_module(
      model.module, [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{model.forward(x[0])}; },
      {randn({2, 1, 28, 28})});
  if (format == "onnx") onnx::export_graph(graph, path);
  else jit::save(graph, path);
}

int export_model(const ExportCommand& command) {
  const std::string format = export_format(command.format, command.output, "export");
  std::optional<TrainingCheckpoint> checkpoint;
  if (!command.checkpoint.empty()) checkpoint = load_training_checkpoint(command.checkpoint);
  TrainConfig config;
  if (!command.config_path.empty()) {
    config = load_train_config(command.config_path, command.overrides);
  } else {
    // A checkpoint of `ember train` carries the config it was trained with.
    EMBER_CHECK(checkpoint, "export: give --config FILE, or --checkpoint FILE of a run of ember train");
    auto text = checkpoint->info.find("config");
    EMBER_CHECK(text != checkpoint->info.end(), "export: ", command.checkpoint,
                " holds no config (info.config); give --config FILE as well");
    config = parse_train_config(text->second, command.checkpoint + " (info.config)", command.overrides);
  }
  TrainableModel model = make_model(config.model);
  if (checkpoint) {
    auto state = checkpoint->states.find("model");
    EMBER_CHECK(state != checkpoint->states.end(), "export: ", command.checkpoint, " has no model state");
    model.module->load_state_dict(state->second);
  }
  export_trained_model(model, command.output, format);
  std::cout << "export: model " << config.model.name << (checkpoint ? " from " + command.checkpoint : " (untrained)")
            << " written to " << command.output << " (" << (format == "onnx" ? "ONNX, opset 17" : "graph archive")
            << ", batch dimension dynamic)\n";
  return 0;
}

}  // namespace ember::cli
