// The profiler's recording state (Note [The profiler is a dispatch layer] in
// <ember/profiler.h>): the running session and each thread's event buffer.
//
// A thread finds its buffer through a thread-local slot tagged with the
// session's generation; a slot from an earlier session is stale and the
// thread registers a fresh buffer. Buffers are shared between the thread and
// the session, so a worker that still writes after stop() writes into a
// buffer marked closed, which drops the write.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ember/cuda.h"
#include "ember/profiler.h"

namespace ember::profiler::detail {

using Clock = std::chrono::steady_clock;

// The CUDA events around one op on a CUDA device (device_timing.cpp).
struct DeviceTiming {
  size_t event = 0;  // its index in the buffer
  int device = 0;
  void* stream = nullptr;  // the cudaStream_t both were recorded on
  cuda::Event start{true}, end{true};
  bool ended = false;  // false: the op threw, and the pair is dropped
};

struct ThreadBuffer {
  std::mutex mutex;
  bool closed = false;
  uint64_t thread = 0;  // OS thread id
  std::string name;
  Clock::time_point origin;
  ProfileOptions options;
  std::vector<Event> events;  // parent_id holds the parent's index + 1 until the merge
  std::vector<size_t> open;   // indices of the open events, innermost last
  // The backward node the latest op event to end claimed: an op whose result
  // came from a nested op (a dispatched op called inside a kernel) leaves
  // the link to that inner op.
  int64_t last_claimed_node = -1;
  std::vector<DeviceTiming> device_timings;  // in the order the ops started

  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin).count();
  }
  // Opens an event (the lock is held); returns its index.
  size_t begin_locked(std::string_view name, EventKind kind, int64_t start_ns);
  // Closes event `index` and any still open inside it (the lock is held).
  void end_locked(size_t index, int64_t end_ns);
  // The innermost open event, or null (the lock is held).
  Event* innermost_locked() { return open.empty() ? nullptr : &events[open.back()]; }
};

// The buffer of the calling thread in the running session, or null when no
// session runs or this thread does not record (its Profiler key is off).
ThreadBuffer* current_buffer();
// The same for any thread that records in the running session, the Profiler
// key aside (the allocator hook asks on every thread).
ThreadBuffer* current_buffer_any();

// Sessions (profile.cpp).
struct SessionResult {
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};
// Starts a session; the calling thread (named `thread_name`) records.
void start_session(const ProfileOptions& options, std::string_view thread_name);
// Ends it: every buffer closed, open events ended now.
SessionResult stop_session();
// Registers the calling thread in the running session under `name`
// (ThreadGuard); false when none runs.
bool join_session(std::string_view name);

uint64_t os_thread_id();

// CUDA time (device_timing.cpp). Starting a session waits for the devices, so
// that the reference events recorded during it meet empty queues.
void start_device_timing();
// Records the start event of buffer event `index` (an op on CUDA `device`) on
// the device's current stream; returns the slot for end_device_timing.
size_t begin_device_timing(ThreadBuffer& buffer, size_t index, int device);
void end_device_timing(ThreadBuffer& buffer, size_t slot);
// After stop_session: one wait for the devices, then each timed event's
// device_time_us, self_device_time_us, device_start_us and device_stream;
// the events go back to the pool.
void resolve_device_timing(SessionResult& session);

// Memory (memory_tracker.cpp).
void start_memory_tracking(Clock::time_point origin);
MemoryProfile stop_memory_tracking();
// Gives the live block at `data` (an op output's storage) its shape and dtype.
void annotate_allocation(Device device, const void* data, const std::vector<int64_t>& shape, std::string_view dtype);

}  // namespace ember::profiler::detail
