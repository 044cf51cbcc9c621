// profile_memory: the allocator timeline, bytes per event, the peak and the
// blocks still alive at stop. The allocators call observe() through the hook
// in core/allocation_observer.h while a memory profile runs.
#include <algorithm>
#include <unordered_map>

#include "core/allocation_observer.h"
#include "ember/allocator.h"
#include "profiler/recorder.h"

namespace ember::profiler::detail {
namespace {

struct Tracker {
  std::mutex mutex;
  bool active = false;
  Clock::time_point origin;
  MemoryProfile profile;  // timeline and peak so far; still_alive filled at stop
  std::unordered_map<const void*, LiveAllocation> live;
};

Tracker& tracker() {
  static auto* t = new Tracker();  // leaked: blocks may be freed after static destructors
  return *t;
}

void observe(const ember::detail::AllocationEvent& event) {
  // Bytes go to the innermost open event of the thread that allocates or frees.
  std::string op;
  if (ThreadBuffer* buffer = current_buffer_any()) {
    std::lock_guard<std::mutex> lock(buffer->mutex);
    if (Event* e = buffer->closed ? nullptr : buffer->innermost_locked()) {
      op = e->name;
      if (event.bytes > 0) e->self_allocated_bytes += event.bytes;
      else e->self_freed_bytes -= event.bytes;
    }
  }
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (!t.active) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t.origin).count();
  t.profile.timeline.push_back({now, event.device, event.allocated_bytes, event.reserved_bytes});
  if (event.allocated_bytes > t.profile.peak_allocated_bytes) {
    t.profile.peak_allocated_bytes = event.allocated_bytes;
    t.profile.peak_time_ns = now;
    t.profile.peak_op = op;
  }
  if (event.bytes > 0) {
    LiveAllocation& block = t.live[event.ptr];
    block = LiveAllocation{};
    block.bytes = event.bytes;
    block.device = event.device;
    block.op = std::move(op);
    block.time_ns = now;
  } else {
    t.live.erase(event.ptr);
  }
}

}  // namespace

void start_memory_tracking(Clock::time_point origin) {
  Tracker& t = tracker();
  {
    std::lock_guard<std::mutex> lock(t.mutex);
    t.active = true;
    t.origin = origin;
    t.live.clear();
    const MemoryStats stats = memory_stats(Device::cpu());
    t.profile = MemoryProfile{};
    t.profile.timeline.push_back({0, Device::cpu(), stats.allocated_bytes, stats.reserved_bytes});
    t.profile.peak_allocated_bytes = stats.allocated_bytes;
  }
  ember::detail::set_allocation_observer(&observe);
}

MemoryProfile stop_memory_tracking() {
  ember::detail::set_allocation_observer(nullptr);
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.active = false;
  MemoryProfile result = std::move(t.profile);
  t.profile = MemoryProfile{};
  for (auto& [ptr, block] : t.live) result.still_alive.push_back(std::move(block));
  t.live.clear();
  std::sort(result.still_alive.begin(), result.still_alive.end(), [](const LiveAllocation& a, const LiveAllocation& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.time_ns < b.time_ns;
  });
  return result;
}

void annotate_allocation(const void* data, const std::vector<int64_t>& shape, std::string_view dtype) {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find(data);
  if (it == t.live.end() || !it->second.dtype.empty()) return;
  it->second.shape = shape;
  it->second.dtype = std::string(dtype);
}

}  // namespace ember::profiler::detail
