// Transforms: exact values for ToTensor, Normalize, flips and padded crops,
// and randomness that depends only on (epoch seed, sample index).
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "ember/data.h"
#include "tests/test_data_util.h"
#include "tests/test_util.h"

namespace ember::data {
namespace {

using ember::testing::same_bits;
using ember::testing::values;

Tensor u8_image(IntArrayRef shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return arange(n, kInt64).remainder(256).to(kUInt8).view(shape);
}

TEST(DataTransforms, ToTensorScalesGrayImagesToOneChannel) {
  Generator g(0);
  Tensor image = tensor({0, 51, 255, 128}, kUInt8).view({2, 2});
  Tensor x = ToTensor()(image, g);
  EXPECT_EQ(x.sizes(), IntArrayRef({1, 2, 2}));
  EXPECT_EQ(x.dtype(), kFloat32);
  EXPECT_TRUE(same_bits(x, tensor({0.f, 51.f, 255.f, 128.f}).div(255).view({1, 2, 2})));
  EXPECT_EQ(values(x)[2], 1.0);
}

TEST(DataTransforms, ToTensorMovesChannelsFirst) {
  Generator g(0);
  Tensor hwc = u8_image({2, 3, 4});  // H=2, W=3, C=4
  Tensor x = ToTensor()(hwc, g);
  EXPECT_EQ(x.sizes(), IntArrayRef({4, 2, 3}));
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_TRUE(same_bits(x, hwc.permute({2, 0, 1}).to(kFloat32).div(255).contiguous()));
  Tensor chw = ToTensor(ToTensor::Layout::kCHW)(hwc, g);
  EXPECT_EQ(chw.sizes(), IntArrayRef({2, 3, 4}));
}

TEST(DataTransforms, ToTensorRejectsNonImages) {
  Generator g(0);
  EXPECT_EMBER_ERROR(ToTensor()(zeros({2, 2}), g), "ToTensor", "uint8");
  EXPECT_EMBER_ERROR(ToTensor()(u8_image({2}), g), "ToTensor", "2 dims");
}

TEST(DataTransforms, NormalizeIsExactPerChannel) {
  Generator g(0);
  Tensor x = rand({3, 4, 5});
  Tensor y = Normalize({0.485, 0.456, 0.406}, {0.229, 0.224, 0.225})(x, g);
  const std::vector<double> in = values(x), out = values(y);
  const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  for (size_t i = 0; i < in.size(); ++i) {
    const size_t c = i / 20;
    const float expected = (static_cast<float>(in[i]) - mean[c]) / std[c];
    ASSERT_EQ(static_cast<float>(out[i]), expected) << "element " << i;
  }
}

TEST(DataTransforms, NormalizeWithOneValueAppliesToAllChannels) {
  Generator g(0);
  Tensor x = rand({2, 3, 3}, kFloat64);
  EXPECT_TRUE(same_bits(Normalize({0.5}, {0.25})(x, g), (x - 0.5) / 0.25));
}

TEST(DataTransforms, NormalizeRejectsBadInput) {
  Generator g(0);
  EXPECT_EMBER_ERROR(Normalize({0.5}, {0.5})(u8_image({1, 2, 2}), g), "Normalize", "ToTensor");
  EXPECT_EMBER_ERROR(Normalize({0.1, 0.2}, {1, 1})(rand({3, 2, 2}), g), "Normalize", "2 mean/std values",
                     "3 channels");
  EXPECT_EMBER_ERROR(Normalize({0.1}, {0.0}), "Normalize", "std[0] is 0");
}

TEST(DataTransforms, HorizontalFlipMirrorsTheLastDim) {
  Generator g(0);
  Tensor x = arange(12, kFloat32).view({2, 2, 3});
  EXPECT_EQ(values(RandomHorizontalFlip(1.0)(x, g)), (std::vector<double>{2, 1, 0, 5, 4, 3, 8, 7, 6, 11, 10, 9}));
  EXPECT_TRUE(same_bits(RandomHorizontalFlip(0.0)(x, g), x));
}

TEST(DataTransforms, HorizontalFlipDrawsFromTheGenerator) {
  Tensor x = arange(3, kFloat32).view({1, 1, 3});
  int flipped = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Generator a(seed), b(seed);
    Tensor ya = RandomHorizontalFlip()(x, a);
    EXPECT_TRUE(same_bits(ya, RandomHorizontalFlip()(x, b)));  // same seed, same decision
    flipped += values(ya)[0] == 2 ? 1 : 0;
  }
  EXPECT_GT(flipped, 60);
  EXPECT_LT(flipped, 140);
}

TEST(DataTransforms, RandomCropWithPaddingCutsAWindowOfTheZeroPaddedImage) {
  Tensor x = arange(1, 17, 1, kFloat32).view({1, 4, 4});  // values 1..16, so padding zeros stand out
  Tensor padded = zeros({1, 6, 6});
  padded.narrow(1, 1, 4).narrow(2, 1, 4).copy_(x);
  std::set<std::pair<int64_t, int64_t>> corners;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Generator g(seed);
    Tensor y = RandomCrop(4, /*padding=*/1)(x, g);
    ASSERT_EQ(y.sizes(), IntArrayRef({1, 4, 4}));
    bool found = false;
    for (int64_t top = 0; top <= 2 && !found; ++top)
      for (int64_t left = 0; left <= 2 && !found; ++left)
        if (same_bits(y, padded.narrow(1, top, 4).narrow(2, left, 4).contiguous())) {
          corners.emplace(top, left);
          found = true;
        }
    EXPECT_TRUE(found) << "seed " << seed << ": not a window of the padded image";
  }
  EXPECT_EQ(corners.size(), 9u);  // every offset occurs
}

TEST(DataTransforms, RandomCropOfThePaddedSizeIsThePaddedImage) {
  Generator g(4);
  Tensor x = rand({3, 5, 5});
  Tensor y = RandomCrop({7, 7}, 1)(x, g);
  Tensor expected = zeros({3, 7, 7});
  expected.narrow(1, 1, 5).narrow(2, 1, 5).copy_(x);
  EXPECT_TRUE(same_bits(y, expected));
  EXPECT_EMBER_ERROR(RandomCrop(8, 1)(x, g), "RandomCrop", "larger than the padded image");
}

TEST(DataTransforms, ComposeAppliesInOrder) {
  Generator g(0);
  Transform t = Compose({ToTensor(), Normalize({0.5}, {0.5}), RandomHorizontalFlip(1.0)});
  Tensor image = tensor({0, 255}, kUInt8).view({1, 2});
  EXPECT_EQ(values(t(image, g)), (std::vector<double>{1, -1}));
}

TEST(DataTransforms, MapDatasetRandomnessDependsOnEpochSeedAndIndexOnly) {
  Tensor images = arange(64 * 9, kFloat32).view({64, 1, 3, 3});
  auto base = std::make_shared<TensorDataset>(images);
  MapDataset ds(base, RandomHorizontalFlip());
  ds.set_epoch_seed(42);
  std::vector<Tensor> first;
  for (size_t i = 0; i < 64; ++i) first.push_back(ds.get(i).data);
  for (size_t i = 64; i-- > 0;) EXPECT_TRUE(same_bits(ds.get(i).data, first[i])) << i;  // any order, same result
  ds.set_epoch_seed(43);
  int changed = 0;
  for (size_t i = 0; i < 64; ++i) changed += same_bits(ds.get(i).data, first[i]) ? 0 : 1;
  EXPECT_GT(changed, 0);
}

}  // namespace
}  // namespace ember::data
