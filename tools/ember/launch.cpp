// `ember launch`: starts one process per rank of this node with the
// launcher environment contract (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT, EMBER_RESTART_COUNT), forwards
// SIGINT, SIGTERM and SIGHUP to them, and when one rank fails stops the
// others (SIGTERM, then SIGKILL after 5 s) and returns the failing rank's
// exit code (128 + signal when a signal ended it). With --max-restarts K it
// starts all ranks again instead, up to K times, on a fresh master port
// (a new rendezvous); the program resumes from its last checkpoint.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <iostream>
#include <thread>

#include "ember/error.h"
#include "tools/ember/commands.h"

namespace ember::cli {

namespace {

volatile sig_atomic_t g_signal = 0;
bool g_signalled = false;  // a signal was passed on to the ranks

void remember_signal(int sig) { g_signal = sig; }

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  EMBER_CHECK(fd >= 0, "launch: socket() failed: ", std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  EMBER_CHECK(ok, "launch: cannot find a free port: ", std::strerror(errno));
  return ntohs(a.sin_port);
}

struct Rank {
  int rank;
  pid_t pid;
  bool running = true;
  int code = 0;
};

pid_t spawn(const std::vector<std::string>& program, const std::vector<std::string>& env) {
  const pid_t pid = ::fork();
  EMBER_CHECK(pid >= 0, "launch: fork() failed: ", std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: signals reach the rank's children too
    for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> argv;
    for (const std::string& a : program) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::cerr << "ember launch: cannot run '" << program[0] << "': " << std::strerror(errno) << "\n";
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

void signal_all(std::vector<Rank>& ranks, int sig) {
  for (Rank& r : ranks)
    if (r.running) ::kill(-r.pid, sig);
}

// Reaps the ranks that ended; returns the first that failed, or null.
Rank* reap(std::vector<Rank>& ranks) {
  Rank* failed = nullptr;
  for (Rank& r : ranks) {
    int status = 0;
    if (!r.running || ::waitpid(r.pid, &status, WNOHANG) != r.pid) continue;
    r.running = false;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r.code != 0 && !failed) failed = &r;
  }
  return failed;
}

bool any_running(const std::vector<Rank>& ranks) {
  for (const Rank& r : ranks)
    if (r.running) return true;
  return false;
}

// SIGTERM to every rank still running; SIGKILL to those left after the grace.
void stop_all(std::vector<Rank>& ranks) {
  signal_all(ranks, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (any_running(ranks) && std::chrono::steady_clock::now() < deadline) {
    reap(ranks);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  signal_all(ranks, SIGKILL);
  for (Rank& r : ranks)
    if (r.running) {
      ::waitpid(r.pid, nullptr, 0);
      r.running = false;
    }
}

// Runs the ranks of this node once; returns the first failing rank's exit
// code, or 0. `restart` counts the earlier runs (EMBER_RESTART_COUNT).
int run_ranks(const LaunchCommand& c, int port, int restart) {
  const int world = c.nnodes * c.nproc_per_node;
  std::vector<Rank> ranks;
  for (int local = 0; local < c.nproc_per_node; ++local) {
    const int rank = c.node_rank * c.nproc_per_node + local;
    const std::vector<std::string> env = {
        "RANK=" + std::to_string(rank),           "WORLD_SIZE=" + std::to_string(world),
        "LOCAL_RANK=" + std::to_string(local),    "LOCAL_WORLD_SIZE=" + std::to_string(c.nproc_per_node),
        "MASTER_ADDR=" + c.master_addr,           "MASTER_PORT=" + std::to_string(port),
        "EMBER_RESTART_COUNT=" + std::to_string(restart)};
    ranks.push_back({rank, spawn(c.program, env)});
  }
  while (any_running(ranks)) {
    if (g_signal != 0) {
      const int sig = g_signal;
      std::cerr << "ember launch: got signal " << sig << "; passing it to the ranks\n";
      signal_all(ranks, sig);
      g_signal = 0;
      g_signalled = true;
    }
    if (Rank* failed = reap(ranks)) {
      const int code = failed->code;
      std::cerr << "ember launch: rank " << failed->rank << " (pid " << failed->pid << ") exited with code " << code
                << "; stopping the other ranks\n";
      stop_all(ranks);
      return code;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return 0;
}

}  // namespace

int launch(const LaunchCommand& c) {
  EMBER_CHECK(!c.program.empty(), "launch: no program given (ember launch [options] -- PROGRAM ARGS)");
  EMBER_CHECK(c.nproc_per_node >= 1, "launch: --nproc-per-node must be >= 1, got ", c.nproc_per_node);
  EMBER_CHECK(c.nnodes >= 1, "launch: --nnodes must be >= 1, got ", c.nnodes);
  EMBER_CHECK(c.node_rank >= 0 && c.node_rank < c.nnodes, "launch: --node-rank ", c.node_rank, " is outside [0, ",
              c.nnodes, ")");
  EMBER_CHECK(c.master_port > 0 || c.nnodes == 1, "launch: with --nnodes ", c.nnodes,
              " every node needs the same --master-port");
  EMBER_CHECK(c.master_port >= 0 && c.master_port <= 65535, "launch: --master-port ", c.master_port,
              " is outside [0, 65535]");
  EMBER_CHECK(c.max_restarts >= 0, "launch: --max-restarts must be >= 0, got ", c.max_restarts);

  struct sigaction sa {};
  sa.sa_handler = remember_signal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);

  for (int restart = 0;; ++restart) {
    const int code = run_ranks(c, c.master_port > 0 ? c.master_port : free_port(), restart);
    // A run the user stopped (a signal passed on) is not restarted.
    if (code == 0 || g_signalled || restart == c.max_restarts) return code;
    std::cerr << "ember launch: restarting all ranks (restart " << restart + 1 << " of at most " << c.max_restarts
              << ")\n";
  }
}

}  // namespace ember::cli
