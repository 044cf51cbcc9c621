// Memory overlap (Note [Memory overlap] in core/memory_overlap.h): the
// classification, the ops that raise, and the aliasing that stays allowed.
// Every raise and every allowed case was checked against PyTorch 1.13.
#include <vector>

#include "core/memory_overlap.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::values;

constexpr const char* kInternal =
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation.";
constexpr const char* kPartial =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";

Tensor seq(int64_t n) { return arange(n, kFloat32); }

// ---- the classification ----

TEST(MemoryOverlap, InternalOverlapIsYesOnlyForAStrideZeroDim) {
  const Tensor x = seq(6);
  EXPECT_EQ(has_internal_overlap(x), MemOverlap::No);
  EXPECT_EQ(has_internal_overlap(x.view({2, 3}).t()), MemOverlap::No);  // dense, permuted
  EXPECT_EQ(has_internal_overlap(x.slice(0, 0, 1).expand({3})), MemOverlap::Yes);
  EXPECT_EQ(has_internal_overlap(x.view({1, 6}).expand({2, 6})), MemOverlap::Yes);
  EXPECT_EQ(has_internal_overlap(x.slice(0, 0, 6, 2)), MemOverlap::TooHard);      // gaps
  EXPECT_EQ(has_internal_overlap(x.as_strided({2, 2}, {1, 1})), MemOverlap::TooHard);  // overlaps, not stride 0
  EXPECT_EQ(has_internal_overlap(x.as_strided({1, 3}, {0, 1})), MemOverlap::No);    // stride 0 on a size-1 dim
  EXPECT_EQ(has_internal_overlap(zeros({0, 1}).expand({0, 3})), MemOverlap::No);    // nothing is written
}

TEST(MemoryOverlap, StatusOfTwoTensors) {
  const Tensor x = seq(6);
  EXPECT_EQ(get_overlap_status(x, x), MemOverlapStatus::Full);
  EXPECT_EQ(get_overlap_status(x.slice(0, 1, 4), x.slice(0, 1, 4)), MemOverlapStatus::Full);  // two views, one layout
  EXPECT_EQ(get_overlap_status(x.slice(0, 1), x.slice(0, 0, -1)), MemOverlapStatus::Partial);
  EXPECT_EQ(get_overlap_status(x.slice(0, 0, 3), x.slice(0, 2, 3)), MemOverlapStatus::Partial);
  const Tensor m = seq(4).view({2, 2});
  EXPECT_EQ(get_overlap_status(m, m.t()), MemOverlapStatus::Partial);  // same bytes, other order
  EXPECT_EQ(get_overlap_status(x.slice(0, 0, 2), x.slice(0, 2, 4)), MemOverlapStatus::None);
  EXPECT_EQ(get_overlap_status(x, seq(6)), MemOverlapStatus::None);  // another storage
  EXPECT_EQ(get_overlap_status(x.slice(0, 0, 6, 2), x.slice(0, 1, 6, 2)), MemOverlapStatus::TooHard);
  EXPECT_EQ(get_overlap_status(x.slice(0, 0, 0), x), MemOverlapStatus::None);
}

// ---- what raises ----

TEST(MemoryOverlap, CopyIntoAPartiallyOverlappingViewRaises) {
  Tensor x = seq(5);
  EXPECT_EMBER_ERROR(x.slice(0, 1).copy_(x.slice(0, 0, -1)), "copy_: ", kPartial);  // x[1:].copy_(x[:-1])
  EXPECT_EMBER_ERROR(x.index_put_({Slice(1, None)}, x.index({Slice(None, -1)})), kPartial);  // x[1:] = x[:-1]
  Tensor m = seq(4).view({2, 2});
  EXPECT_EMBER_ERROR(m.copy_(m.t()), "copy_: ", kPartial);
  EXPECT_EQ(values(x), (std::vector<double>{0, 1, 2, 3, 4}));  // untouched
}

TEST(MemoryOverlap, WritingAnExpandedTensorRaises) {
  Tensor x = zeros({3});
  EXPECT_EMBER_ERROR(x.expand({3, 3}).add_(1), kInternal);
  EXPECT_EMBER_ERROR(x.expand({3, 3}).mul_(ones({3, 3})), kInternal);
  EXPECT_EMBER_ERROR(x.expand({2, 3}).copy_(ones({2, 3})), "copy_: ", kInternal);
  EXPECT_EMBER_ERROR(x.expand({2, 3}).exp_(), kInternal);
  EXPECT_EMBER_ERROR(x.expand({2, 3}).clamp_(0, 1), kInternal);
  EXPECT_EMBER_ERROR(x.expand({2, 3}).lerp_(ones({3}), 0.5), kInternal);
  Tensor e = x.expand({2, 3});
  EXPECT_EMBER_ERROR(uniform_(e), "uniform_: ", kInternal);
  EXPECT_EMBER_ERROR(normal_(e), "normal_: ", kInternal);
  EXPECT_EMBER_ERROR(e.bernoulli_(0.5), "bernoulli_: ", kInternal);
  EXPECT_EQ(values(x), (std::vector<double>{0, 0, 0}));
}

TEST(MemoryOverlap, InPlaceOpWithAPartiallyOverlappingInputRaises) {
  Tensor x = seq(6);
  EXPECT_EMBER_ERROR(x.slice(0, 1).add_(x.slice(0, 0, -1)), kPartial);
  EXPECT_EMBER_ERROR(x.slice(0, 0, 3).add_(x.slice(0, 2, 3)), kPartial);  // one element of self, broadcast
  EXPECT_EMBER_ERROR(x.slice(0, 1).lerp_(x.slice(0, 0, -1), 0.5), kPartial);
  Tensor m = seq(4).view({2, 2});
  EXPECT_EMBER_ERROR(m.add_(m.t()), kPartial);
  Tensor b = zeros({6}, kBool);
  EXPECT_EMBER_ERROR(b.slice(0, 1).masked_fill_(b.slice(0, 0, -1), true), "masked_fill: ", kPartial);
  EXPECT_EQ(values(x), (std::vector<double>{0, 1, 2, 3, 4, 5}));
}

// ---- what stays allowed ----

TEST(MemoryOverlap, OrdinaryInPlaceAndIdenticalViewsAreAllowed) {
  Tensor x = seq(5);
  x.add_(x);
  EXPECT_EQ(values(x), (std::vector<double>{0, 2, 4, 6, 8}));
  Tensor y = seq(6);
  y.slice(0, 1, 4).add_(y.slice(0, 1, 4));  // two views with one layout: Full
  EXPECT_EQ(values(y), (std::vector<double>{0, 2, 4, 6, 4, 5}));
  Tensor z = seq(6);
  z.slice(0, 1, 4).copy_(z.slice(0, 1, 4));
  EXPECT_EQ(values(z), (std::vector<double>{0, 1, 2, 3, 4, 5}));
  Tensor e = zeros({3}).expand({2, 3});
  e.copy_(e);  // the same tensor: nothing to do
}

TEST(MemoryOverlap, DisjointAndHardToTellViewsOfOneStorageAreAllowed) {
  Tensor x = seq(6);
  x.slice(0, 0, 2).copy_(x.slice(0, 2, 4));  // x[:2].copy_(x[2:4])
  EXPECT_EQ(values(x), (std::vector<double>{2, 3, 2, 3, 4, 5}));
  Tensor y = seq(6);
  y.slice(0, 0, 6, 2).add_(y.slice(0, 1, 6, 2));  // x[::2] += x[1::2]: not dense, not checked
  EXPECT_EQ(values(y), (std::vector<double>{1, 1, 5, 3, 9, 5}));
  Tensor z = seq(6);
  z.slice(0, 0, 3).add_(z.slice(0, 3, 4).expand({3}));  // an expanded input outside the output
  EXPECT_EQ(values(z), (std::vector<double>{3, 4, 5, 3, 4, 5}));
  Tensor w = zeros({0, 1}).expand({0, 3});
  w.add_(1);  // an empty output writes nothing
}

TEST(MemoryOverlap, FillAndMaskedFillMayWriteAnExpandedTensor) {
  Tensor x = seq(3);
  x.expand({2, 3}).fill_(7);
  EXPECT_EQ(values(x), (std::vector<double>{7, 7, 7}));
  x.expand({2, 3}).zero_();
  EXPECT_EQ(values(x), (std::vector<double>{0, 0, 0}));
  Tensor y = seq(3);
  Tensor e = y.expand({2, 3});
  e.masked_fill_(tensor({true, false, true}), -1);
  EXPECT_EQ(values(y), (std::vector<double>{-1, 1, -1}));
}

}  // namespace
}  // namespace ember
