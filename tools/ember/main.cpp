// The `ember` command line. Every failure ends with one "ember: ..." line on
// stderr and a non-zero exit code: ember::Error (bad input, named precisely)
// exits 1, anything else (a bug, or a library's own exception) exits 2;
// command-line syntax errors exit with CLI11's codes.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "ember/error.h"
#include "ember/version.h"
#include "tools/ember/commands.h"

namespace {

// CLI11 answers a mistyped command with "A subcommand is required"; name it instead.
bool unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::string word = argv[1];
  std::string known;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return false;
    known += (known.empty() ? "" : ", ") + sub->get_name();
  }
  std::cerr << "ember: unknown command '" << word << "' (commands: " << known << "; see ember --help)\n";
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ember: a tensor and autograd engine"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ember ") + ember::version());

  CLI::App* inspect = app.add_subcommand("inspect", "Ask the engine what it has and does");
  inspect->require_subcommand(1);
  bool inspect_json = false;
  std::string op_name;
  CLI::App* dispatch = inspect->add_subcommand("dispatch", "List the dispatcher's ops, or one op's kernel table");
  dispatch->add_option("op", op_name, "An op name, e.g. add");
  dispatch->add_flag("--json", inspect_json, "Print JSON");
  std::string checkpoint_path;
  CLI::App* checkpoint = inspect->add_subcommand("checkpoint", "Print a training checkpoint or a safetensors file");
  checkpoint->add_option("path", checkpoint_path, "The file")->required();
  checkpoint->add_flag("--json", inspect_json, "Print JSON");
  CLI::App* ops = inspect->add_subcommand("ops", "Every op: kernels per device and dtype, derivative, reference kernel");
  ops->add_flag("--json", inspect_json, "Print JSON");
  ember::cli::InspectModelCommand model_command;
  CLI::App* autograd = inspect->add_subcommand("autograd", "The backward graph of a config's model for one batch");
  autograd->add_option("--config", model_command.config_path, "The config file")->required();
  autograd->add_option("--set", model_command.overrides, "Override a config key (repeatable)")->allow_extra_args(false);
  autograd->add_flag("--dot", model_command.dot, "Print Graphviz DOT instead of text");
  autograd->add_flag("--json", model_command.json, "Print JSON");
  CLI::App* memory = inspect->add_subcommand("memory", "The CPU allocator's statistics and size classes");
  memory->add_option("--config", model_command.config_path, "Run one training step of this config's model first");
  memory->add_option("--set", model_command.overrides, "Override a config key (repeatable)")->allow_extra_args(false);
  memory->add_flag("--json", model_command.json, "Print JSON");
  std::string graph_path;
  bool graph_passes = false, graph_dot = false;
  CLI::App* graph = inspect->add_subcommand("graph", "Print a graph archive (.emb) as text, DOT or JSON");
  graph->add_option("path", graph_path, "The archive")->required();
  graph->add_flag("--passes", graph_passes, "Run the passes and print the graph after each");
  graph->add_flag("--dot", graph_dot, "Print Graphviz DOT instead of text");
  graph->add_flag("--json", inspect_json, "Print JSON");

  ember::cli::RunCommand run_command;
  CLI::App* run = app.add_subcommand("run", "Run a graph archive on inputs from a safetensors file (docs/graphs.md)");
  run->add_option("archive", run_command.archive, "The archive, e.g. model.emb")->required();
  run->add_option("--input", run_command.input, "A safetensors file with one tensor per graph input")->required();
  run->add_option("--output", run_command.output, "Where the outputs go (safetensors)");
  run->add_option("--bench", run_command.bench, "Time N more runs and print the median");

  ember::cli::TrainCommand train_command;
  CLI::App* train = app.add_subcommand("train", "Train a model as a YAML config says (docs/training.md)");
  train->add_option("--config", train_command.config_path, "The config file, e.g. config/fashion_mnist_cnn.yaml");
  train->add_option("--set", train_command.overrides, "Override a config key: --set optimizer.lr=0.01 (repeatable)")
      ->allow_extra_args(false);
  train->add_option("--resume", train_command.resume, "Continue from a checkpoint (e.g. runs/x/last.ckpt)");
  train->add_flag("--dry-run", train_command.dry_run, "Check the config and build the model, then exit");
  train->add_option("--profile-steps", train_command.profile_steps,
                    "Profile optimiser steps FIRST:END (END excluded), e.g. 5:10");
  train->add_option("--trace", train_command.trace, "The Chrome trace of --profile-steps (default OUTPUT/trace.json)");
  train->add_option("--nproc", train_command.nproc, "Train on N processes (ranks) of this machine (docs/distributed.md)");
  train->add_option("--backend", train_command.backend, "The ranks' backend with --nproc: gloo (default) or mpi");

  ember::cli::ProfileCommand profile_command;
  CLI::App* profile = app.add_subcommand("profile", "Train a few steps of a config and profile them (docs/profiling.md)");
  profile->add_option("--config", profile_command.config_path, "The config file")->required();
  profile->add_option("--set", profile_command.overrides, "Override a config key (repeatable)")->allow_extra_args(false);
  profile->add_option("--steps", profile_command.steps, "Optimiser steps FIRST:END to profile (default 5:10)");
  profile->add_option("--trace", profile_command.trace, "Where the Chrome trace goes (default trace.json)");
  profile->add_option("--row-limit", profile_command.row_limit, "Rows of the op table (default 20)");

  ember::cli::LaunchCommand launch_command;
  CLI::App* launch = app.add_subcommand("launch", "Start the ranks of a distributed run: launch [options] -- PROGRAM ARGS");
  launch->add_option("--nproc-per-node", launch_command.nproc_per_node, "Ranks on this node");
  launch->add_option("--nnodes", launch_command.nnodes, "Nodes in the run");
  launch->add_option("--node-rank", launch_command.node_rank, "This node's index");
  launch->add_option("--master-addr", launch_command.master_addr, "Where rank 0's store listens");
  launch->add_option("--master-port", launch_command.master_port, "Its port (default: a free one on one node)");
  launch->add_option("--max-restarts", launch_command.max_restarts,
                     "When a rank fails, restart all ranks up to K times (default 0)");
  launch->add_option("program", launch_command.program, "The program and its arguments, after --")->required();

  ember::cli::ExportCommand export_command;
  CLI::App* export_app =
      app.add_subcommand("export", "Write a config's model as ONNX or a graph archive (docs/graphs.md)");
  export_app->add_option("--format", export_command.format, "onnx or archive (default: from --output's extension)");
  export_app->add_option("--config", export_command.config_path, "The config file, e.g. config/fashion_mnist_cnn.yaml");
  export_app->add_option("--set", export_command.overrides, "Override a config key (repeatable)")
      ->allow_extra_args(false);
  export_app->add_option("--checkpoint", export_command.checkpoint, "The weights, e.g. runs/x/best.ckpt");
  export_app->add_option("--output", export_command.output, "model.onnx or model.emb")->required();

  ember::cli::BenchCommand bench_command;
  CLI::App* bench = app.add_subcommand("bench", "Time every kernel against the roofline and its reference (docs/profiling.md)");
  bench->add_option("--op", bench_command.ops, "An op to run (repeatable; default: all), e.g. mm")->allow_extra_args(false);
  bench->add_option("--dtype", bench_command.dtype, "float32 (default), float64, bfloat16, float16");
  bench->add_option("--device", bench_command.device, "cpu (default) or cuda");
  bench->add_option("--shapes", bench_command.shapes, "Shapes instead of each op's list, e.g. 256x256x256,8x3");
  bench->add_option("--threads", bench_command.threads, "Intra-op threads (default: ember's)");
  bench->add_option("--repetitions", bench_command.repetitions, "Timed repetitions per case (default 7)");
  bench->add_option("--min-time", bench_command.min_time, "Seconds each repetition runs at least (default 0.02)");
  bench->add_flag("--vs-torch", bench_command.vs_torch, "Time libtorch on the same cases, interleaved");
  bench->add_option("--torch-plugin", bench_command.torch_plugin, "The libtorch plugin (default: next to ember)");
  bench->add_option("--json", bench_command.json, "Write the report (or with --machine, the limits) as JSON");
  bench->add_option("--svg", bench_command.svg, "Write the roofline plot");
  bench->add_option("--markdown", bench_command.markdown, "Write the table to a file too");
  bench->add_flag("--machine", bench_command.machine, "Measure the FMA peak and memory bandwidth, print them");
  bench->add_option("--machine-file", bench_command.machine_file, "Limits from an earlier --machine --json");
  bench->add_option("--update-doc", bench_command.update_doc, "Rewrite this markdown file's ember bench section");
  bench->add_option("--from", bench_command.from, "The --json report --update-doc reads");

  if (unknown_command(app, argc, argv)) return static_cast<int>(CLI::ExitCodes::ExtrasError);
  CLI11_PARSE(app, argc, argv);
  try {
    if (dispatch->parsed()) return ember::cli::inspect_dispatch(op_name, inspect_json);
    if (checkpoint->parsed()) return ember::cli::inspect_checkpoint(checkpoint_path, inspect_json);
    if (ops->parsed()) return ember::cli::inspect_ops(inspect_json);
    if (autograd->parsed()) return ember::cli::inspect_autograd(model_command);
    if (memory->parsed()) return ember::cli::inspect_memory(model_command);
    if (graph->parsed()) return ember::cli::inspect_graph(graph_path, graph_passes, graph_dot, inspect_json);
    if (run->parsed()) return ember::cli::run_graph(run_command);
    if (train->parsed()) return ember::cli::train(train_command);
    if (export_app->parsed()) return ember::cli::export_model(export_command);
    if (profile->parsed()) return ember::cli::profile(profile_command);
    if (launch->parsed()) return ember::cli::launch(launch_command);
    if (bench->parsed()) return ember::cli::run_bench(bench_command);
  } catch (const ember::Error& e) {
    std::cerr << "ember: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ember: unexpected error (please report it): " << e.what() << "\n";
    return 2;
  } catch (...) {
    std::cerr << "ember: unexpected error of unknown type (please report it)\n";
    return 2;
  }
  return 0;
}
