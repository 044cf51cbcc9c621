// `ember launch`: the environment contract, a failing rank that stops the
// others, and signals passed on to the ranks.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "distributed_processes.h"

namespace ember::test {
namespace {

// The pids the launched ranks printed (lines "pid N").
std::vector<pid_t> printed_pids(const std::string& output) {
  std::vector<pid_t> pids;
  const std::regex line("(^|\n)pid (\\d+)");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    pids.push_back(static_cast<pid_t>(std::stoi((*it)[2])));
  return pids;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

TEST(EmberLaunch, RanksGetTheEnvironmentAndCommunicate) {
  ProcessSet set;
  set.start({EMBER_CLI, "launch", "--nproc-per-node", "3", "--", EMBER_DISTRIBUTED_WORKER, "subgroup"},
            {"EMBER_TEST_TIMEOUT_MS=2000"});
  const RankOutcome o = set.wait_all(std::chrono::seconds(15)).at(0);
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

TEST(EmberLaunch, FailingRankStopsTheOthersAndGivesItsExitCode) {
  ProcessSet set;
  set.start({EMBER_CLI, "launch", "--nproc-per-node", "3", "--", EMBER_DISTRIBUTED_WORKER, "launch_fail"}, {});
  const RankOutcome o = set.wait_all(std::chrono::seconds(10)).at(0);
  EXPECT_EQ(o.exit_code, 7) << o.output;
  EXPECT_NE(o.output.find("rank 1 (pid"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("exited with code 7; stopping the other ranks"), std::string::npos) << o.output;
  const std::vector<pid_t> pids = printed_pids(o.output);
  EXPECT_LE(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << "rank process " << pid << " outlived the launcher";
}

TEST(EmberLaunch, SignalsReachTheRanks) {
  ProcessSet set;
  set.start({EMBER_CLI, "launch", "--nproc-per-node", "2", "--", EMBER_DISTRIBUTED_WORKER, "launch_sleep"}, {});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ::kill(set.pid(0), SIGTERM);
  const RankOutcome o = set.wait_all(std::chrono::seconds(10)).at(0);
  EXPECT_EQ(o.exit_code, 128 + SIGTERM) << o.output;
  EXPECT_NE(o.output.find("got signal 15; passing it to the ranks"), std::string::npos) << o.output;
  for (pid_t pid : printed_pids(o.output)) EXPECT_FALSE(alive(pid)) << "rank process " << pid << " outlived the launcher";
}

TEST(EmberLaunch, BadArgumentsAreNamed) {
  ProcessSet set;
  set.start({EMBER_CLI, "launch", "--nnodes", "2", "--", "true"}, {});
  const RankOutcome o = set.wait_all(std::chrono::seconds(10)).at(0);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.output.find("every node needs the same --master-port"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace ember::test
