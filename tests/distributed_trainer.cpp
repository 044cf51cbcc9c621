// The Trainer under DDP (Note [Trainer under DDP]): two ranks train, rank 0
// checkpoints inside an epoch, the run goes on; a second run resumed from the
// checkpoint ends with bitwise the same parameters on every rank.
#include <gtest/gtest.h>

#include <filesystem>

#include "distributed_run.h"
#include "tests/test_data_util.h"

namespace ember::test {
namespace {

void expect_all_succeed(const std::vector<RankOutcome>& outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r)
    EXPECT_EQ(outcomes[r].exit_code, 0) << "rank " << r << " (signal " << outcomes[r].signal << "):\n"
                                        << outcomes[r].output;
}

TEST(DistributedTrainer, ResumeInsideAnEpochEndsBitwiseLikeTheUninterruptedRunOnEveryRank) {
  ember::testing::ScratchDir dir;
  expect_all_succeed(run_ranks("trainer_resume", ranks(2, {"EMBER_TEST_DIR=" + dir.dir()}, 5000, 30000)));
}

TEST(DistributedTrainer, TrainingLoaderWithoutDistributedSamplerIsRefused) {
  expect_all_succeed(run_ranks("trainer_needs_sampler", ranks(2, {}, 5000)));
}

}  // namespace
}  // namespace ember::test
