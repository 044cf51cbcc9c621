// Collectives across real processes over Gloo (tests/distributed/worker.cpp
// runs each rank).
#include <gtest/gtest.h>
#include <unistd.h>

#include "distributed_run.h"

namespace ember::test {
namespace {

void expect_all_succeed(const std::vector<RankOutcome>& outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r)
    EXPECT_EQ(outcomes[r].exit_code, 0) << "rank " << r << " (signal " << outcomes[r].signal << "):\n"
                                        << outcomes[r].output;
}

TEST(DistributedGloo, EveryCollectiveAndDtypeOnTwoRanks) {
  expect_all_succeed(run_ranks("collectives", ranks(2)));
}

TEST(DistributedGloo, EveryCollectiveAndDtypeOnThreeRanks) {
  expect_all_succeed(run_ranks("collectives", ranks(3)));
}

TEST(DistributedGloo, SubgroupOfRanksZeroAndTwo) { expect_all_succeed(run_ranks("subgroup", ranks(3))); }

TEST(DistributedGloo, FileStoreRendezvous) {
  std::string path = ::testing::TempDir() + "ember_filestore_XXXXXX";
  ::close(::mkstemp(path.data()));
  ::unlink(path.c_str());
  expect_all_succeed(run_ranks("collectives", ranks(2, {"EMBER_TEST_INIT_METHOD=file://" + path})));
  ::unlink(path.c_str());
}

TEST(DistributedGloo, TcpInitMethod) {
  const int port = free_port();
  expect_all_succeed(run_ranks(
      "subgroup", ranks(3, {"EMBER_TEST_INIT_METHOD=tcp://127.0.0.1:" + std::to_string(port)})));
}

}  // namespace
}  // namespace ember::test
