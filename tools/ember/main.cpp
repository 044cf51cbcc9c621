// The `ember` command line.
#include <CLI/CLI.hpp>
#include <iostream>

#include "ember/error.h"
#include "tools/ember/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"ember: a tensor and autograd engine"};
  app.require_subcommand(1);

  CLI::App* inspect = app.add_subcommand("inspect", "Ask the engine what it has and does");
  inspect->require_subcommand(1);
  std::string op_name;
  CLI::App* dispatch = inspect->add_subcommand("dispatch", "List the dispatcher's ops, or one op's kernel table");
  dispatch->add_option("op", op_name, "An op name, e.g. add");
  std::string checkpoint_path;
  CLI::App* checkpoint = inspect->add_subcommand("checkpoint", "Print a training checkpoint or a safetensors file");
  checkpoint->add_option("path", checkpoint_path, "The file")->required();

  ember::cli::TrainCommand train_command;
  CLI::App* train = app.add_subcommand("train", "Train a model as a YAML config says (docs/training.md)");
  train->add_option("--config", train_command.config_path, "The config file, e.g. config/fashion_mnist_cnn.yaml");
  train->add_option("--set", train_command.overrides, "Override a config key: --set optimizer.lr=0.01 (repeatable)")
      ->allow_extra_args(false);
  train->add_option("--resume", train_command.resume, "Continue from a checkpoint (e.g. runs/x/last.ckpt)");
  train->add_flag("--dry-run", train_command.dry_run, "Check the config and build the model, then exit");

  CLI11_PARSE(app, argc, argv);
  try {
    if (dispatch->parsed()) return ember::cli::inspect_dispatch(op_name);
    if (checkpoint->parsed()) return ember::cli::inspect_checkpoint(checkpoint_path);
    if (train->parsed()) return ember::cli::train(train_command);
  } catch (const ember::Error& e) {
    std::cerr << "ember: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
