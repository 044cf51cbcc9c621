// The CUDA emulator itself (kernels/cuda/emulate): what it must catch and
// compute like a GPU. Only in the emulation build (EMBER_CUDA=EMULATE); the
// kernels here are written as any ember kernel is, and launched the same way.
#ifdef EMBER_CUDA_EMULATE

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "ember/cuda.h"
#include "ember/ember.h"
#include "ember/error.h"
#include "kernels/cuda/emulate/config.h"
#include "kernels/cuda/launch.cuh"

namespace ember::cuda {
namespace {

template <class T>
T* device_array(size_t n) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
  return static_cast<T*>(p);
}

template <class T>
std::vector<T> to_host(const T* d, size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Tree reduction in shared memory: needs every __syncthreads to be honoured.
__global__ void block_sum_kernel(const float* in, float* out, int n) {
  __shared__ float partial[256];
  const int t = static_cast<int>(threadIdx.x);
  float acc = 0;
  for (int i = static_cast<int>(blockIdx.x * blockDim.x) + t; i < n; i += static_cast<int>(gridDim.x * blockDim.x))
    acc += in[i];
  partial[t] = acc;
  __syncthreads();
  for (int stride = static_cast<int>(blockDim.x) / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

TEST(CudaEmulation, SharedMemoryReductionWithBarriers) {
  const int n = 5000, blocks = 3;
  std::vector<float> h(n);
  std::iota(h.begin(), h.end(), 0.0f);
  float* in = device_array<float>(n);
  float* out = device_array<float>(blocks);
  ASSERT_EQ(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  launch_kernel("test", "block_sum_kernel", block_sum_kernel, blocks, 256, 0, nullptr, in, out, n);
  const std::vector<float> partials = to_host(out, blocks);
  EXPECT_DOUBLE_EQ(static_cast<double>(partials[0] + partials[1] + partials[2]), n * (n - 1) / 2.0);
  cudaFree(in);
  cudaFree(out);
}

__global__ void warp_collectives_kernel(int* out) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  int v = lane;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  out[threadIdx.x * 5 + 0] = v;                                          // butterfly sum: 496 in every lane
  out[threadIdx.x * 5 + 1] = __shfl_down_sync(0xffffffffu, lane, 3);     // lane + 3, or lane at the top
  out[threadIdx.x * 5 + 2] = __shfl_up_sync(0xffffffffu, lane, 1, 8);    // within segments of 8
  out[threadIdx.x * 5 + 3] = static_cast<int>(__ballot_sync(0xffffffffu, lane % 3 == 0));
  out[threadIdx.x * 5 + 4] = __shfl_sync(0xffffffffu, lane * 10, 7);      // broadcast of lane 7
}

TEST(CudaEmulation, WarpCollectivesInLockstep) {
  int* out = device_array<int>(64 * 5);
  launch_kernel("test", "warp_collectives_kernel", warp_collectives_kernel, 1, 64, 0, nullptr, out);
  const std::vector<int> h = to_host(out, 64 * 5);
  unsigned ballot = 0;
  for (int l = 0; l < 32; l += 3) ballot |= 1u << l;
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32;
    EXPECT_EQ(h[t * 5 + 0], 496) << t;
    EXPECT_EQ(h[t * 5 + 1], lane + 3 < 32 ? lane + 3 : lane) << t;
    EXPECT_EQ(h[t * 5 + 2], lane % 8 >= 1 ? lane - 1 : lane) << t;
    EXPECT_EQ(static_cast<unsigned>(h[t * 5 + 3]), ballot) << t;
    EXPECT_EQ(h[t * 5 + 4], 70) << t;
  }
  cudaFree(out);
}

// The classic bug: threads that leave early never reach the barrier.
__global__ void divergent_barrier_kernel(float* out, int n) {
  const int i = static_cast<int>(threadIdx.x);
  if (i >= n) return;
  __syncthreads();
  out[i] = 1.0f;
}

TEST(CudaEmulation, BarrierInDivergentCodeIsAFault) {
  float* out = device_array<float>(64);
  launch_kernel("test", "divergent_barrier_kernel", divergent_barrier_kernel, 1, 64, 0, nullptr, out, 40);
  const std::string msg = error_of([] { cuda_synchronize(0); });
  EXPECT_NE(msg.find("cudaErrorLaunchFailure"), std::string::npos) << msg;
  EXPECT_NE(msg.find("divergent_barrier_kernel"), std::string::npos) << msg;
  EXPECT_NE(msg.find("__syncthreads"), std::string::npos) << msg;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // reported once
  cudaFree(out);
}

__global__ void exited_lane_kernel(int* out) {
  const int lane = static_cast<int>(threadIdx.x);
  if (lane == 5) return;
  out[lane] = __shfl_xor_sync(0xffffffffu, lane, 1);
}

TEST(CudaEmulation, ShuffleNamingAnExitedLaneIsAFault) {
  int* out = device_array<int>(32);
  launch_kernel("test", "exited_lane_kernel", exited_lane_kernel, 1, 32, 0, nullptr, out);
  const std::string msg = error_of([] { cuda_synchronize(0); });
  EXPECT_NE(msg.find("__shfl_xor_sync"), std::string::npos) << msg;
  EXPECT_NE(msg.find("exited"), std::string::npos) << msg;
  cudaFree(out);
}

__global__ void noop_kernel(int) {}

TEST(CudaEmulation, LaunchConfigurationIsChecked) {
  EXPECT_NE(error_of([] { launch_kernel("test", "noop_kernel", noop_kernel, 1, 2048, 0, nullptr, 0); })
                .find("cudaErrorInvalidConfiguration"),
            std::string::npos);
  EXPECT_NE(error_of([] { launch_kernel("test", "noop_kernel", noop_kernel, dim3(1, 70000), 32, 0, nullptr, 0); })
                .find("cudaErrorInvalidConfiguration"),
            std::string::npos);
  EXPECT_NE(error_of([] { launch_kernel("test", "noop_kernel", noop_kernel, 1, 32, 300 << 10, nullptr, 0); })
                .find("cudaErrorInvalidValue"),
            std::string::npos);
  // The error is not sticky: the next launch is fine.
  launch_kernel("test", "noop_kernel", noop_kernel, 1, 1024, 0, nullptr, 0);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

__global__ void big_shared_kernel(int) {}

TEST(CudaEmulation, DynamicSharedMemoryBeyond48KiBNeedsTheOptIn) {
  const size_t bytes = 64 << 10;
  EXPECT_NE(error_of([&] { launch_kernel("test", "big_shared_kernel", big_shared_kernel, 1, 32, bytes, nullptr, 0); })
                .find("cudaErrorInvalidValue"),
            std::string::npos);
  ASSERT_EQ(cudaFuncSetAttribute(big_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
            cudaSuccess);
  launch_kernel("test", "big_shared_kernel", big_shared_kernel, 1, 32, bytes, nullptr, 0);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_NE(error_of([&] { launch_kernel("test", "big_shared_kernel", big_shared_kernel, 1, 32, bytes + 4, nullptr, 0); })
                .find("cudaErrorInvalidValue"),
            std::string::npos);
  EXPECT_EQ(cudaFuncSetAttribute(big_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 << 10),
            cudaErrorInvalidValue);  // beyond the H200's 227 KiB
  cudaGetLastError();
}

// Half the lanes at __syncwarp, half at a shuffle with the same mask.
__global__ void mixed_collectives_kernel(int* out) {
  const int lane = static_cast<int>(threadIdx.x);
  if (lane < 16) {
    __syncwarp();
    out[lane] = lane;
  } else {
    out[lane] = __shfl_xor_sync(0xffffffffu, lane, 1);
  }
}

TEST(CudaEmulation, DifferentWarpCollectivesMeetingIsAFault) {
  int* out = device_array<int>(32);
  launch_kernel("test", "mixed_collectives_kernel", mixed_collectives_kernel, 1, 32, 0, nullptr, out);
  const std::string msg = error_of([] { cuda_synchronize(0); });
  EXPECT_NE(msg.find("__syncwarp"), std::string::npos) << msg;
  EXPECT_NE(msg.find("__shfl_xor_sync"), std::string::npos) << msg;
  cudaFree(out);
}

TEST(CudaEmulation, FreshDeviceMemoryReadsAsNaN) {
  float* d = device_array<float>(100);
  const std::vector<float> h = to_host(d, 100);
  for (float v : h) EXPECT_TRUE(v != v);
  cudaFree(d);
}

TEST(CudaEmulation, CopiesCheckDirectionAndBounds) {
  float* d = device_array<float>(16);
  std::vector<float> h(32, 1.0f);
  EXPECT_EQ(cudaMemcpy(d, h.data(), 16 * sizeof(float), cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(d, h.data(), 32 * sizeof(float), cudaMemcpyHostToDevice), cudaErrorInvalidValue);  // past the end
  EXPECT_EQ(cudaMemcpy(h.data(), d, 16 * sizeof(float), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(h.data()), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaFree(d);
}

__global__ void fill_kernel(float* out, int n, float value) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += static_cast<int>(gridDim.x * blockDim.x))
    out[i] = value;
}
__global__ void add_one_kernel(const float* in, float* out, int n) {
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += static_cast<int>(gridDim.x * blockDim.x))
    out[i] = in[i] + 1.0f;
}

TEST(CudaEmulation, EventsOrderWorkAcrossStreams) {
  const int n = 1000;
  float* a = device_array<float>(n);
  float* b = device_array<float>(n);
  cudaStream_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t filled = nullptr;
  ASSERT_EQ(cudaEventCreate(&filled), cudaSuccess);
  launch_kernel("test", "fill_kernel", fill_kernel, 2, 128, 0, s1, a, n, 41.0f);
  ASSERT_EQ(cudaEventRecord(filled, s1), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(s2, filled, 0), cudaSuccess);
  launch_kernel("test", "add_one_kernel", add_one_kernel, 2, 128, 0, s2, a, b, n);
  ASSERT_EQ(cudaStreamSynchronize(s2), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(filled), cudaSuccess);
  for (float v : to_host(b, n)) ASSERT_EQ(v, 42.0f);
  cudaEventDestroy(filled);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  cudaFree(a);
  cudaFree(b);
}

// Run by the ctest entry cuda_emu_newest_first (EMBER_CUDA_EMULATE_SCHEDULE=newest):
// without the event wait, the second stream's kernel runs first and reads
// what the first has not written yet, as it may on a GPU.
TEST(CudaEmulationNewestFirst, AMissingWaitBetweenStreamsReadsStaleData) {
  if (!emulate::config().newest_first) GTEST_SKIP() << "needs EMBER_CUDA_EMULATE_SCHEDULE=newest";
  const int n = 256;
  float* a = device_array<float>(n);
  float* b = device_array<float>(n);
  cudaStream_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
  launch_kernel("test", "fill_kernel", fill_kernel, 1, 128, 0, s1, a, n, 41.0f);
  launch_kernel("test", "add_one_kernel", add_one_kernel, 1, 128, 0, s2, a, b, n);  // no wait on s1
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> got = to_host(b, n);
  EXPECT_TRUE(got[0] != got[0]) << "read " << got[0] << ": the fill ran first";  // fresh memory is NaN
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  cudaFree(a);
  cudaFree(b);
}

TEST(CudaEmulation, AStreamOfAnotherDeviceIsRefusedAtLaunch) {
  int count = 0;
  cudaGetDeviceCount(&count);
  if (count < 2) GTEST_SKIP() << "one emulated device";
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_NE(error_of([&] { launch_kernel("test", "noop_kernel", noop_kernel, 1, 32, 0, s, 0); })
                .find("cudaErrorInvalidResourceHandle"),
            std::string::npos);
  cudaStreamDestroy(s);
}

// Run by the ctest entry cuda_emu_launch_blocking, with EMBER_CUDA_LAUNCH_BLOCKING=1.
TEST(CudaEmulationLaunchBlocking, AFaultIsReportedByItsOwnLaunch) {
  if (!launch_blocking()) GTEST_SKIP() << "needs EMBER_CUDA_LAUNCH_BLOCKING=1";
  float* out = device_array<float>(64);
  const std::string msg = error_of(
      [&] { launch_kernel("my_op", "divergent_barrier_kernel", divergent_barrier_kernel, 1, 64, 0, nullptr, out, 40); });
  EXPECT_EQ(msg.rfind("my_op: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("EMBER_CUDA_LAUNCH_BLOCKING"), std::string::npos) << msg;
  EXPECT_NE(msg.find("__syncthreads"), std::string::npos) << msg;
  cudaFree(out);
}

// Regression: the dtype-converting copy kernel takes one element per thread
// and pass but was given a grid sized for four (a quarter of the threads).
TEST(CudaEmulation, ConvertingCopyLaunchesAThreadPerElement) {
  const Tensor x = ones({2048}, kInt32).cuda();
  const Tensor y = x.to(kFloat64);
  cuda_synchronize();
  const emulate::LaunchRecord* last = nullptr;  // ours: launches are logged in queueing order
  const std::vector<emulate::LaunchRecord> log = emulate::recent_launches();
  for (const emulate::LaunchRecord& r : log)
    if (r.kernel == "convert_contiguous_kernel") last = &r;
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(static_cast<uint64_t>(last->grid.x) * last->block.x, 2048u);  // one SM: grid capped at 16 blocks of 256
  EXPECT_EQ(y.sum().item<double>(), 2048.0);
}

}  // namespace
}  // namespace ember::cuda

#endif  // EMBER_CUDA_EMULATE
