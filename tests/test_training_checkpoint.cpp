// Training checkpoints: round trips, the generator state, resuming bit for
// bit, and rejection of corrupted, truncated and foreign files.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "ember/ember.h"
#include "serialize/crc32.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace fs = std::filesystem;

class TrainingCheckpointFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "ember_ckpt_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.sizes() != b.sizes()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  return x.numel() == 0 || std::memcmp(x.data_ptr(), y.data_ptr(), x.nbytes()) == 0;
}

std::vector<uint8_t> read_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& p, const std::vector<uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

TrainingCheckpoint sample_checkpoint() {
  manual_seed(3);
  TrainingCheckpoint c;
  c.states["model"] = {{"fc.weight", randn({4, 3})}, {"fc.bias", randn({4}).to(kFloat64)},
                       {"bn.num_batches_tracked", tensor({int64_t{7}})}};
  c.states["optimizer"] = {{"state.0.exp_avg", randn({4, 3}).to(kBFloat16)}, {"param_groups.0.lr", tensor({0.001})}};
  c.states["scheduler"] = {};
  c.epoch = 2;
  c.step = 345;
  c.rng_seed = 17;
  c.rng_offset = 123456789012345ULL;
  c.info = {{"seed", "17"}, {"threads", "2"}, {"config", "model: cnn\nepochs: 3\n"}};
  return c;
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  serialize::Crc32 crc;
  crc.update("1234");
  crc.update("56789");
  EXPECT_EQ(crc.value(), 0xCBF43926u);
}

TEST_F(TrainingCheckpointFiles, RoundTripsEveryPartBitForBit) {
  const TrainingCheckpoint c = sample_checkpoint();
  save_training_checkpoint(c, path("last.ckpt"));
  const TrainingCheckpoint back = load_training_checkpoint(path("last.ckpt"));
  EXPECT_EQ(back.epoch, 2);
  EXPECT_EQ(back.step, 345);
  EXPECT_EQ(back.rng_seed, 17u);
  EXPECT_EQ(back.rng_offset, 123456789012345ULL);
  EXPECT_EQ(back.info, c.info);
  ASSERT_EQ(back.states.size(), 3u);
  EXPECT_TRUE(back.states.at("scheduler").empty());
  for (const auto& [part, dict] : c.states) {
    ASSERT_EQ(back.states.at(part).size(), dict.size()) << part;
    for (const auto& [key, t] : dict) EXPECT_TRUE(bitwise_equal(back.states.at(part).at(key), t)) << part << "/" << key;
  }
  // Other safetensors readers see plain tensors named part/key.
  const SafetensorsFile raw = load_safetensors(path("last.ckpt"));
  EXPECT_EQ(raw.tensors.count("model/fc.weight"), 1u);
  EXPECT_EQ(raw.metadata.at("format"), "ember.training_checkpoint.v1");
  EXPECT_EQ(raw.metadata.at("ember_version"), version());
}

TEST_F(TrainingCheckpointFiles, OverwritingLeavesNoTemporaryFile) {
  TrainingCheckpoint c = sample_checkpoint();
  save_training_checkpoint(c, path("last.ckpt"));
  c.step = 400;
  save_training_checkpoint(c, path("last.ckpt"));
  EXPECT_EQ(load_training_checkpoint(path("last.ckpt")).step, 400);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(TrainingCheckpointFiles, CorruptedTruncatedAndForeignFilesAreClearErrors) {
  save_training_checkpoint(sample_checkpoint(), path("good.ckpt"));
  const std::vector<uint8_t> good = read_bytes(path("good.ckpt"));

  std::vector<uint8_t> flipped = good;
  flipped[flipped.size() - 5] ^= 0x40;  // a bit of the last tensor's data
  write_bytes(path("flipped.ckpt"), flipped);
  EXPECT_EMBER_ERROR(load_training_checkpoint(path("flipped.ckpt")), "flipped.ckpt", "checksum mismatch");

  write_bytes(path("truncated.ckpt"), std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2));
  EXPECT_EMBER_ERROR(load_training_checkpoint(path("truncated.ckpt")), "truncated.ckpt");

  save_safetensors({{"w", ones({2})}}, path("plain.safetensors"));
  EXPECT_EMBER_ERROR(load_training_checkpoint(path("plain.safetensors")), "plain.safetensors",
                     "not an ember training checkpoint");

  EXPECT_EMBER_ERROR(load_training_checkpoint(path("missing.ckpt")), "missing.ckpt");
}

TEST_F(TrainingCheckpointFiles, BadPartNamesAndUndefinedTensorsAreRejected) {
  TrainingCheckpoint c;
  c.states["model/x"] = {{"w", ones({1})}};
  EXPECT_EMBER_ERROR(save_training_checkpoint(c, path("bad.ckpt")), "part name 'model/x'");
  TrainingCheckpoint d;
  d.states["model"] = {{"w", Tensor()}};
  EXPECT_EMBER_ERROR(save_training_checkpoint(d, path("bad.ckpt")), "'w' is undefined");
  EXPECT_FALSE(fs::exists(path("bad.ckpt")));
}

// A toy training run whose every step draws from the global generator (noise
// on the data), so resuming needs the parameters and the generator state.
struct ToyRun {
  Tensor w = zeros({3, 1});
  int64_t step = 0;

  void train_to(int64_t last_step) {
    NoGradGuard no_grad;
    for (; step < last_step; ++step) {
      const Tensor x = randn({16, 3});
      const Tensor y = x.matmul(tensor({1.0f, -2.0f, 0.5f}).view({3, 1})) + 0.1 * randn({16, 1});
      const Tensor grad = x.t().matmul(x.matmul(w) - y) * (2.0 / 16);
      w.sub_(grad * 0.05);
    }
  }
};

TEST_F(TrainingCheckpointFiles, ResumingAtStepKGivesTheUninterruptedResultBitForBit) {
  manual_seed(11);
  ToyRun straight;
  straight.train_to(20);

  manual_seed(11);
  ToyRun first;
  first.train_to(7);
  TrainingCheckpoint c;
  c.states["model"] = {{"w", first.w}};
  c.step = first.step;
  capture_global_rng(c);
  save_training_checkpoint(c, path("step7.ckpt"));

  manual_seed(999);  // whatever happened in between
  (void)randn({100});
  const TrainingCheckpoint back = load_training_checkpoint(path("step7.ckpt"));
  ToyRun resumed;
  resumed.w = back.states.at("model").at("w").clone();
  resumed.step = back.step;
  restore_global_rng(back);
  resumed.train_to(20);
  EXPECT_TRUE(bitwise_equal(resumed.w, straight.w));
}

}  // namespace
}  // namespace ember::testing
