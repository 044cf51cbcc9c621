// The device caching allocator through the public API: block sizes and
// statistics, reuse without growth over varying sizes, the second device,
// blocks used on a side stream, and out-of-memory. Skips without a GPU; the
// allocator's split/merge invariants are property-tested in test_block_pool.cpp.
#include <gtest/gtest.h>

#include <cstdint>

#include "cuda_test_util.h"
#include "ember/cuda.h"
#include "ember/ember.h"
#include "test_util.h"
#ifdef EMBER_WITH_CUDA
#include "kernels/cuda/cuda_allocator.h"
#endif

namespace ember {
namespace {

using namespace cuda_testing;
using testing::all_close;

TEST(CudaAllocator, CachesBlocksAndReportsStats) {
  REQUIRE_CUDA();
  cuda_synchronize();
  empty_cache(kCuda);
  reset_peak_memory_stats(kCuda);
  const MemoryStats s0 = memory_stats(kCuda);
  EXPECT_GE(s0.reserved_bytes, s0.allocated_bytes);
  {
    Tensor a = empty({1000}, kCuda);  // 4000 bytes: a 4096-byte block
    const MemoryStats s1 = memory_stats(kCuda);
    EXPECT_EQ(s1.allocated_bytes - s0.allocated_bytes, 4096);
    EXPECT_EQ(s1.num_allocations, s0.num_allocations + 1);
  }
  const MemoryStats s2 = memory_stats(kCuda);
  EXPECT_EQ(s2.allocated_bytes, s0.allocated_bytes);
  EXPECT_GT(s2.reserved_bytes, s2.allocated_bytes);  // the segment stays cached
  {
    Tensor b = empty({990}, kCuda);  // served from the cache
    const MemoryStats s3 = memory_stats(kCuda);
    EXPECT_EQ(s3.cache_hits, s2.cache_hits + 1);
    EXPECT_EQ(s3.cache_misses, s2.cache_misses);
    EXPECT_GE(s3.peak_allocated_bytes, s3.allocated_bytes);
  }
  empty_cache(kCuda);
  const MemoryStats s4 = memory_stats(kCuda);
  EXPECT_LE(s4.reserved_bytes, s0.reserved_bytes);
  if (s4.allocated_bytes == 0) {
    EXPECT_EQ(s4.reserved_bytes, 0);
  }
  const Tensor none = empty({0, 3}, kCuda);
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(none.device(), kCuda);
}

TEST(CudaAllocator, An800ByteTensorIsAllocatedAndFreedRepeatedly) {
  REQUIRE_CUDA();
  const int64_t before = memory_stats(kCuda).allocated_bytes;
  for (int i = 0; i < 100; ++i) {
    Tensor t = full({200}, 1.5f, TensorOptions(kFloat32).device(kCuda));  // 800 bytes
    EXPECT_EQ(memory_stats(kCuda).allocated_bytes - before, 1024);
    if (i == 99) {
      EXPECT_EQ(t.sum().item<float>(), 300.f);
    }
  }
  EXPECT_EQ(memory_stats(kCuda).allocated_bytes, before);
  empty_cache(kCuda);
}

TEST(CudaAllocator, ReservedMemoryDoesNotGrowOverVaryingSizes) {
  REQUIRE_CUDA();
  cuda_synchronize();
  empty_cache(kCuda);
  const int64_t base = memory_stats(kCuda).reserved_bytes;
  int64_t reserved_after_first = 0;
  for (int round = 0; round < 5; ++round) {
    for (int64_t mib = 2; mib <= 9; ++mib) {
      Tensor a = empty({mib << 18}, kCuda);         // mib MiB of float32
      Tensor b = empty({(11 - mib) << 17}, kCuda);  // (11 - mib) / 2 MiB
    }
    for (int64_t n = 1; n < 300000; n = n * 3 + 7) Tensor small = empty({n}, kCuda);
    if (round == 0) reserved_after_first = memory_stats(kCuda).reserved_bytes;
  }
  EXPECT_EQ(memory_stats(kCuda).reserved_bytes, reserved_after_first);
  // Every large block is carved from one 20 MiB segment, the small ones from a 2 MiB one.
  EXPECT_LE(reserved_after_first - base, int64_t{24} << 20);
  empty_cache(kCuda);
}

TEST(CudaAllocator, TensorsOnTheSecondDeviceAreAllocatedAndCountedThere) {
  REQUIRE_CUDA();
  if (cuda_device_count() < 2) GTEST_SKIP() << "one CUDA device";
  const Device cuda1 = Device::cuda(1);
  cuda_set_device(0);
  cuda_synchronize();
  empty_cache(cuda1);
  reset_peak_memory_stats(cuda1);
  const MemoryStats d0 = memory_stats(kCuda), d1 = memory_stats(cuda1);
  {
    const Tensor cpu = random_cpu({1000}, kFloat32);
    const Tensor x = cpu.to(cuda1);  // while cuda:0 is current
    EXPECT_EQ(cuda_current_device(), 0);
    EXPECT_EQ(x.device(), cuda1);
    EXPECT_TRUE(bitwise_equal(x, cpu));
    EXPECT_EQ(memory_stats(cuda1).allocated_bytes - d1.allocated_bytes, 4096);
    EXPECT_EQ(memory_stats(kCuda).allocated_bytes, d0.allocated_bytes);
    EXPECT_EQ(memory_stats(cuda1).peak_allocated_bytes, d1.allocated_bytes + 4096);
  }
  EXPECT_EQ(memory_stats(cuda1).allocated_bytes, d1.allocated_bytes);
  reset_peak_memory_stats(cuda1);
  EXPECT_EQ(memory_stats(cuda1).peak_allocated_bytes, memory_stats(cuda1).allocated_bytes);
  EXPECT_GE(memory_stats(cuda1).reserved_bytes, d1.reserved_bytes);
  empty_cache(cuda1);
  EXPECT_EQ(memory_stats(cuda1).reserved_bytes, d1.reserved_bytes);
  EXPECT_EQ(memory_stats(kCuda).reserved_bytes, d0.reserved_bytes);  // cuda:0's cache untouched
}

#ifdef EMBER_WITH_CUDA
TEST(CudaAllocator, ABlockUsedOnAnotherStreamComesBackAfterThatStreamsWork) {
  REQUIRE_CUDA();
  cuda_synchronize();
  empty_cache(kCuda);
  const MemoryStats s0 = memory_stats(kCuda);
  const cuda::Stream side = cuda::Stream::create(0);
  {
    const Tensor x = ones({1000}, kCuda);
    cuda::record_stream_use(x.impl()->storage()->data(), 0, side.handle());
  }
  // Freed, but it counts as allocated until an event recorded on `side` is seen complete.
  EXPECT_EQ(memory_stats(kCuda).allocated_bytes, s0.allocated_bytes + 4096);
  side.synchronize();
  empty_cache(kCuda);
  const MemoryStats s1 = memory_stats(kCuda);
  EXPECT_EQ(s1.allocated_bytes, s0.allocated_bytes);
  EXPECT_EQ(s1.reserved_bytes, s0.reserved_bytes);
  EXPECT_EMBER_ERROR(cuda::record_stream_use(reinterpret_cast<void*>(512), 0, side.handle()), "record_stream",
                     "not the start of a live block", "cuda:0");
}
#endif

// A pinned tensor freed while a non-blocking copy into it is in flight is
// not handed out again before the copy ends (else the copy would land in
// its next owner's data).
TEST(CudaAllocator, APinnedBufferIsNotReusedWhileACopyIntoItRuns) {
  REQUIRE_CUDA();
  const int64_t n = 1 << 16;
  const Tensor src = random_cpu({n}, kFloat32).cuda();
  for (int round = 0; round < 5; ++round) {
    {
      Tensor dst = empty({n}).pin_memory();
      dst.copy_(src, /*non_blocking=*/true);
    }  // freed before the copy is waited for
    Tensor mine = empty({n}).pin_memory();
    mine.fill_(7.0f);
    cuda_synchronize();
    EXPECT_TRUE(all_close(mine, full({n}, 7.0f), 0, 0)) << "round " << round;
  }
}

// Copies from one pinned buffer on two streams: the buffer waits for both
// (the ctest entry cuda_emu_newest_first lets the side stream finish first).
TEST(CudaAllocator, APinnedBufferUsedOnTwoStreamsWaitsForBoth) {
  REQUIRE_CUDA();
  const int64_t n = 1 << 16;
  const Tensor expected = random_cpu({n}, kFloat32);
  Tensor host = expected.pin_memory();
  const cuda::Stream side = cuda::Stream::create(0);
  const Tensor on_default = host.to(kCuda, /*non_blocking=*/true);
  Tensor on_side;
  {
    cuda::StreamGuard guard(side);
    on_side = host.to(kCuda, /*non_blocking=*/true);
  }
  side.synchronize();
  host = Tensor();  // freed; the default stream's copy may still be reading it
  Tensor other = empty({n}).pin_memory();
  other.fill_(-1.0f);
  cuda_synchronize();
  EXPECT_TRUE(bitwise_equal(on_default, expected));
  EXPECT_TRUE(bitwise_equal(on_side, expected));
}

TEST(CudaAllocator, ADeviceIndexWithNoDeviceIsAnError) {
  REQUIRE_CUDA();
  const Device missing = Device::cuda(cuda_device_count());
  EXPECT_EMBER_ERROR(empty({4}, missing), "does not exist");
  EXPECT_EMBER_ERROR(memory_stats(missing), "memory_stats", "does not exist");
  EXPECT_EMBER_ERROR(empty_cache(missing), "empty_cache", "does not exist");
}

TEST(CudaAllocator, OutOfMemoryIsAClearError) {
  REQUIRE_CUDA();
  EXPECT_EMBER_ERROR(empty({int64_t{1} << 48}, kCuda), "CUDA out of memory", "cuda:0");
  const Tensor ok = ones({10}, kCuda);  // the device is still usable
  EXPECT_EQ(ok.sum().item<float>(), 10.f);
}

}  // namespace
}  // namespace ember
