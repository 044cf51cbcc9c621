// Two hosts on one machine: rank 0 and rank 1 in two network namespaces
// joined by a veth pair, the store and Gloo across it (each rank's Gloo
// device bound to its veth address). A collective succeeds; cutting the link
// during DDP training makes both ranks fail with an ember::Error within the
// timeout + 5 s. Needs root and `ip netns`; skips otherwise. The namespaces
// (and the veth pair with them) are deleted in TearDown, also on failure.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "distributed_processes.h"

namespace ember::test {
namespace {

constexpr int kTimeoutMs = 2000;

bool shell(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()) == 0; }

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

class TwoHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
    if (!shell("ip netns list")) GTEST_SKIP() << "`ip netns` is unavailable";
    static std::atomic<int> runs{0};
    // Unique per process and test; interface names stay under 16 characters.
    const std::string tag = std::to_string(::getpid()) + "x" + std::to_string(runs++);
    ns_[0] = "ember" + tag + "a";
    ns_[1] = "ember" + tag + "b";
    veth_[0] = "ev" + tag + "a";
    veth_[1] = "ev" + tag + "b";
    dir_ = ::testing::TempDir() + "ember_netns_XXXXXX";
    ASSERT_NE(::mkdtemp(dir_.data()), nullptr);
    created_ = true;
    ASSERT_TRUE(shell("ip netns add " + ns_[0]) && shell("ip netns add " + ns_[1]));
    ASSERT_TRUE(shell("ip link add " + veth_[0] + " type veth peer name " + veth_[1]));
    for (int i = 0; i < 2; ++i) {
      const std::string in = "ip -n " + ns_[i] + " ";
      ASSERT_TRUE(shell("ip link set " + veth_[i] + " netns " + ns_[i]));
      ASSERT_TRUE(shell(in + "addr add " + address(i) + "/24 dev " + veth_[i]));
      ASSERT_TRUE(shell(in + "link set " + veth_[i] + " up") && shell(in + "link set lo up"));
    }
  }

  void TearDown() override {
    if (!created_) return;
    // Deleting a namespace deletes the veth end inside it, and with it the pair.
    shell("ip netns del " + ns_[0]);
    shell("ip netns del " + ns_[1]);
    shell("ip link del " + veth_[0]);  // still in this namespace if set-up stopped early
    std::filesystem::remove_all(dir_);
  }

  static std::string address(int rank) { return "10.231.0." + std::to_string(rank + 1); }

  // Starts `scenario` as rank `rank` inside its namespace.
  void start_rank(ProcessSet& set, int rank, const std::string& scenario) {
    set.start({"/bin/sh", "-c", "exec ip netns exec " + ns_[rank] + " " + EMBER_DISTRIBUTED_WORKER + " " + scenario},
              {"RANK=" + std::to_string(rank), "WORLD_SIZE=2", "MASTER_ADDR=" + address(0), "MASTER_PORT=29500",
               "EMBER_GLOO_HOSTNAME=" + address(rank), "EMBER_TEST_TIMEOUT_MS=" + std::to_string(kTimeoutMs),
               "EMBER_TEST_DIR=" + dir_});
  }

  std::string ns_[2], veth_[2], dir_;
  bool created_ = false;
};

TEST_F(TwoHosts, CollectiveSucceedsAndCuttingTheLinkFailsBothRanksWithinTheTimeout) {
  ProcessSet set;
  start_rank(set, 0, "link_cut");
  start_rank(set, 1, "link_cut");
  // Both ranks did an all-reduce across the link and are training.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!(exists(dir_ + "/ready0") && exists(dir_ + "/ready1")) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(exists(dir_ + "/ready0") && exists(dir_ + "/ready1"))
      << "the ranks did not get through their first all-reduce:\n"
      << set.wait_all(std::chrono::seconds(0))[0].output;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(shell("ip -n " + ns_[0] + " link set " + veth_[0] + " down"));
  // Ranks still running after the timeout + 5 s are killed and fail below.
  const std::vector<RankOutcome> outcomes = set.wait_all(std::chrono::milliseconds(kTimeoutMs + 5000));
  for (size_t r = 0; r < outcomes.size(); ++r) {
    EXPECT_EQ(outcomes[r].exit_code, 0) << "rank " << r << " (signal " << outcomes[r].signal << "):\n"
                                        << outcomes[r].output;
    EXPECT_NE(outcomes[r].output.find("ERROR: ProcessGroup(gloo) rank " + std::to_string(r) + "/2"),
              std::string::npos)
        << outcomes[r].output;
  }
}

}  // namespace
}  // namespace ember::test
