// Streams and events (<ember/cuda.h>): the per-thread current stream of each
// device, the stream pool, and Event on cudaEvent_t.
#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

#include "ember/cuda.h"
#include "ember/tensor.h"
#include "ember/tensor_impl.h"
#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

constexpr int kPoolSize = 32;
constexpr size_t kMaxDevices = kMaxDeviceIndex + 1;  // every index a Device can hold

int resolve_device(int device, const char* op) {
  const int count = cuda_device_count();
  if (device < 0) {
    EMBER_CHECK(count > 0, op, ": no CUDA device is present");
    return cuda_current_device();
  }
  EMBER_CHECK(device < count, op, ": device cuda:", device, " does not exist (", count, " CUDA device",
              count == 1 ? "" : "s", " present)");
  return device;
}

struct Pool {
  std::once_flag created;
  std::array<cudaStream_t, kPoolSize> streams{};
  std::atomic<unsigned> next{0};
};

Pool& pool(int device) {
  static auto* pools = new std::array<Pool, kMaxDevices>();  // leaked: streams live until exit
  return (*pools)[static_cast<size_t>(device)];
}

// This thread's current stream per device (nullptr: the default stream).
thread_local std::array<cudaStream_t, kMaxDevices> t_current{};

}  // namespace

cudaStream_t current_cuda_stream() {
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), "current_stream");
  return t_current[static_cast<size_t>(device)];
}

Stream Stream::default_stream(int device) { return Stream(nullptr, resolve_device(device, "Stream::default_stream")); }

Stream Stream::create(int device) {
  device = resolve_device(device, "Stream::create");
  Pool& p = pool(device);
  std::call_once(p.created, [&] {
    DeviceGuard guard(device);
    for (cudaStream_t& s : p.streams) EMBER_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "Stream::create");
  });
  return Stream(p.streams[p.next.fetch_add(1) % kPoolSize], device);
}

bool Stream::query() const {
  DeviceGuard guard(device_);
  const cudaError_t err = cudaStreamQuery(static_cast<cudaStream_t>(handle_));
  if (err == cudaErrorNotReady) return false;
  EMBER_CUDA_CHECK(err, "Stream::query");
  return true;
}

void Stream::synchronize() const {
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_)), "Stream::synchronize");
}

void Stream::wait(const Event& event) const {
  if (!event.handle_) return;  // nothing recorded: nothing to wait for
  DeviceGuard guard(device_);
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(handle_), static_cast<cudaEvent_t>(event.handle_), 0),
                   "Stream::wait");
}

Stream current_stream(int device) {
  device = resolve_device(device, "current_stream");
  return Stream(t_current[static_cast<size_t>(device)], device);
}

void set_current_stream(const Stream& stream) {
  resolve_device(stream.device_index(), "set_current_stream");
  t_current[static_cast<size_t>(stream.device_index())] = static_cast<cudaStream_t>(stream.handle());
}

StreamGuard::StreamGuard(const Stream& stream)
    : previous_(current_stream(stream.device_index())), previous_device_(cuda_current_device()) {
  // The device first: if switching fails, nothing has changed (the destructor would not run).
  if (previous_device_ != stream.device_index()) cuda_set_device(stream.device_index());
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() {
  set_current_stream(previous_);
  if (previous_device_ != previous_.device_index()) cudaSetDevice(previous_device_);  // no throw from a destructor
}

Event::Event(bool enable_timing) : timing_(enable_timing) {}

Event::~Event() {
  if (handle_) cudaEventDestroy(static_cast<cudaEvent_t>(handle_));  // no throw from a destructor
}

Event::Event(Event&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), device_(other.device_), timing_(other.timing_) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    if (handle_) cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = other.device_;
    timing_ = other.timing_;
  }
  return *this;
}

void Event::record(const Stream& stream) {
  DeviceGuard guard(stream.device_index());
  if (handle_ && device_ != stream.device_index()) {
    EMBER_FAIL("Event::record: the event belongs to cuda:", device_, " and cannot be recorded on a stream of cuda:",
               stream.device_index());
  }
  if (!handle_) {
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, timing_ ? cudaEventDefault : cudaEventDisableTiming), "Event::record");
    handle_ = e;
    device_ = stream.device_index();
  }
  EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(handle_), static_cast<cudaStream_t>(stream.handle())),
                   "Event::record");
}

void Event::record() { record(current_stream()); }

bool Event::query() const {
  if (!handle_) return true;
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(handle_));
  if (err == cudaErrorNotReady) return false;
  EMBER_CUDA_CHECK(err, "Event::query");
  return true;
}

void Event::synchronize() const {
  if (handle_) EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(handle_)), "Event::synchronize");
}

float Event::elapsed_time(const Event& end) const {
  EMBER_CHECK(timing_ && end.timing_, "Event::elapsed_time: both events must be created with enable_timing=true");
  EMBER_CHECK(handle_ && end.handle_, "Event::elapsed_time: both events must be recorded first");
  float ms = 0;
  EMBER_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(handle_), static_cast<cudaEvent_t>(end.handle_)),
                   "Event::elapsed_time");
  return ms;
}

void record_stream(const Tensor& tensor, const Stream& stream) {
  EMBER_CHECK(tensor.defined(), "record_stream: got an undefined tensor");
  EMBER_CHECK(tensor.is_cuda(), "record_stream: expected a CUDA tensor, got one on ", tensor.device());
  EMBER_CHECK(tensor.device().index == stream.device_index(), "record_stream: the tensor is on ", tensor.device(),
              " but the stream belongs to cuda:", stream.device_index());
  // The allocator's block starts where the storage does (a view may start further in).
  record_stream_use(tensor.impl()->storage()->data(), stream.device_index(), stream.handle());
}

void synchronize(int device) {
  if (device < 0) cuda_synchronize();
  else cuda_synchronize(device);
}

}  // namespace ember::cuda
