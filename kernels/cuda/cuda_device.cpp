// <ember/cuda.h>: device queries. This file is compiled in every build (the
// public functions exist without CUDA too, answering "no device"); with CUDA
// it also holds the error formatting of Note [CUDA errors] and the cached
// device properties.
#include "ember/cuda.h"

#include "ember/error.h"

#ifdef EMBER_WITH_CUDA

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember {
namespace cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* op, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
#ifdef EMBER_CUDA_EMULATE
  // The emulator knows what went wrong inside a kernel; a GPU does not say.
  const std::string fault =
      err == cudaErrorLaunchFailure ? detail::str_cat(" in ", emulate::last_fault_message()) : std::string();
#else
  const std::string fault;
#endif
  detail::throw_error(detail::str_cat(op, ": CUDA call ", call, " failed: ", cudaGetErrorName(err), " (",
                                      cudaGetErrorString(err), ")", fault),
                      file, line);
}

bool launch_blocking() {
  static const bool on = [] {
    const char* v = std::getenv("EMBER_CUDA_LAUNCH_BLOCKING");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

void check_launch(const char* op, const char* kernel, cudaStream_t stream) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw_cuda_error(err, detail::str_cat("launch of ", kernel).c_str(), op, __FILE__, __LINE__);
  if (!launch_blocking()) return;
  const cudaError_t run = cudaStreamSynchronize(stream);
  if (run != cudaSuccess)
    throw_cuda_error(run, detail::str_cat(kernel, " (EMBER_CUDA_LAUNCH_BLOCKING=1)").c_str(), op, __FILE__, __LINE__);
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

// Streams and events exist only with CUDA: every way to get one fails here.
namespace cuda {

Stream Stream::default_stream(int) { EMBER_FAIL("Stream::default_stream: ember was built without CUDA support"); }
Stream Stream::create(int) { EMBER_FAIL("Stream::create: ember was built without CUDA support"); }
bool Stream::query() const { return true; }
void Stream::synchronize() const {}
void Stream::wait(const Event&) const {}
Stream current_stream(int) { EMBER_FAIL("current_stream: ember was built without CUDA support"); }
void set_current_stream(const Stream&) { EMBER_FAIL("set_current_stream: ember was built without CUDA support"); }
StreamGuard::StreamGuard(const Stream& stream) : previous_(stream), previous_device_(0) {
  EMBER_FAIL("StreamGuard: ember was built without CUDA support");
}
StreamGuard::~StreamGuard() = default;
Event::Event(bool enable_timing) : timing_(enable_timing) {}
Event::~Event() = default;
Event::Event(Event&& other) noexcept : device_(other.device_), timing_(other.timing_) {}
Event& Event::operator=(Event&& other) noexcept {
  timing_ = other.timing_;
  return *this;
}
void Event::record(const Stream&) { EMBER_FAIL("Event::record: ember was built without CUDA support"); }
void Event::record() { EMBER_FAIL("Event::record: ember was built without CUDA support"); }
bool Event::query() const { return true; }
void Event::synchronize() const {}
float Event::elapsed_time(const Event&) const {
  EMBER_FAIL("Event::elapsed_time: ember was built without CUDA support");
}
void synchronize(int device) {
  if (device >= 0) cuda_synchronize(device);
}
void record_stream(const Tensor&, const Stream&) {
  EMBER_FAIL("record_stream: ember was built without CUDA support");
}

}  // namespace cuda
}  // namespace ember

#endif
