// Asking about CUDA devices. No CUDA headers or types: a program can include
// this whether or not ember was built with CUDA; without it (or without a
// device and driver) cuda_is_available() is false and cuda_device_count() 0.
//
//   if (ember::cuda_is_available()) {
//     ember::Tensor x = ember::randn({1024, 1024}).cuda();
//     ...
//     ember::cuda_synchronize();  // wait for the queued kernels (e.g. to time them)
//   }
//
// Memory of a device: ember::memory_stats(Device::cuda(1)) and
// ember::empty_cache(Device::cuda(1)) (<ember/allocator.h>) report on and free
// the caching allocator's memory of that device (cuda:1 here).
//
// Streams and events (libtorch's c10::cuda::CUDAStream / at::cuda::CUDAEvent):
//   ember::cuda::Stream side = ember::cuda::Stream::create();
//   {
//     ember::cuda::StreamGuard guard(side);   // ops of this thread queue on `side`
//     y = x.matmul(w);
//   }
//   ember::cuda::Event done;
//   done.record(side);
//   ember::cuda::current_stream().wait(done); // the default stream waits for it
//   ember::cuda::record_stream(y, ember::cuda::current_stream());
// A tensor used on a stream other than the one it was allocated on must be
// recorded there (record_stream), or its memory may be handed out again
// while that stream still reads it. docs/cuda.md says more.
#pragma once

namespace ember {

class Tensor;

// True when ember was built with CUDA and at least one device is usable.
bool cuda_is_available();
// Number of usable CUDA devices (0 without CUDA).
int cuda_device_count();
// The device new CUDA tensors are allocated on and kernels run on by default.
int cuda_current_device();
void cuda_set_device(int device);
// Blocks until all work queued on every device ember has used is done.
void cuda_synchronize();
// Blocks until all work queued on `device` is done.
void cuda_synchronize(int device);

// libtorch's spellings: torch::cuda::is_available(), device_count(), synchronize().
namespace cuda {
inline bool is_available() { return cuda_is_available(); }
inline int device_count() { return cuda_device_count(); }
inline void synchronize() { cuda_synchronize(); }

class Event;

// A queue of work on one device: work on one stream runs in order, work on
// different streams may overlap. A cheap handle; streams live until exit.
class Stream {
 public:
  // The default stream of `device` (-1: the current device). Work on it waits
  // for all earlier work of the device's other streams, and they wait for it.
  static Stream default_stream(int device = -1);
  // A stream from a per-device pool of 32, handed out in turn; it does not
  // synchronise with the default stream (only events order it).
  static Stream create(int device = -1);

  int device_index() const { return device_; }
  // The cudaStream_t, for code that calls CUDA libraries itself.
  void* handle() const { return handle_; }
  // True when all work queued on the stream so far is done.
  bool query() const;
  // Blocks until all work queued on the stream so far is done.
  void synchronize() const;
  // Work queued on this stream from now on waits until `event` has completed.
  void wait(const Event& event) const;

  bool operator==(const Stream& other) const { return handle_ == other.handle_ && device_ == other.device_; }
  bool operator!=(const Stream& other) const { return !(*this == other); }

 private:
  Stream(void* handle, int device) : handle_(handle), device_(device) {}
  void* handle_;
  int device_;
  friend Stream current_stream(int device);
};

// The stream this thread's ops on `device` (-1: the current device) queue on:
// the default stream unless set_current_stream or a StreamGuard chose another.
Stream current_stream(int device = -1);
// Makes `stream` the current stream of its device for this thread.
void set_current_stream(const Stream& stream);

// Makes `stream` (and its device) current for the guard's lifetime.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  Stream previous_;
  int previous_device_;
};

// A point in a stream's work: record it, then wait for it from the host or
// from another stream, or time the work between two events.
class Event {
 public:
  explicit Event(bool enable_timing = false);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // Marks the point after the work queued on `stream` so far.
  void record(const Stream& stream);
  void record();  // on the current stream
  // True when the recorded work is done (or nothing was recorded).
  bool query() const;
  void synchronize() const;
  // Milliseconds between this event and `end` (both recorded with timing, both complete).
  float elapsed_time(const Event& end) const;

 private:
  void* handle_ = nullptr;  // cudaEvent_t, created on first record
  int device_ = -1;
  bool timing_;
  friend class Stream;
};

// Blocks until all work on `device` (-1: every device ember used) is done.
void synchronize(int device);
// Marks `tensor`'s memory as used by work queued on `stream`: when the tensor
// is freed, its memory is handed out again only after that work is done.
void record_stream(const Tensor& tensor, const Stream& stream);
}  // namespace cuda

}  // namespace ember
