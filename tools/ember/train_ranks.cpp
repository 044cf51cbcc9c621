// `ember train --nproc N`: re-runs `ember train` with the same arguments as N
// ranks. Each rank sees the launcher's environment, initialises the process
// group from it and trains under DDP (Note [Trainer under DDP]).
#include "tools/ember/train_ranks.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ember/error.h"

namespace ember::cli {

namespace {

std::string this_program() {
  std::string path(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", path.data(), path.size());
  EMBER_CHECK(n > 0 && static_cast<size_t>(n) < path.size(), "train --nproc: cannot find this program's path: ",
              std::strerror(errno));
  path.resize(static_cast<size_t>(n));
  return path;
}

// `ember train` with the command's arguments, less --nproc.
std::vector<std::string> rank_arguments(const TrainCommand& c) {
  std::vector<std::string> args = {this_program(), "train", "--backend", c.backend};
  auto add = [&](const char* option, const std::string& value) {
    if (!value.empty()) args.insert(args.end(), {option, value});
  };
  add("--config", c.config_path);
  for (const std::string& o : c.overrides) add("--set", o);
  add("--resume", c.resume);
  add("--profile-steps", c.profile_steps);
  add("--trace", c.trace);
  if (c.dry_run) args.push_back("--dry-run");
  return args;
}

}  // namespace

int restart_count() {
  const char* v = std::getenv("EMBER_RESTART_COUNT");
  if (v == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  EMBER_CHECK(*v != '\0' && *end == '\0' && n >= 0 && n <= 1000000, "train: EMBER_RESTART_COUNT must be a count, got '",
              v, "'");
  return static_cast<int>(n);
}

bool is_launched_rank() { return std::getenv("WORLD_SIZE") != nullptr || std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr; }

int train_on_ranks(const TrainCommand& command) {
  std::vector<std::string> args = rank_arguments(command);
  if (command.backend == "gloo") {
    LaunchCommand launch_command;
    launch_command.nproc_per_node = command.nproc;
    launch_command.program = std::move(args);
    return launch(launch_command);
  }
  // The mpi backend meets through MPI: mpiexec starts the ranks.
  args.insert(args.begin(), {"mpiexec", "-n", std::to_string(command.nproc)});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  EMBER_FAIL("train --nproc ", command.nproc, " --backend mpi: cannot run mpiexec (OpenMPI's launcher): ",
             std::strerror(errno));
}

}  // namespace ember::cli
