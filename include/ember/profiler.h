// ember::profiler: where time and memory go, op by op.
//
//   ember::profiler::Profile p({.record_shapes = true, .profile_memory = true});
//   {
//     ember::profiler::Range r("forward");
//     loss = model->forward(x).sum();
//   }
//   loss.backward();
//   p.stop();
//   std::cout << p.key_averages().table({.sort_by = "self_cpu_time", .row_limit = 20});
//   p.export_chrome_trace("trace.json");  // open in Perfetto or chrome://tracing
//
// Note [The profiler is a dispatch layer]
// A running Profile adds DispatchKey::Profiler (the highest key) to the
// thread-local included keys of the thread that started it. Every op called
// on that thread then reaches one boxed kernel, which opens an event, runs
// the op below itself, and closes the event: ops called inside the op (a
// backward formula's ops, a composite's parts) nest as children. Backward
// nodes, user ranges, DataLoader waits and optimiser steps are events too.
// Self time is an event's time minus its direct children's. With no profile
// running the key is in no set, so ops pay nothing; the other hooks (autograd
// engine, allocator, ranges) test one relaxed atomic.
// Each thread records into its own buffer; stop() merges them. A thread that
// runs ops for the profiled one (a DataLoader worker) joins with ThreadGuard.
// An op on a CUDA device also records two CUDA events (from a pool) on its
// device's current stream, around the call; stop() waits for the devices once
// and reads the times between them (Event::device_time_us).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ember/device.h"

namespace ember::profiler {

struct ProfileOptions {
  bool record_shapes = false;   // input shapes and dtypes of every op
  bool profile_memory = false;  // allocator timeline, bytes per op, peak, tensors still alive at stop
  // The names of the events enclosing each event ("ProfilerStep#3 > forward > linear"):
  // the C++ counterpart of a Python stack.
  bool with_stack = false;
};

enum class EventKind : uint8_t { Op, Backward, UserRange, DataLoader, Optimizer };
const char* event_kind_name(EventKind kind);  // "cpu_op", "autograd", "user_annotation", "dataloader", "optimizer"

// One recorded call. Times are nanoseconds since the profile started.
struct Event {
  uint64_t id = 0;         // 1, 2, ... in Profile::events() order
  uint64_t parent_id = 0;  // the enclosing event on the same thread; 0 at the top
  std::string name;        // op name ("add"), node name ("MulBackward"), range name
  EventKind kind = EventKind::Op;
  uint64_t thread = 0;     // the OS thread id
  int64_t start_ns = 0, end_ns = 0;
  int64_t self_ns = 0;     // end - start minus the direct children's durations
  Device device;           // an op's first tensor's device (CPU for the rest)
  // Autograd: an op that recorded a backward node and that node's event carry
  // the node's sequence number; the node's event names the op's in forward_id.
  int64_t sequence_nr = -1;
  uint64_t forward_id = 0;
  // record_shapes: one entry per tensor input (each element of a Tensor[]
  // argument) and per other argument (empty shape, dtype "Scalar", "int", ...).
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<std::string> input_dtypes;
  // profile_memory: bytes the CPU allocator handed out and took back while
  // this event was the innermost one on its thread, and with its children
  // (CUDA memory is in Profile::memory()).
  int64_t self_allocated_bytes = 0, self_freed_bytes = 0;
  int64_t allocated_bytes = 0, freed_bytes = 0;
  std::string stack;  // with_stack
  // An op with a CUDA tensor argument (the first one's device: a copy to the
  // host is timed on its source's): the time between CUDA events recorded on its
  // stream before and after it (its kernels and its children's), in µs;
  // self time leaves out its direct children's. device_stream is -1 for an
  // event that was not timed, else the stream (0: the default stream, 1, 2,
  // ... the others in order of first use); device_start_us places it on the
  // device's timeline (µs since the profile started, through a reference
  // event recorded when the device was first timed).
  int device_stream = -1;
  double device_time_us = 0, self_device_time_us = 0, device_start_us = 0;

  int64_t duration_ns() const { return end_ns - start_ns; }
};

// The allocator's state after one allocation or free (profile_memory).
struct MemorySample {
  int64_t time_ns = 0;
  Device device;
  int64_t allocated_bytes = 0;  // in use by tensors, the whole process
  int64_t reserved_bytes = 0;   // in use + cached by the allocator
};

// A block allocated while profiling and not freed by stop(): a tensor the
// region left alive (an intended result, or a leak).
struct LiveAllocation {
  int64_t bytes = 0;
  Device device;
  std::string op;          // the innermost event when it was allocated ("" outside any)
  int64_t time_ns = 0;
  std::vector<int64_t> shape;  // of the first op output that used it (empty if none did)
  std::string dtype;
};

// The highest point of one device's allocated bytes.
struct MemoryPeak {
  Device device;
  int64_t allocated_bytes = 0;
  int64_t time_ns = 0;
  std::string op;  // innermost event at the peak ("" outside any, or before the first event)
};

struct MemoryProfile {
  std::vector<MemorySample> timeline;  // in time order, every device's samples
  // The CPU's peak (the highest CPU allocated_bytes of the timeline).
  int64_t peak_allocated_bytes = 0;
  int64_t peak_time_ns = 0;
  std::string peak_op;
  std::vector<MemoryPeak> peaks;            // per device: the CPU first, then CUDA devices as they appear
  std::vector<LiveAllocation> still_alive;  // every device's, largest first
};

// Events grouped by name (and input shapes, when asked for).
struct KeyAverage {
  std::string name;
  std::string input_shapes;  // "[[2, 3], [3]]" when grouped by shape, else ""
  EventKind kind = EventKind::Op;
  int64_t count = 0;
  int64_t self_ns = 0;
  int64_t total_ns = 0;     // children included (an event nested in one of the same name counts twice)
  int64_t self_memory_bytes = 0;  // allocated - freed, own
  int64_t memory_bytes = 0;       // allocated - freed, children included
  double self_device_time_us = 0;   // CUDA time (Event::self_device_time_us, device_time_us)
  double device_time_total_us = 0;
  int64_t device_count = 0;         // calls that were timed on a device
  double device_average_us() const { return device_count ? device_time_total_us / static_cast<double>(device_count) : 0; }
  double average_ns() const { return count ? static_cast<double>(total_ns) / static_cast<double>(count) : 0; }
};

struct TableOptions {
  // self_cpu_time (or self_cpu_time_total), cpu_time_total, cpu_time (the
  // average), count, self_cpu_memory_usage, cpu_memory_usage, self_cuda_time
  // (or self_cuda_time_total), cuda_time_total, cuda_time (the average);
  // largest first.
  std::string sort_by = "self_cpu_time";
  int64_t row_limit = 100;  // a negative limit prints every row
};

class KeyAverages {
 public:
  KeyAverages(std::vector<KeyAverage> rows, bool with_shapes, bool with_memory, bool with_device = false);
  const std::vector<KeyAverage>& rows() const { return rows_; }
  // PyTorch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU
  // time avg, (Self CUDA, Self CUDA %, CUDA total, CUDA time avg,) (CPU Mem,
  // Self CPU Mem,) # of Calls(, Input Shapes); the CUDA columns appear when
  // an op was timed on a CUDA device. Percentages are of the sum of all self
  // times (CPU or CUDA). An unknown sort_by is an ember::Error listing the
  // known ones.
  std::string table(const TableOptions& options = {}) const;

 private:
  std::vector<KeyAverage> rows_;
  bool with_shapes_, with_memory_, with_device_;
};

class Profile {
 public:
  // Starts profiling this thread. One profile runs at a time in a process;
  // starting a second is an ember::Error.
  explicit Profile(ProfileOptions options = {}, bool start_now = true);
  ~Profile();  // stops, if running
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  void start();  // clears what an earlier start()/stop() recorded
  void stop();   // on the thread that started it; ranges still open end here
  bool running() const { return running_; }
  const ProfileOptions& options() const { return options_; }

  // After stop(); an ember::Error while running.
  const std::vector<Event>& events() const;
  KeyAverages key_averages(bool group_by_input_shape = false) const;
  const MemoryProfile& memory() const;  // empty unless profile_memory
  std::string thread_name(uint64_t thread) const;
  // Chrome's trace event format (Perfetto, chrome://tracing): an X event per
  // event, M events naming the process and threads, s/f flow events from an
  // op to its backward node, C events for the memory timeline, and an X
  // event per CUDA-timed op on a "cuda stream N" track of a "cuda:D"
  // process. Written
  // atomically: a reader sees the old file or the whole new one.
  void export_chrome_trace(const std::string& path) const;
  std::string chrome_trace_json() const;

  struct Result;  // what stop() collected (defined inside the library)

 private:
  void check_stopped(const char* what) const;

  ProfileOptions options_;
  bool running_ = false;
  uint64_t owner_thread_ = 0;
  bool key_was_included_ = false;  // the starting thread's Profiler key before start()
  std::unique_ptr<Result> result_;
};

namespace detail {
extern std::atomic<bool> g_profiling;
uint64_t begin_range(std::string_view name, EventKind kind, int64_t sequence_nr);
void end_range(uint64_t token);
}  // namespace detail

// Whether a profile is running in this process (any thread).
inline bool is_profiling() { return detail::g_profiling.load(std::memory_order_relaxed); }

// A named span of the calling thread's work (like torch.profiler.record_function);
// recorded only while a profile records this thread.
class Range {
 public:
  explicit Range(std::string_view name, EventKind kind = EventKind::UserRange, int64_t sequence_nr = -1)
      : token_(is_profiling() ? detail::begin_range(name, kind, sequence_nr) : 0) {}
  ~Range() {
    if (token_) detail::end_range(token_);
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;

 private:
  uint64_t token_;
};

// Records the calling thread's ops and ranges into the running profile while
// the guard lives (for threads that work for the profiled thread); does
// nothing when no profile runs. `name` names the thread in the trace.
class ThreadGuard {
 public:
  explicit ThreadGuard(std::string_view name);
  ~ThreadGuard();
  ThreadGuard(const ThreadGuard&) = delete;
  ThreadGuard& operator=(const ThreadGuard&) = delete;

 private:
  bool joined_ = false;
  bool key_was_included_ = false;
};

}  // namespace ember::profiler
