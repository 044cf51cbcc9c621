// Streams, events and asynchronous copies (<ember/cuda.h>), on a GPU or on the
// emulator; every test skips without a device.
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "ember/cuda.h"
#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

TEST(CudaStreams, GuardMakesAStreamCurrentAndRestoresTheDefault) {
  REQUIRE_CUDA();
  const cuda::Stream side = cuda::Stream::create();
  EXPECT_EQ(cuda::current_stream(), cuda::Stream::default_stream());
  EXPECT_NE(side, cuda::Stream::default_stream());
  Tensor y;
  const Tensor x = arange(1000, kFloat32).cuda();
  cuda::current_stream().synchronize();  // x is ready before `side` reads it
  {
    cuda::StreamGuard guard(side);
    EXPECT_EQ(cuda::current_stream(), side);
    y = (x * 2).neg().abs();
    cuda::record_stream(y, side);
  }
  EXPECT_EQ(cuda::current_stream(), cuda::Stream::default_stream());
  cuda::Event done;
  done.record(side);
  cuda::current_stream().wait(done);  // the default stream (y.cpu() below) waits for side's work
  EXPECT_TRUE(testing::all_close(y.cpu(), arange(1000, kFloat32) * 2, 1e-5, 1e-4));
  side.synchronize();
  EXPECT_TRUE(side.query());
  EXPECT_TRUE(done.query());
}

TEST(CudaStreams, EventsTimeWorkOnAStream) {
  REQUIRE_CUDA();
  cuda::Event start(true), end(true);
  start.record();
  const Tensor x = rand({1 << 16}).cuda().mul(3).sum();
  end.record();
  end.synchronize();
  EXPECT_GE(start.elapsed_time(end), 0.0f);
  cuda::Event untimed;
  untimed.record();
  untimed.synchronize();
  EXPECT_THROW(untimed.elapsed_time(end), Error);
  cuda::Event never;
  EXPECT_TRUE(never.query());
  (void)x;
}

TEST(CudaStreams, NonBlockingCopiesFromAndToPinnedMemory) {
  REQUIRE_CUDA();
  const Tensor host = arange(4096, kFloat32).pin_memory();
  ASSERT_TRUE(host.is_pinned());
  const Tensor dev = host.to(Device::cuda(), /*non_blocking=*/true);
  const Tensor back = (dev + 1).to(Device::cpu(), /*non_blocking=*/true);
  EXPECT_TRUE(back.is_pinned());  // the result of a non-blocking download is pinned, as in PyTorch
  cuda::current_stream().synchronize();
  EXPECT_TRUE(testing::all_close(back, arange(4096, kFloat32) + 1, 0, 0));
  // A pageable source still works (the flag is ignored there).
  const Tensor plain = arange(10, kInt64).to(Device::cuda(), true);
  EXPECT_TRUE(testing::all_close(plain.cpu(), arange(10, kInt64), 0, 0));
}

TEST(CudaStreams, RecordStreamChecksItsArguments) {
  REQUIRE_CUDA();
  const cuda::Stream s = cuda::Stream::create();
  EXPECT_THROW(cuda::record_stream(ones({3}), s), Error);
  EXPECT_THROW(cuda::record_stream(Tensor(), s), Error);
  if (cuda_device_count() > 1) {
    EXPECT_THROW(cuda::record_stream(ones({3}).cuda(1), s), Error);
    // A stream of device 1 makes device 1 current inside its guard.
    cuda::StreamGuard guard(cuda::Stream::create(1));
    EXPECT_EQ(cuda_current_device(), 1);
    EXPECT_EQ(ones({2}).cuda(1).sum().item<float>(), 2.0f);
  }
  EXPECT_EQ(cuda_current_device(), 0);
}

}  // namespace
}  // namespace ember
