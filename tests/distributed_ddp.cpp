// DistributedDataParallel across processes: the averaged gradients equal the
// single-process gradients of the concatenated batch (f64, 1e-12), also after
// the bucket rebuild and with no_sync accumulation.
#include <gtest/gtest.h>

#include "distributed_run.h"

namespace ember::test {
namespace {

void expect_all_succeed(const std::vector<RankOutcome>& outcomes) {
  for (size_t r = 0; r < outcomes.size(); ++r)
    EXPECT_EQ(outcomes[r].exit_code, 0) << "rank " << r << " (signal " << outcomes[r].signal << "):\n"
                                        << outcomes[r].output;
}

TEST(DistributedDataParallel, GradientsMatchTheWholeBatchOnTwoRanks) {
  expect_all_succeed(run_ranks("ddp_gradients", ranks(2, {}, 5000)));
}

TEST(DistributedDataParallel, GradientsMatchTheWholeBatchOnThreeRanks) {
  expect_all_succeed(run_ranks("ddp_gradients", ranks(3, {}, 5000)));
}

TEST(DistributedDataParallel, GradientsAsBucketViewsMatchTooOnThreeRanks) {
  expect_all_succeed(run_ranks("ddp_gradients", ranks(3, {"EMBER_TEST_BUCKET_VIEW=1"}, 5000)));
}

TEST(DistributedDataParallel, UnusedParameterIsNamedWithoutFindUnused) {
  expect_all_succeed(run_ranks("ddp_unused", ranks(2, {}, 5000)));
}

TEST(DistributedDataParallel, FindUnusedParametersAveragesTheRest) {
  expect_all_succeed(run_ranks("ddp_unused", ranks(2, {"EMBER_TEST_FIND_UNUSED=1"}, 5000)));
}

}  // namespace
}  // namespace ember::test
