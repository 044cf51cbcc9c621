// Faults end on every rank with a clear ember::Error, within the timeout
// plus 5 s (the run's hard limit), and leave no process behind.
#include <gtest/gtest.h>

#include "distributed_run.h"

namespace ember::test {
namespace {

RunOptions only_started(RunOptions o, int started) {
  o.started = started;
  return o;
}

// Every started rank but `skip` exits 0: it raised an error containing `expect`.
void expect_errors(const std::vector<RankOutcome>& outcomes, int skip = -1) {
  for (size_t r = 0; r < outcomes.size(); ++r) {
    if (static_cast<int>(r) == skip) continue;
    EXPECT_EQ(outcomes[r].exit_code, 0) << "rank " << r << " (signal " << outcomes[r].signal << "):\n"
                                        << outcomes[r].output;
  }
}

TEST(DistributedFaults, MismatchedSizesRaiseOnEveryRank) {
  expect_errors(run_ranks("mismatch", ranks(2, {"EMBER_TEST_EXPECT=disagree on collective #0"})));
}

TEST(DistributedFaults, MismatchedFingerprintsNameBothInDetailMode) {
  expect_errors(run_ranks("mismatch", ranks(2, {"EMBER_DISTRIBUTED_DEBUG=DETAIL",
                                                "EMBER_TEST_EXPECT=rank 0 runs all_reduce(sum) float32 [4], rank 1 "
                                                "runs all_reduce(sum) float32 [5]"})));
}

TEST(DistributedFaults, KilledRankIsNamedByTheOthers) {
  const auto out = run_ranks("killed_peer", ranks(3, {"EMBER_TEST_EXPECT=rank(s) 1 did not reach it"}, 2000, 7000));
  expect_errors(out, 1);
  EXPECT_EQ(out[1].signal, SIGKILL);
}

TEST(DistributedFaults, RankKilledDuringBackwardEndsTheOthersBackward) {
  const auto out = run_ranks("ddp_killed", ranks(3, {}, 2000, 7000));
  expect_errors(out, 1);
  EXPECT_EQ(out[1].signal, SIGKILL);
}

TEST(DistributedFaults, StoppedRankIsNamedByTheOthers) {
  RunOptions o = ranks(3, {"EMBER_TEST_EXPECT=rank(s) 1 did not reach it"}, 2000, 7000);
  o.may_hang = 1;
  const auto out = run_ranks("stopped_peer", o);
  expect_errors(out, 1);
}

TEST(DistributedFaults, RankThatNeverJoinsIsNamed) {
  expect_errors(run_ranks("join", only_started(ranks(3, {"EMBER_TEST_EXPECT=rank(s) 2 of 3 did not join"}, 1500, 6500), 2)));
}

TEST(DistributedFaults, StoreThatDiesEndsTheOtherRank) {
  const auto out = run_ranks("store_dies", ranks(2, {"EMBER_TEST_EXPECT=all_reduce #1"}, 2000, 7000));
  expect_errors(out, 0);
}

}  // namespace
}  // namespace ember::test
