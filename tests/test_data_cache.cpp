// The dataset cache: a round trip through the mapped file, no decoding on a
// second open, and stale or damaged caches rebuilt or rejected clearly.
#include <gtest/gtest.h>

#include <vector>

#include "ember/data.h"
#include "tests/test_data_util.h"
#include "tests/test_util.h"

namespace ember::data {
namespace {

using ember::testing::read_bytes;
using ember::testing::same_bits;
using ember::testing::ScratchDir;
using ember::testing::write_bytes;

TensorDict sample_tensors() {
  return {{"images", randint(0, 256, {6, 5, 5}, kInt64).to(kUInt8)},
          {"labels", arange(6)},
          {"features", randn({6, 3}).t()},  // not contiguous: stored as its values
          {"nothing", zeros({0, 4}, kFloat64)}};
}

TEST(DataCache, RoundTripKeepsEveryTensorBitForBit) {
  ScratchDir dir;
  const TensorDict original = sample_tensors();
  write_dataset_cache(dir.path("c"), original, "source-1");
  const TensorDict mapped = read_dataset_cache(dir.path("c"), "source-1");
  ASSERT_EQ(mapped.size(), original.size());
  for (const auto& [name, t] : original) EXPECT_TRUE(same_bits(mapped.at(name), t)) << name;
}

TEST(DataCache, TensorsOutliveTheDictAndNeverWriteTheFile) {
  ScratchDir dir;
  write_dataset_cache(dir.path("c"), {{"x", arange(4, kFloat32)}}, "s");
  Tensor x = read_dataset_cache(dir.path("c")).at("x");
  const std::vector<uint8_t> before = read_bytes(dir.path("c"));
  x.fill_(7);  // a private mapping: only this process's copy changes
  EXPECT_EQ(ember::testing::values(x), (std::vector<double>{7, 7, 7, 7}));
  EXPECT_EQ(read_bytes(dir.path("c")), before);
  EXPECT_EQ(ember::testing::values(read_dataset_cache(dir.path("c")).at("x")), (std::vector<double>{0, 1, 2, 3}));
}

TEST(DataCache, SecondOpenDoesNotDecode) {
  ScratchDir dir;
  int decodes = 0;
  auto decode = [&] {
    ++decodes;
    return sample_tensors();
  };
  CachedTensors first = open_dataset_cache(dir.path("c"), "v1", decode);
  EXPECT_TRUE(first.rebuilt);
  EXPECT_NE(first.rebuild_reason.find("no cache file"), std::string::npos);
  CachedTensors second = open_dataset_cache(dir.path("c"), "v1", decode);
  EXPECT_FALSE(second.rebuilt);
  EXPECT_EQ(decodes, 1);
  for (const auto& [name, t] : first.tensors) EXPECT_TRUE(same_bits(second.tensors.at(name), t)) << name;
}

TEST(DataCache, StaleCacheIsRebuilt) {
  ScratchDir dir;
  int decodes = 0;
  auto decode = [&] {
    ++decodes;
    return TensorDict{{"x", full({3}, decodes)}};
  };
  open_dataset_cache(dir.path("c"), "old", decode);
  CachedTensors fresh = open_dataset_cache(dir.path("c"), "new", decode);
  EXPECT_TRUE(fresh.rebuilt);
  EXPECT_NE(fresh.rebuild_reason.find("stale"), std::string::npos) << fresh.rebuild_reason;
  EXPECT_EQ(fresh.tensors.at("x")[0].item<float>(), 2.0f);
  EXPECT_EMBER_ERROR(read_dataset_cache(dir.path("c"), "old"), "dataset cache", "stale", "'new'", "'old'");
}

TEST(DataCache, DamagedCachesAreRejectedAndRebuilt) {
  ScratchDir dir;
  write_dataset_cache(dir.path("c"), sample_tensors(), "s");
  const std::vector<uint8_t> good = read_bytes(dir.path("c"));

  std::vector<uint8_t> flipped = good;
  flipped[20] ^= 0x01;  // inside the header
  write_bytes(dir.path("flipped"), flipped);
  EXPECT_EMBER_ERROR(read_dataset_cache(dir.path("flipped")), "dataset cache", "flipped", "checksum");

  write_bytes(dir.path("cut"), std::vector<uint8_t>(good.begin(), good.end() - 10));
  EXPECT_EMBER_ERROR(read_dataset_cache(dir.path("cut")), "dataset cache", "cut", "truncated");

  write_bytes(dir.path("tiny"), std::vector<uint8_t>(good.begin(), good.begin() + 30));
  EXPECT_EMBER_ERROR(read_dataset_cache(dir.path("tiny")), "dataset cache", "tiny", "truncated");

  std::vector<uint8_t> foreign = good;
  foreign[0] = 'X';
  write_bytes(dir.path("foreign"), foreign);
  EXPECT_EMBER_ERROR(read_dataset_cache(dir.path("foreign")), "dataset cache", "bad magic");

  EXPECT_EMBER_ERROR(read_dataset_cache(dir.path("missing")), "dataset cache", "missing", "cannot open");

  int decodes = 0;
  CachedTensors rebuilt = open_dataset_cache(dir.path("flipped"), "s", [&] {
    ++decodes;
    return sample_tensors();
  });
  EXPECT_TRUE(rebuilt.rebuilt);
  EXPECT_EQ(decodes, 1);
  EXPECT_NE(rebuilt.rebuild_reason.find("checksum"), std::string::npos);
  EXPECT_NO_THROW(read_dataset_cache(dir.path("flipped"), "s"));
}

TEST(DataCache, FingerprintChangesWithTheFile) {
  ScratchDir dir;
  ember::testing::write_text(dir.path("a"), "one");
  const std::string before = file_fingerprint({dir.path("a")});
  EXPECT_EQ(file_fingerprint({dir.path("a")}), before);
  ember::testing::write_text(dir.path("a"), "three");
  EXPECT_NE(file_fingerprint({dir.path("a")}), before);  // the size changed
  EXPECT_EMBER_ERROR(file_fingerprint({dir.path("nope")}), "file_fingerprint", "nope");
}

}  // namespace
}  // namespace ember::data
