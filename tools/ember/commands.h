// Subcommands of the `ember` tool.
#pragma once

#include <string>

namespace ember::cli {

// Lists all ops, or prints one op's schema and kernel table.
int inspect_dispatch(const std::string& op_name);

// Prints a training checkpoint (or any safetensors file): metadata and tensors.
int inspect_checkpoint(const std::string& path);

}  // namespace ember::cli
