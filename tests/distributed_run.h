// Runs a scenario of tests/distributed/worker.cpp on several ranks.
#pragma once

#include <string>
#include <vector>

#include "distributed_processes.h"

namespace ember::test {

struct RunOptions {
  int world_size = 2;
  int started = -1;  // how many ranks to start (-1: all)
  int timeout_ms = 2000;
  std::vector<std::string> env;
  int limit_ms = 15000;  // hard limit for the whole run
  int may_hang = -1;     // a rank not waited for (it is killed at the end)
};

inline RunOptions ranks(int world_size, std::vector<std::string> env = {}, int timeout_ms = 2000, int limit_ms = 15000) {
  RunOptions o;
  o.world_size = world_size;
  o.env = std::move(env);
  o.timeout_ms = timeout_ms;
  o.limit_ms = limit_ms;
  return o;
}

inline std::vector<RankOutcome> run_ranks(const std::string& scenario, const RunOptions& o) {
  ProcessSet set;
  const int port = free_port();
  const int started = o.started < 0 ? o.world_size : o.started;
  for (int r = 0; r < started; ++r) {
    std::vector<std::string> env = {"RANK=" + std::to_string(r), "WORLD_SIZE=" + std::to_string(o.world_size),
                                    "LOCAL_RANK=" + std::to_string(r),
                                    "LOCAL_WORLD_SIZE=" + std::to_string(o.world_size), "MASTER_ADDR=127.0.0.1",
                                    "MASTER_PORT=" + std::to_string(port),
                                    "EMBER_TEST_TIMEOUT_MS=" + std::to_string(o.timeout_ms)};
    env.insert(env.end(), o.env.begin(), o.env.end());
    set.start({EMBER_DISTRIBUTED_WORKER, scenario}, env);
  }
  return set.wait_all(std::chrono::milliseconds(o.limit_ms), o.may_hang);
}

// Runs the scenario under mpirun (the mpi backend): one child, mpirun, whose
// output holds every rank's.
inline RankOutcome run_mpi(const std::string& scenario, int ranks, std::vector<std::string> env, int timeout_ms = 2000,
                           int limit_ms = 15000) {
  ProcessSet set;
  env.push_back("EMBER_TEST_BACKEND=mpi");
  env.push_back("EMBER_TEST_TIMEOUT_MS=" + std::to_string(timeout_ms));
  set.start({EMBER_MPIEXEC, "-np", std::to_string(ranks), "--oversubscribe", "--allow-run-as-root",
             EMBER_DISTRIBUTED_WORKER, scenario},
            env);
  return set.wait_all(std::chrono::milliseconds(limit_ms)).at(0);
}

}  // namespace ember::test
