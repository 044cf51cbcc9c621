// `ember launch --max-restarts K`: a rank that dies makes the launcher tear
// down and restart all ranks, which resume from rank 0's last checkpoint and
// end bit for bit like a run that was never interrupted (CPU, same world
// size). With --max-restarts 0 the launcher returns the failing rank's code.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "distributed_processes.h"
#include "tests/test_data_util.h"

namespace ember::test {
namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<pid_t> printed_pids(const std::string& output) {
  std::vector<pid_t> pids;
  const std::regex line("(^|\n)pid (\\d+)");
  for (std::sregex_iterator it(output.begin(), output.end(), line), end; it != end; ++it)
    pids.push_back(static_cast<pid_t>(std::stoi((*it)[2])));
  return pids;
}

// `ember launch --nproc-per-node 2 --max-restarts K -- worker trainer_elastic`.
RankOutcome launch(const std::string& dir, int max_restarts, int kill_at_step) {
  ProcessSet set;
  std::vector<std::string> env = {"EMBER_TEST_TIMEOUT_MS=5000", "EMBER_TEST_DIR=" + dir};
  if (kill_at_step > 0) env.push_back("EMBER_TEST_KILL_AT_STEP=" + std::to_string(kill_at_step));
  set.start({EMBER_CLI, "launch", "--nproc-per-node", "2", "--max-restarts", std::to_string(max_restarts), "--",
             EMBER_DISTRIBUTED_WORKER, "trainer_elastic"},
            env);
  RankOutcome o = set.wait_all(std::chrono::seconds(60)).at(0);
  for (pid_t pid : printed_pids(o.output))
    EXPECT_NE(::kill(pid, 0), 0) << "rank process " << pid << " outlived the launcher";
  return o;
}

TEST(EmberLaunchRestarts, KilledRankIsRestartedAndTheRunEndsBitwiseLikeAnUninterruptedOne) {
  ember::testing::ScratchDir clean, restarted;
  const RankOutcome a = launch(clean.dir(), 1, 0);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  EXPECT_EQ(a.output.find("restarting"), std::string::npos) << a.output;
  // Rank 1 kills itself after step 4, inside epoch 2; the checkpoint of epoch 1 is there.
  const RankOutcome b = launch(restarted.dir(), 1, 4);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("rank 1 (pid"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("exited with code 137"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("restarting all ranks (restart 1 of at most 1)"), std::string::npos) << b.output;
  EXPECT_NE(b.output.find("rank 1: restart 1 resumes from"), std::string::npos) << b.output;
  for (const char* name : {"/final_rank0.safetensors", "/final_rank1.safetensors"}) {
    const std::string want = file_bytes(clean.dir() + name), got = file_bytes(restarted.dir() + name);
    EXPECT_FALSE(want.empty()) << name;
    EXPECT_TRUE(want == got) << name << " differs from the uninterrupted run's";
  }
}

TEST(EmberLaunchRestarts, WithoutRestartsTheFailingRanksCodeIsReturned) {
  ember::testing::ScratchDir dir;
  const RankOutcome o = launch(dir.dir(), 0, 4);
  EXPECT_EQ(o.exit_code, 128 + SIGKILL) << o.output;
  EXPECT_EQ(o.output.find("restarting"), std::string::npos) << o.output;
}

TEST(EmberLaunchRestarts, NegativeMaxRestartsIsNamed) {
  ProcessSet set;
  set.start({EMBER_CLI, "launch", "--max-restarts", "-1", "--", "true"}, {});
  const RankOutcome o = set.wait_all(std::chrono::seconds(10)).at(0);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.output.find("--max-restarts must be >= 0, got -1"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace ember::test
