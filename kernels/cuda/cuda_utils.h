// What every CUDA source in ember shares: the one error-check macro, the
// device guard, the stream kernels run on, and cached device properties.
//
// Note [CUDA errors]
// Every CUDA runtime call goes through EMBER_CUDA_CHECK(call, op). A failure
// throws ember::Error naming the op, the call as written, the CUDA error name
// and its description, e.g.
//   copy_: CUDA call cudaMemcpyAsync(dst, src, n, kind, stream) failed:
//   cudaErrorInvalidValue (invalid argument)
// Kernel launches are checked with EMBER_CUDA_CHECK_LAUNCH(op, kernel name),
// which reads cudaGetLastError (and so clears a non-sticky error).
//
// Note [CUDA streams and devices]
// All work of a device runs in order on one stream (the legacy default stream
// for now; current_stream() is the single place to change that). The caching
// allocator relies on it: a block freed by a tensor may be handed out again at
// once, because any kernel that still reads it was queued before any kernel
// that will write it. Ops switch to the device of their tensors with a
// DeviceGuard, which restores the caller's device when it goes out of scope.
#pragma once

#include <cuda_runtime_api.h>

#include "ember/error.h"

namespace ember::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* op, const char* file, int line);

}  // namespace ember::cuda

#define EMBER_CUDA_CHECK(call, op)                                                    \
  do {                                                                                \
    const cudaError_t ember_cuda_err_ = (call);                                       \
    if (__builtin_expect(ember_cuda_err_ != cudaSuccess, 0)) {                        \
      ::ember::cuda::throw_cuda_error(ember_cuda_err_, #call, op, __FILE__, __LINE__); \
    }                                                                                 \
  } while (0)

#define EMBER_CUDA_CHECK_LAUNCH(op, kernel)                                           \
  do {                                                                                \
    const cudaError_t ember_cuda_err_ = cudaGetLastError();                           \
    if (__builtin_expect(ember_cuda_err_ != cudaSuccess, 0)) {                        \
      ::ember::cuda::throw_cuda_error(ember_cuda_err_, "launch of " kernel, op, __FILE__, __LINE__); \
    }                                                                                 \
  } while (0)

namespace ember::cuda {

// The stream all of a device's work runs on (Note [CUDA streams and devices]).
inline cudaStream_t current_stream() { return nullptr; }

// Makes `device` current for the guard's lifetime (no call when it already is).
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    EMBER_CUDA_CHECK(cudaGetDevice(&saved_), "DeviceGuard");
    if (device != saved_) {
      EMBER_CUDA_CHECK(cudaSetDevice(device), "DeviceGuard");
      switched_ = true;
    }
  }
  ~DeviceGuard() {
    if (switched_) cudaSetDevice(saved_);  // no throw from a destructor; a failure here resurfaces on the next call
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int saved_ = 0;
  bool switched_ = false;
};

// Number of streaming multiprocessors of `device` (queried once per device).
int multiprocessor_count(int device);

}  // namespace ember::cuda
