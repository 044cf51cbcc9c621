// Starting the ranks of a distributed test: each is a child process running
// tests/distributed/worker.cpp with the launcher's environment, its output in
// a temporary file. Every child lives in its own process group, and the
// ProcessSet kills them all (SIGKILL) when it is destroyed, also when a test
// assertion fails, so no process outlives a test.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace ember::test {

// A port nobody listens on now (the kernel's pick for an ephemeral bind).
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

struct RankOutcome {
  int exit_code = -1;  // -1 when killed by a signal or still running at the limit
  int signal = 0;
  std::string output;
};

class ProcessSet {
 public:
  ProcessSet() = default;
  ProcessSet(const ProcessSet&) = delete;
  ProcessSet& operator=(const ProcessSet&) = delete;
  ~ProcessSet() {
    kill_running();
    for (Child& c : children_) ::unlink(c.log.c_str());
  }

  // Starts `program args...` with `env` ("NAME=value") added to ours.
  void start(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::string path = ::testing::TempDir() + "ember_rank_XXXXXX";
    const int out = ::mkstemp(path.data());
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::dup2(out, 1);
      ::dup2(out, 2);
      for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
      std::vector<char*> argv;
      for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::setpgid(pid, pid);
    ::close(out);
    children_.push_back({pid, path, false, {}});
  }

  pid_t pid(size_t i) const { return children_.at(i).pid; }

  // Waits for every child (but child `may_hang`, if any) up to `limit`; those
  // still running then are killed and reported with exit_code -1 and signal
  // SIGKILL.
  std::vector<RankOutcome> wait_all(std::chrono::milliseconds limit, int may_hang = -1) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      bool running = false;
      for (size_t i = 0; i < children_.size(); ++i) {
        reap(children_[i], WNOHANG);
        running = running || (!children_[i].done && static_cast<int>(i) != may_hang);
      }
      if (!running || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill_running();
    std::vector<RankOutcome> out;
    for (Child& c : children_) {
      std::ifstream f(c.log);
      std::stringstream ss;
      ss << f.rdbuf();
      c.outcome.output = ss.str();
      out.push_back(c.outcome);
    }
    return out;
  }

 private:
  struct Child {
    pid_t pid;
    std::string log;
    bool done;
    RankOutcome outcome;
  };
  void reap(Child& c, int flags) {
    if (c.done) return;
    int status = 0;
    if (::waitpid(c.pid, &status, flags) != c.pid) return;
    c.done = true;
    if (WIFEXITED(status)) c.outcome.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) c.outcome.signal = WTERMSIG(status);
  }
  void kill_running() {
    for (Child& c : children_) {
      if (c.done) continue;
      ::kill(-c.pid, SIGKILL);
      reap(c, 0);
    }
  }
  std::vector<Child> children_;
};

}  // namespace ember::test
