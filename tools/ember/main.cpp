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

  if (unknown_command(app, argc, argv)) return static_cast<int>(CLI::ExitCodes::ExtrasError);
  CLI11_PARSE(app, argc, argv);
  try {
    if (dispatch->parsed()) return ember::cli::inspect_dispatch(op_name);
    if (checkpoint->parsed()) return ember::cli::inspect_checkpoint(checkpoint_path);
    if (train->parsed()) return ember::cli::train(train_command);
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
