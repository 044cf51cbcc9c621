// profile_memory: the allocator timeline, bytes per event, the peaks and the
// blocks still alive at stop. The allocators (the CPU one and each CUDA
// device's caching allocator) call observe() through the hook in
// core/allocation_observer.h while a memory profile runs. Bytes per event are
// the CPU's; the timeline, the peaks and the live blocks cover every device.
#include <algorithm>
#include <map>

#include "core/allocation_observer.h"
#include "ember/allocator.h"
#include "ember/cuda.h"
#include "profiler/recorder.h"

namespace ember::profiler::detail {
namespace {

struct Tracker {
  std::mutex mutex;
  bool active = false;
  Clock::time_point origin;
  MemoryProfile profile;  // timeline and peaks so far; still_alive filled at stop
  std::vector<MemorySample> cuda_baselines;  // each CUDA device's state at the start
  // Blocks by device and address (two devices' blocks may share an address).
  std::map<std::pair<int, const void*>, LiveAllocation> live;
};

int device_key(Device d) { return static_cast<int>(d.type) << 8 | d.index; }

MemoryPeak& peak_of(MemoryProfile& profile, Device device) {
  for (MemoryPeak& p : profile.peaks)
    if (p.device == device) return p;
  MemoryPeak& p = profile.peaks.emplace_back();
  p.device = device;
  return p;
}

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
      if (event.device.is_cpu()) {
        if (event.bytes > 0) e->self_allocated_bytes += event.bytes;
        else e->self_freed_bytes -= event.bytes;
      }
    }
  }
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  if (!t.active) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t.origin).count();
  const bool first = std::none_of(t.profile.peaks.begin(), t.profile.peaks.end(),
                                  [&](const MemoryPeak& p) { return p.device == event.device; });
  if (first) {  // a CUDA device's first event: its state at the start opens its counter
    MemorySample start{now, event.device, 0, 0};
    for (const MemorySample& b : t.cuda_baselines)
      if (b.device == event.device) start = {now, b.device, b.allocated_bytes, b.reserved_bytes};
    t.profile.timeline.push_back(start);
    peak_of(t.profile, event.device).allocated_bytes = start.allocated_bytes;
  }
  t.profile.timeline.push_back({now, event.device, event.allocated_bytes, event.reserved_bytes});
  MemoryPeak& peak = peak_of(t.profile, event.device);
  if (event.allocated_bytes > peak.allocated_bytes) {
    peak.allocated_bytes = event.allocated_bytes;
    peak.time_ns = now;
    peak.op = op;
  }
  if (event.bytes > 0) {
    LiveAllocation& block = t.live[{device_key(event.device), event.ptr}];
    block = LiveAllocation{};
    block.bytes = event.bytes;
    block.device = event.device;
    block.op = std::move(op);
    block.time_ns = now;
  } else {
    t.live.erase({device_key(event.device), event.ptr});
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
    t.profile = MemoryProfile{};
    const MemoryStats stats = memory_stats(Device::cpu());
    t.profile.timeline.push_back({0, Device::cpu(), stats.allocated_bytes, stats.reserved_bytes});
    peak_of(t.profile, Device::cpu()).allocated_bytes = stats.allocated_bytes;
    // A CUDA device enters the timeline and the peaks only when it allocates
    // or frees in the profile (a CPU-only profile shows no CUDA memory).
    t.cuda_baselines.clear();
    for (int d = 0; d < cuda_device_count(); ++d) {
      const MemoryStats s = memory_stats(Device::cuda(d));
      t.cuda_baselines.push_back({0, Device::cuda(d), s.allocated_bytes, s.reserved_bytes});
    }
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
  const MemoryPeak& cpu = peak_of(result, Device::cpu());
  result.peak_allocated_bytes = cpu.allocated_bytes;
  result.peak_time_ns = cpu.time_ns;
  result.peak_op = cpu.op;
  for (auto& [ptr, block] : t.live) result.still_alive.push_back(std::move(block));
  t.live.clear();
  std::sort(result.still_alive.begin(), result.still_alive.end(), [](const LiveAllocation& a, const LiveAllocation& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes : a.time_ns < b.time_ns;
  });
  return result;
}

void annotate_allocation(Device device, const void* data, const std::vector<int64_t>& shape, std::string_view dtype) {
  Tracker& t = tracker();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.live.find({device_key(device), data});
  if (it == t.live.end() || !it->second.dtype.empty()) return;
  it->second.shape = shape;
  it->second.dtype = std::string(dtype);
}

}  // namespace ember::profiler::detail
