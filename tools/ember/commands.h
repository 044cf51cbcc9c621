// Subcommands of the `ember` tool.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ember::cli {

// Lists all ops, or prints one op's schema and kernel table (`json`: as JSON).
int inspect_dispatch(const std::string& op_name, bool json);

// Prints a training checkpoint (or any safetensors file): metadata and tensors.
int inspect_checkpoint(const std::string& path, bool json);

// Every op: kernels by device and dtype, derivative, reference kernel. inspect_ops.cpp.
int inspect_ops(bool json);

// `ember inspect autograd` and `ember inspect memory`: a config's model on
// one random batch (docs/profiling.md, "Asking the engine").
struct InspectModelCommand {
  std::string config_path;             // --config (memory: optional)
  std::vector<std::string> overrides;  // --set key.sub=value
  bool dot = false;                    // autograd: Graphviz DOT
  bool json = false;
};

// The backward graph of the config's model for one batch: nodes, their
// gradient inputs, next functions and saved tensors, leaves with parameter
// names. inspect_autograd.cpp.
int inspect_autograd(const InspectModelCommand& command);

// The CPU allocator's statistics and size classes, after one training step of
// the config's model when one is given. inspect_memory.cpp.
int inspect_memory(const InspectModelCommand& command);

// Prints a graph archive's graph (--dot: as DOT; --passes: then each pass's
// log and the graph after it; --json: the graph as JSON, graph_json.h, and
// with --passes the graph before, the log and the graph after). run_graph.cpp.
int inspect_graph(const std::string& path, bool passes, bool dot, bool json);

struct RunCommand {
  std::string archive;  // model.emb
  std::string input;    // --input x.safetensors: one tensor per graph input, by name
  std::string output;   // --output y.safetensors ("output", or "output0", "output1", ...)
  int64_t bench = 0;    // --bench N: time N more runs, print the median
};

// Runs a graph archive (docs/graphs.md). run_graph.cpp.
int run_graph(const RunCommand& command);

struct TrainCommand {
  std::string config_path;             // --config (may be empty with --resume)
  std::vector<std::string> overrides;  // --set key.sub=value, in order
  std::string resume;                  // --resume CHECKPOINT
  bool dry_run = false;                // check the config, build the model, print, exit
  std::string profile_steps;           // --profile-steps FIRST:END (optimiser steps)
  std::string trace;                   // --trace FILE (default <output>/trace.json)
  int nproc = 0;                       // --nproc N: train on N ranks (re-runs itself through `ember launch`)
  std::string backend = "gloo";        // --backend gloo|mpi: the ranks' process group
};

// Trains a model as a YAML config says (docs/training.md); in a launcher's
// environment (WORLD_SIZE or mpirun's), as one rank of a distributed run
// (docs/distributed.md, "ember train --nproc").
int train(const TrainCommand& command);

struct ExportCommand {
  std::string format;                  // --format onnx|archive (default: from the output's extension)
  std::string config_path;             // --config (may be empty with --checkpoint)
  std::vector<std::string> overrides;  // --set key.sub=value
  std::string checkpoint;              // --checkpoint FILE: the weights (default: freshly initialised)
  std::string output;                  // --output model.onnx / model.emb
};

// Writes a config's model as an ONNX model or a graph archive (docs/graphs.md). export.cpp.
int export_model(const ExportCommand& command);

struct ProfileCommand {
  std::string config_path;             // --config
  std::vector<std::string> overrides;  // --set key.sub=value
  std::string steps = "5:10";          // --steps FIRST:END
  std::string trace = "trace.json";    // --trace FILE
  int64_t row_limit = 20;              // --row-limit
};

// Trains a config's model for END optimiser steps only, profiling steps
// FIRST..END-1 (docs/profiling.md); writes nothing but the trace.
int profile(const ProfileCommand& command);

struct LaunchCommand {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;               // 0: a free port (one node), else required
  int max_restarts = 0;              // restarts of all ranks after a failure (EMBER_RESTART_COUNT)
  std::vector<std::string> program;  // after `--`
};

// Starts the ranks of this node with the launcher environment contract
// (docs/distributed.md); returns the first failing rank's exit code, or 0.
// A failure restarts all ranks, up to max_restarts times.
int launch(const LaunchCommand& command);

struct BenchCommand {
  std::vector<std::string> ops;  // --op (repeatable; default: all)
  std::string dtype = "float32";
  std::string device = "cpu";
  std::string shapes;            // --shapes 256x256x256,8x3 (default: each op's list)
  int threads = 0;               // 0: ember's default
  int repetitions = 7;
  double min_time = 0.02;        // seconds per repetition, at least
  bool vs_torch = false;
  std::string torch_plugin;      // --torch-plugin PATH
  std::string json, svg, markdown;
  bool machine = false;          // --machine: measure and print the limits only
  std::string machine_file;      // --machine-file: limits from an earlier --machine --json
  std::string update_doc, from;  // --update-doc FILE --from REPORT.json
};

// Times every kernel against the roofline and its reference kernel
// (docs/profiling.md, "ember bench"). tools/ember/bench_command.cpp.
int run_bench(const BenchCommand& command);

}  // namespace ember::cli
