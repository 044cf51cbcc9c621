// What every CUDA source in ember shares: the one error-check macro, the
// device guard, the stream kernels run on, and cached device properties.
//
// Note [CUDA errors]
// Every CUDA runtime call goes through EMBER_CUDA_CHECK(call, op). A failure
// throws ember::Error naming the op, the call as written, the CUDA error name
// and its description, e.g.
//   copy_: CUDA call cudaMemcpyAsync(dst, src, n, kind, stream) failed:
//   cudaErrorInvalidValue (invalid argument)
// Kernels are launched with launch_kernel (launch.cuh), which checks the
// launch with check_launch(op, kernel name, stream): cudaGetLastError (which clears a
// non-sticky error) and, under EMBER_CUDA_LAUNCH_BLOCKING=1, a synchronisation
// of the stream, so that a fault in the kernel is reported under its own op
// instead of at the next synchronising call.
//
// Note [CUDA streams and devices]
// Ops queue their kernels and copies on the current stream of the current
// device (current_cuda_stream(): per host thread and device, the default stream
// unless ember::cuda::StreamGuard or set_current_stream chose another). The
// caching allocator tags each block with the stream it was allocated on and
// hands it out again at once only on that stream; a block also used on other
// streams (record_stream) waits for their work first. Ops switch to the
// device of their tensors with a DeviceGuard, which restores the caller's
// device when it goes out of scope.
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


namespace ember::cuda {

// After a kernel launch on `stream`: throws naming `op` and `kernel` when the
// launch (or, with EMBER_CUDA_LAUNCH_BLOCKING=1, the kernel) failed.
void check_launch(const char* op, const char* kernel, cudaStream_t stream);
// True when EMBER_CUDA_LAUNCH_BLOCKING=1 (read once).
bool launch_blocking();

// The current stream of the current device (Note [CUDA streams and devices]).
cudaStream_t current_cuda_stream();

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
