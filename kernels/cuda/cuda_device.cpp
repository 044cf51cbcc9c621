// <ember/cuda.h>: device queries. This file is compiled in every build (the
// public functions exist without CUDA too, answering "no device"); with CUDA
// it also holds the error formatting of Note [CUDA errors] and the cached
// device properties.
#include "ember/cuda.h"

#include "ember/error.h"

#ifdef EMBER_WITH_CUDA

#include <cuda_runtime_api.h>

#include <mutex>
#include <vector>

#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember {
namespace cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* op, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  detail::throw_error(detail::str_cat(op, ": CUDA call ", call, " failed: ", cudaGetErrorName(err), " (",
                                      cudaGetErrorString(err), ")"),
                      file, line);
}

int multiprocessor_count(int device) {
  static std::mutex mutex;
  static std::vector<int> counts;
  std::lock_guard<std::mutex> lock(mutex);
  if (counts.empty()) counts.assign(static_cast<size_t>(cuda_device_count()), 0);
  EMBER_CHECK(device >= 0 && device < static_cast<int>(counts.size()), "CUDA: device cuda:", device,
              " does not exist (", counts.size(), " devices present)");
  int& n = counts[static_cast<size_t>(device)];
  if (n == 0) EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), "CUDA");
  return n;
}

}  // namespace cuda

int cuda_device_count() {
  // No driver, no device or a broken installation all mean "no CUDA here":
  // cudaGetDeviceCount reports them as errors, which are cleared, not thrown.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

bool cuda_is_available() { return cuda_device_count() > 0; }

int cuda_current_device() {
  EMBER_CHECK(cuda_is_available(), "cuda_current_device: no CUDA device is present");
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), "cuda_current_device");
  return device;
}

void cuda_set_device(int device) {
  const int count = cuda_device_count();
  EMBER_CHECK(device >= 0 && device < count, "cuda_set_device: device ", device, " does not exist (", count,
              " CUDA devices present)");
  EMBER_CUDA_CHECK(cudaSetDevice(device), "cuda_set_device");
}

void cuda_synchronize(int device) {
  const int count = cuda_device_count();
  EMBER_CHECK(device >= 0 && device < count, "cuda_synchronize: device ", device, " does not exist (", count,
              " CUDA devices present)");
  cuda::DeviceGuard guard(device);
  EMBER_CUDA_CHECK(cudaDeviceSynchronize(), "cuda_synchronize");
}

void cuda_synchronize() {
  // Only devices ember has used: touching another would create its context.
  for (int d = 0; d < cuda_device_count(); ++d)
    if (cuda::device_was_used(d)) cuda_synchronize(d);
}

}  // namespace ember

#else  // built without CUDA

namespace ember {

bool cuda_is_available() { return false; }
int cuda_device_count() { return 0; }
int cuda_current_device() { EMBER_FAIL("cuda_current_device: ember was built without CUDA support"); }
void cuda_set_device(int device) {
  EMBER_FAIL("cuda_set_device(", device, "): ember was built without CUDA support");
}
void cuda_synchronize() {}
void cuda_synchronize(int device) {
  EMBER_FAIL("cuda_synchronize(", device, "): ember was built without CUDA support");
}

}  // namespace ember

#endif
