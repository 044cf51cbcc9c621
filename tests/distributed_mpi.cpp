// The mpi backend: the same scenarios as over Gloo, each started under
// mpirun by the test (tests/distributed/worker.cpp runs each rank).
#include <gtest/gtest.h>

#include "distributed_run.h"

namespace ember::test {
namespace {

void expect_success(const RankOutcome& o) {
  EXPECT_EQ(o.exit_code, 0) << "mpirun (signal " << o.signal << "):\n" << o.output;
}

TEST(DistributedMpi, EveryCollectiveAndDtypeOnThreeRanks) { expect_success(run_mpi("collectives", 3, {})); }

TEST(DistributedMpi, SubgroupOfRanksZeroAndTwo) { expect_success(run_mpi("subgroup", 3, {})); }

TEST(DistributedMpi, DdpGradientsMatchTheWholeBatchOnTwoRanks) { expect_success(run_mpi("ddp_gradients", 2, {})); }

TEST(DistributedMpi, DdpGradientsMatchTheWholeBatchOnThreeRanks) { expect_success(run_mpi("ddp_gradients", 3, {})); }

TEST(DistributedMpi, MismatchedSizesRaiseOnEveryRank) {
  expect_success(run_mpi("mismatch", 2, {"EMBER_TEST_EXPECT=disagree on collective #0"}));
}

// A stopped rank: the others' collective times out with an error naming it;
// their exit without MPI_Finalize makes mpirun end the job.
TEST(DistributedMpi, StoppedRankTimesOutTheOthers) {
  const RankOutcome o =
      run_mpi("stopped_peer", 3, {"EMBER_TEST_EXPECT=MPI_Iallreduce did not complete within 2000 ms"}, 2000, 10000);
  // The first rank to time out ends the job; the other may be stopped by mpirun before it reports.
  EXPECT_NE(o.output.find("all_reduce #1 (all_reduce(sum) float32 [1000]) failed"), std::string::npos) << o.output;
  EXPECT_NE(o.exit_code, -1) << "mpirun did not end by itself within the limit:\n" << o.output;
}

// With MASTER_ADDR and MASTER_PORT the mpi backend has a store too, and the
// error names the stopped rank.
TEST(DistributedMpi, StoreNamesTheStoppedRank) {
  const RankOutcome o = run_mpi("stopped_peer", 3,
                                {"MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + std::to_string(free_port()),
                                 "EMBER_TEST_EXPECT=rank(s) 1 did not reach it"},
                                2000, 10000);
  EXPECT_NE(o.output.find("all_reduce #1 (all_reduce(sum) float32 [1000]) failed: rank(s) 1 did not reach it"),
            std::string::npos)
      << o.output;
  EXPECT_NE(o.exit_code, -1) << "mpirun did not end by itself within the limit:\n" << o.output;
}

}  // namespace
}  // namespace ember::test
