// Subcommands of the `ember` tool.
#pragma once

#include <string>
#include <vector>

namespace ember::cli {

// Lists all ops, or prints one op's schema and kernel table.
int inspect_dispatch(const std::string& op_name);

// Prints a training checkpoint (or any safetensors file): metadata and tensors.
int inspect_checkpoint(const std::string& path);

struct TrainCommand {
  std::string config_path;             // --config (may be empty with --resume)
  std::vector<std::string> overrides;  // --set key.sub=value, in order
  std::string resume;                  // --resume CHECKPOINT
  bool dry_run = false;                // check the config, build the model, print, exit
};

// Trains a model as a YAML config says (docs/training.md).
int train(const TrainCommand& command);

}  // namespace ember::cli
