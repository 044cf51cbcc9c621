// The CUDA caching allocator's pool logic (kernels/cuda/block_pool.h) on a
// fake device: block sizes, splitting and coalescing under random sequences,
// stream-aware reuse, record_stream events, out of memory and device indices.
// No CUDA needed: block_pool.cpp is in every build.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "kernels/cuda/block_pool.h"
#include "tests/test_util.h"

namespace ember::cuda {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

// A device with an address space that is never dereferenced, a capacity, and
// events that complete when the test (or a synchronize) says so.
struct FakeDevice {
  size_t capacity = SIZE_MAX;
  size_t in_use = 0;
  uintptr_t next_address = uintptr_t{1} << 32;
  std::map<uintptr_t, size_t> segments;  // live segments: address -> size
  int segment_allocs = 0, segment_frees = 0, synchronizes = 0, events_recorded = 0;
  std::vector<bool> event_done;            // by event id - 1
  std::vector<StreamHandle> event_stream;  // the stream each event was last recorded on
  int events_alive = 0;

  void complete_events() { event_done.assign(event_done.size(), true); }
};

class FakeBackend final : public BlockPoolBackend {
 public:
  explicit FakeBackend(FakeDevice* device) : d_(device) {}
  void* allocate_segment(size_t size) override {
    if (size > d_->capacity - d_->in_use) return nullptr;
    const uintptr_t address = d_->next_address;
    d_->next_address += size + 2 * kMiB;  // a gap: segments are never adjacent
    d_->segments[address] = size;
    d_->in_use += size;
    ++d_->segment_allocs;
    return reinterpret_cast<void*>(address);
  }
  void free_segment(void* ptr, size_t size) override {
    auto it = d_->segments.find(reinterpret_cast<uintptr_t>(ptr));
    ASSERT_NE(it, d_->segments.end()) << "freed a segment the device never handed out";
    EXPECT_EQ(it->second, size);
    d_->in_use -= size;
    d_->segments.erase(it);
    ++d_->segment_frees;
  }
  void synchronize() override {
    ++d_->synchronizes;
    d_->complete_events();  // all queued work is done
  }
  EventHandle create_event() override {
    d_->event_done.push_back(true);
    d_->event_stream.push_back(nullptr);
    ++d_->events_alive;
    return reinterpret_cast<EventHandle>(d_->event_done.size());
  }
  void destroy_event(EventHandle /*event*/) override { --d_->events_alive; }
  void record_event(EventHandle event, StreamHandle stream) override {
    const size_t i = id(event);
    d_->event_done[i] = false;
    d_->event_stream[i] = stream;
    ++d_->events_recorded;
  }
  bool event_done(EventHandle event) override { return d_->event_done[id(event)]; }

 private:
  static size_t id(EventHandle event) { return reinterpret_cast<uintptr_t>(event) - 1; }
  FakeDevice* d_;
};

std::unique_ptr<BlockPool> make_pool(FakeDevice& device, int index = 0) {
  return std::make_unique<BlockPool>(std::make_unique<FakeBackend>(&device), Device::cuda(index));
}

StreamHandle stream(int i) { return reinterpret_cast<StreamHandle>(uintptr_t{0x1000} * static_cast<uintptr_t>(i)); }

// Segments tile exactly into 512-aligned blocks, no two free blocks are
// neighbours, and the statistics agree with the blocks and the device.
void expect_consistent(BlockPool& pool, const FakeDevice& device) {
  SCOPED_TRACE("pool invariants");
  int64_t allocated = 0, reserved = 0;
  const std::vector<BlockPool::SegmentInfo> segments = pool.snapshot();
  ASSERT_EQ(segments.size(), device.segments.size());
  for (const BlockPool::SegmentInfo& s : segments) {
    auto it = device.segments.find(reinterpret_cast<uintptr_t>(s.base));
    ASSERT_NE(it, device.segments.end());
    ASSERT_EQ(it->second, s.size);
    if (s.small) {
      EXPECT_EQ(s.size, kSmallSegment);
    }
    size_t offset = 0;
    bool prev_free = false;
    for (const BlockPool::BlockInfo& b : s.blocks) {
      ASSERT_EQ(b.offset, offset) << "blocks overlap or leave a gap";
      ASSERT_GT(b.size, 0u);
      ASSERT_EQ(b.offset % kBlockAlignment, 0u);
      ASSERT_EQ(b.size % kBlockAlignment, 0u);
      if (!s.small) {
        ASSERT_GT(b.size, kSmallRequestMax) << "a large-pool block of a small size";
      }
      ASSERT_FALSE(prev_free && !b.allocated) << "two neighbouring free blocks were not merged";
      prev_free = !b.allocated;
      if (b.allocated) allocated += static_cast<int64_t>(b.size);
      offset += b.size;
    }
    ASSERT_EQ(offset, s.size) << "the blocks do not cover the segment";
    reserved += static_cast<int64_t>(s.size);
  }
  const MemoryStats st = pool.stats();
  EXPECT_EQ(st.allocated_bytes, allocated);
  EXPECT_EQ(st.reserved_bytes, reserved);
  EXPECT_EQ(static_cast<size_t>(st.reserved_bytes), device.in_use);
  EXPECT_GE(st.peak_allocated_bytes, st.allocated_bytes);
  EXPECT_EQ(st.cache_hits + st.cache_misses, st.num_allocations);
}

TEST(BlockPool, BlockSizesAreMultiplesOf512CoveringTheRequest) {
  for (size_t n = 1; n <= 5 * kMiB + 3; ++n) {
    const size_t size = block_size(n);
    if (size % kBlockAlignment != 0 || size < n || size >= n + kBlockAlignment) {
      FAIL() << "request " << n << " gets a block of " << size;
    }
    const size_t segment = segment_size(size);
    if (segment % kBlockAlignment != 0 || segment < size) FAIL() << "block " << size << " gets a segment of " << segment;
  }
  // The sizes that used to get 640, 768, 896, 1280 and 1792.
  EXPECT_EQ(block_size(513), 1024u);
  EXPECT_EQ(block_size(800), 1024u);
  EXPECT_EQ(block_size(1025), 1536u);
  EXPECT_EQ(block_size(1792), 2048u);
  EXPECT_EQ(block_size(2047), 2048u);
  EXPECT_EQ(segment_size(kMiB), kSmallSegment);
  EXPECT_EQ(segment_size(kMiB + 512), kMidSegment);
  EXPECT_EQ(segment_size(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(segment_size(11 * kMiB), 12 * kMiB);
}

TEST(BlockPool, SplitsABlockAndMergesItBackWhenFreed) {
  FakeDevice device;
  auto pool = make_pool(device);
  DataPtr a = pool->allocate(1000, nullptr);
  DataPtr b = pool->allocate(3000, nullptr);
  ASSERT_EQ(device.segment_allocs, 1);
  EXPECT_EQ(static_cast<char*>(b.get()) - static_cast<char*>(a.get()), 1024);
  std::vector<BlockPool::SegmentInfo> s = pool->snapshot();
  ASSERT_EQ(s.size(), 1u);
  ASSERT_EQ(s[0].blocks.size(), 3u);  // a, b, the free rest
  EXPECT_EQ(s[0].blocks[1].size, 3072u);
  EXPECT_EQ(pool->stats().allocated_bytes, 4096);
  EXPECT_EQ(pool->stats().reserved_bytes, static_cast<int64_t>(kSmallSegment));
  a.reset();
  EXPECT_EQ(pool->snapshot()[0].blocks.size(), 3u);  // a's block has an allocated neighbour
  expect_consistent(*pool, device);
  b.reset();
  s = pool->snapshot();
  ASSERT_EQ(s[0].blocks.size(), 1u);  // all merged into one free block
  EXPECT_FALSE(s[0].blocks[0].allocated);
  expect_consistent(*pool, device);
  pool->empty_cache();
  EXPECT_TRUE(device.segments.empty());
  EXPECT_EQ(pool->stats().reserved_bytes, 0);
}

TEST(BlockPool, An800ByteBlockIsFreedIntoItsOwnDevicesPool) {
  FakeDevice d0, d1;
  std::vector<FakeDevice*> fakes = {&d0, &d1};
  DevicePools pools(2, [&](int d) { return std::make_unique<FakeBackend>(fakes[static_cast<size_t>(d)]); });
  for (int i = 0; i < 100; ++i) {
    DataPtr p = pools.at(1, "test").allocate(800, nullptr);
    EXPECT_EQ(p.device(), Device::cuda(1));
    EXPECT_EQ(pools.at(1, "test").stats().allocated_bytes, 1024);
  }
  EXPECT_EQ(pools.at(1, "test").stats().allocated_bytes, 0);
  EXPECT_EQ(pools.at(1, "test").stats().cache_misses, 1);
  EXPECT_EQ(pools.at(0, "test").stats().num_allocations, 0);
  EXPECT_FALSE(pools.at(0, "test").used());
  EXPECT_TRUE(d0.segments.empty());
  expect_consistent(pools.at(1, "test"), d1);
}

TEST(BlockPool, LargeBlocksOfVaryingSizesReuseOneSegment) {
  FakeDevice device;
  auto pool = make_pool(device);
  std::mt19937 rng(7);
  std::uniform_int_distribution<size_t> size(kMiB + 1, 9 * kMiB);
  for (int i = 0; i < 200; ++i) {
    DataPtr a = pool->allocate(size(rng), nullptr);
    DataPtr b = pool->allocate(size(rng) / 2 + kMiB, nullptr);  // both fit in one 20 MiB segment
  }
  EXPECT_EQ(device.segment_allocs, 1);
  EXPECT_EQ(pool->stats().reserved_bytes, static_cast<int64_t>(kMidSegment));
  EXPECT_EQ(pool->stats().cache_hits, 399);
  expect_consistent(*pool, device);
}

TEST(BlockPool, ALargeBlockKeepsARestOfAtMost1MiB) {
  FakeDevice device;
  auto pool = make_pool(device);
  { DataPtr a = pool->allocate(12 * kMiB, nullptr); }
  DataPtr b = pool->allocate(12 * kMiB - 600 * kKiB, nullptr);
  EXPECT_EQ(pool->stats().allocated_bytes, static_cast<int64_t>(12 * kMiB));  // not split
  EXPECT_EQ(pool->snapshot()[0].blocks.size(), 1u);
  expect_consistent(*pool, device);
}

TEST(BlockPool, RandomSequencesKeepSegmentsTiledAndStatsConsistent) {
  FakeDevice device;
  auto pool = make_pool(device);
  std::mt19937 rng(12345);
  struct Live {
    DataPtr data;
    size_t nbytes;
  };
  std::vector<Live> live;
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  for (int step = 0; step < 6000; ++step) {
    if (live.empty() || coin(rng) < 0.55) {
      const double kind = coin(rng);
      const size_t max = kind < 0.4 ? 4 * kKiB : kind < 0.75 ? kMiB : 30 * kMiB;
      const size_t n = std::uniform_int_distribution<size_t>(1, max)(rng);
      const StreamHandle s = stream(std::uniform_int_distribution<int>(0, 2)(rng));
      live.push_back({pool->allocate(n, s), n});
      ASSERT_NE(live.back().data.get(), nullptr);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(live.back().data.get()) % kBlockAlignment, 0u);
      if (coin(rng) < 0.1) pool->record_stream(live.back().data.get(), stream(3));
    } else {
      const size_t i = std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng);
      live[i] = std::move(live.back());
      live.pop_back();
    }
    if (coin(rng) < 0.05) device.complete_events();
    if (step % 97 == 0) {
      expect_consistent(*pool, device);
      if (step % 1000 == 0) pool->empty_cache();
    }
  }
  // Live blocks hold at least their request and never overlap.
  std::map<uintptr_t, size_t> spans;
  for (const Live& l : live) spans[reinterpret_cast<uintptr_t>(l.data.get())] = l.nbytes;
  uintptr_t end = 0;
  for (const auto& [begin, n] : spans) {
    EXPECT_GE(begin, end);
    end = begin + n;
  }
  expect_consistent(*pool, device);
  EXPECT_GT(device.events_recorded, 0);
  live.clear();
  device.complete_events();
  { DataPtr poll = pool->allocate(1, stream(0)); }  // an allocation returns the blocks whose events completed
  for (const BlockPool::SegmentInfo& s : pool->snapshot()) {
    ASSERT_EQ(s.blocks.size(), 1u);
    EXPECT_FALSE(s.blocks[0].allocated);
  }
  EXPECT_EQ(pool->stats().allocated_bytes, 0);
  pool->empty_cache();
  EXPECT_TRUE(device.segments.empty());
  EXPECT_EQ(device.in_use, 0u);
  EXPECT_EQ(pool->stats().reserved_bytes, 0);
  EXPECT_EQ(device.segment_allocs, device.segment_frees);
}

TEST(BlockPool, AFreedBlockIsReusedOnlyOnItsOwnStream) {
  FakeDevice device;
  auto pool = make_pool(device);
  void* on_a = nullptr;
  {
    DataPtr a = pool->allocate(4096, stream(2));
    on_a = a.get();
  }
  DataPtr b = pool->allocate(4096, stream(1));  // a lower stream handle: its lookup would run into stream 2's blocks
  EXPECT_NE(b.get(), on_a);
  DataPtr d = pool->allocate(4096, nullptr);  // the default stream is a stream like any other
  EXPECT_NE(d.get(), on_a);
  EXPECT_EQ(device.segment_allocs, 3);  // streams 1 and null got segments of their own
  DataPtr c = pool->allocate(4096, stream(2));
  EXPECT_EQ(c.get(), on_a);
  const std::vector<BlockPool::SegmentInfo> s = pool->snapshot();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NE(s[0].stream, s[1].stream);
  EXPECT_NE(s[1].stream, s[2].stream);
  expect_consistent(*pool, device);
}

TEST(BlockPool, RecordStreamDelaysReuseUntilTheEventCompletes) {
  FakeDevice device;
  auto pool = make_pool(device);
  DataPtr x = pool->allocate(1024, stream(1));
  DataPtr fill1 = pool->allocate(kMiB, stream(1));  // fill1 and fill2: the rest of x's segment
  DataPtr fill2 = pool->allocate(kMiB - 1024, stream(1));
  ASSERT_EQ(pool->snapshot().size(), 1u);
  void* const x_ptr = x.get();
  pool->record_stream(x_ptr, stream(2));
  pool->record_stream(x_ptr, stream(2));  // once per stream
  pool->record_stream(x_ptr, stream(1));  // its own stream: nothing to wait for
  x.reset();
  ASSERT_EQ(device.events_recorded, 1);
  EXPECT_EQ(device.event_stream[0], stream(2));
  EXPECT_EQ(pool->stats().allocated_bytes, static_cast<int64_t>(kSmallSegment));  // still counted
  EXPECT_TRUE(pool->snapshot()[0].blocks[0].pending);

  DataPtr y = pool->allocate(1024, stream(1));
  EXPECT_NE(y.get(), x_ptr);  // stream 2 may still be using x
  y.reset();                  // a second segment, one free block
  expect_consistent(*pool, device);

  device.complete_events();
  DataPtr z = pool->allocate(1024, stream(1));  // best fit: x's 1024 bytes, not y's whole segment
  EXPECT_EQ(z.get(), x_ptr);
  EXPECT_FALSE(pool->snapshot()[0].blocks[0].pending);
  EXPECT_EMBER_ERROR(pool->record_stream(static_cast<char*>(z.get()) + 512, stream(2)), "record_stream",
                     "not the start of a live block", "cuda:0");
  expect_consistent(*pool, device);
}

TEST(BlockPool, EmptyCacheWaitsForPendingBlocksThenFreesWholeSegments) {
  FakeDevice device;
  auto pool = make_pool(device);
  DataPtr keep = pool->allocate(100, nullptr);
  DataPtr x = pool->allocate(3 * kMiB, nullptr);
  pool->record_stream(x.get(), stream(3));
  x.reset();
  EXPECT_EQ(pool->snapshot().size(), 2u);
  pool->empty_cache();  // synchronizes: x's event completes, its segment is freed
  EXPECT_GE(device.synchronizes, 1);
  const std::vector<BlockPool::SegmentInfo> s = pool->snapshot();
  ASSERT_EQ(s.size(), 1u);  // the segment of `keep` stays
  EXPECT_TRUE(s[0].small);
  EXPECT_EQ(pool->stats().allocated_bytes, 512);
  EXPECT_EQ(pool->stats().reserved_bytes, static_cast<int64_t>(kSmallSegment));
  expect_consistent(*pool, device);
  keep.reset();
  pool->empty_cache();
  EXPECT_TRUE(device.segments.empty());
}

TEST(BlockPool, OutOfMemoryFreesTheCacheRetriesThenNamesTheSizes) {
  FakeDevice device;
  device.capacity = 20 * kMiB;
  auto pool = make_pool(device);
  { DataPtr small = pool->allocate(4096, nullptr); }  // a cached 2 MiB segment
  DataPtr big = pool->allocate(19 * kMiB, nullptr);   // needs the cached segment back
  EXPECT_EQ(device.segment_frees, 1);
  EXPECT_EMBER_ERROR(pool->allocate(5 * kMiB, nullptr), "CUDA out of memory", "5.00 MiB", "cuda:0",
                     "20.00 MiB reserved");
  expect_consistent(*pool, device);
  big.reset();
  DataPtr again = pool->allocate(5 * kMiB, nullptr);  // still usable
  EXPECT_NE(again.get(), nullptr);
  expect_consistent(*pool, device);
}

TEST(BlockPool, ZeroBytesAndPeakStatistics) {
  FakeDevice device;
  auto pool = make_pool(device);
  EXPECT_FALSE(pool->used());
  DataPtr none = pool->allocate(0, nullptr);
  EXPECT_EQ(none.get(), nullptr);
  EXPECT_EQ(none.device(), Device::cuda(0));
  EXPECT_TRUE(pool->used());
  EXPECT_EQ(pool->stats().num_allocations, 0);
  {
    DataPtr a = pool->allocate(5000, nullptr);
    DataPtr b = pool->allocate(5000, nullptr);
  }
  EXPECT_EQ(pool->stats().peak_allocated_bytes, 2 * 5120);
  pool->reset_peak();
  EXPECT_EQ(pool->stats().peak_allocated_bytes, 0);
}

TEST(BlockPool, DeviceIndicesOutOfRangeAreErrors) {
  std::vector<FakeDevice> devices(2);
  DevicePools pools(2, [&](int d) { return std::make_unique<FakeBackend>(&devices[static_cast<size_t>(d)]); });
  EXPECT_EQ(pools.device_count(), 2);
  EXPECT_EMBER_ERROR(pools.at(2, "memory_stats"), "memory_stats", "cuda:2 does not exist", "2 CUDA devices present");
  EXPECT_EMBER_ERROR(pools.at(-1, "empty_cache"), "empty_cache", "cuda:-1");
  EXPECT_EQ(pools.find(2), nullptr);
  EXPECT_EQ(pools.find(-1), nullptr);
  ASSERT_NE(pools.find(1), nullptr);
  EXPECT_EQ(pools.find(1)->device(), Device::cuda(1));
  DevicePools one(1, [&](int d) { return std::make_unique<FakeBackend>(&devices[static_cast<size_t>(d)]); });
  EXPECT_EMBER_ERROR(one.at(1, "record_stream"), "(1 CUDA device present)");
}

}  // namespace
}  // namespace ember::cuda
