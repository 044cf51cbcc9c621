// `ember train --nproc N`: the run as N ranks of DDP. data.batch_size is the
// global batch (each of N ranks takes batch_size / N samples, every N-th of
// one permutation), so 2 ranks of 32 see the same global batches of 64 as
// 1 rank of 64 and end where it ends (up to the order of float sums).
// One epoch of config/fashion_mnist_mlp.yaml with one thread per rank.
// Skips when Debian's dataset-fashion-mnist is not installed.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "distributed_processes.h"
#include "tests/test_data_util.h"
#include "ember/data/idx.h"

namespace ember::test {
namespace {

struct LastEpoch {
  double train_loss = -1, test_acc = -1;
};

// The last row of OUTPUT/metrics.csv (epoch,train_loss,train_acc,test_loss,test_acc,...).
LastEpoch last_epoch(const std::string& output) {
  std::ifstream in(output + "/metrics.csv");
  std::string line, last;
  while (std::getline(in, line)) last = line;
  std::vector<std::string> cells;
  std::stringstream fields(last);
  for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
  if (cells.size() < 5 || cells[0] == "epoch") return {};
  return {std::stod(cells[1]), std::stod(cells[4])};
}

RankOutcome train(int nproc, const std::string& output) {
  ProcessSet set;
  set.start({EMBER_CLI, "train", "--nproc", std::to_string(nproc), "--config",
             std::string(EMBER_TEST_DATA_DIR) + "/../../config/fashion_mnist_mlp.yaml", "--set", "epochs=1", "--set",
             "threads=1", "--set", "output=" + output},
            {});
  return set.wait_all(std::chrono::seconds(120)).at(0);
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(EmberTrainNproc, TwoRanksReachTheOneRankAccuracyForTheSameGlobalBatch) {
  struct stat st;
  if (::stat((std::string(data::kFashionMnistDir) + "/train-images-idx3-ubyte.gz").c_str(), &st) != 0)
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  ember::testing::ScratchDir dir;
  const RankOutcome one = train(1, dir.path("one"));
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const RankOutcome two = train(2, dir.path("two"));
  ASSERT_EQ(two.exit_code, 0) << two.output;
  // Only rank 0 prints.
  EXPECT_EQ(count(two.output, "done: test accuracy"), 1u) << two.output;
  const LastEpoch a = last_epoch(dir.path("one")), b = last_epoch(dir.path("two"));
  EXPECT_GT(a.test_acc, 0.8) << one.output;
  EXPECT_NEAR(b.test_acc, a.test_acc, 0.005) << two.output;
  EXPECT_NEAR(b.train_loss, a.train_loss, 1e-3 * a.train_loss) << two.output;
}

TEST(EmberTrainNproc, BadBackendIsNamed) {
  ProcessSet set;
  set.start({EMBER_CLI, "train", "--nproc", "2", "--backend", "smoke", "--config", "x.yaml"}, {});
  const RankOutcome o = set.wait_all(std::chrono::seconds(10)).at(0);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.output.find("train: --backend must be gloo or mpi, got 'smoke'"), std::string::npos) << o.output;
}

}  // namespace
}  // namespace ember::test
