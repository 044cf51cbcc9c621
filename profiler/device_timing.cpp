// CUDA time per op: a pair of CUDA events around each op on a CUDA device,
// read once when the profile stops (Note [The profiler is a dispatch layer]
// in <ember/profiler.h>).
//
// Recording an event costs a few µs of host time and no wait; the events
// come from a pool per device that later profiles reuse. stop() waits for
// every device once (cuda_synchronize), after which cudaEventElapsedTime
// needs no further wait. To place an op on the device's timeline, the first
// op timed on a device in a session records a reference event just before
// its own and notes the host time: starting the session waited for the
// devices, so that event runs as soon as it is queued, and an op's device
// start is the reference's host time plus the time between the two events.
#include <algorithm>
#include <map>
#include <mutex>

#include "profiler/recorder.h"

namespace ember::profiler::detail {
namespace {

struct ReferenceEvent {
  cuda::Event event{true};
  int64_t host_ns = 0;  // since the session's origin, when it was recorded
};

struct DeviceClocks {
  std::mutex mutex;
  std::map<int, std::vector<cuda::Event>> pool;  // recorded events are bound to their device
  std::map<int, ReferenceEvent> reference;       // of the running session
};

DeviceClocks& clocks() {
  static auto* c = new DeviceClocks();  // leaked: events outlive static destructors harmlessly
  return *c;
}

cuda::Event take_locked(DeviceClocks& c, int device) {
  std::vector<cuda::Event>& free = c.pool[device];
  if (free.empty()) return cuda::Event(true);
  cuda::Event e = std::move(free.back());
  free.pop_back();
  return e;
}

double micros(float ms) { return static_cast<double>(ms) * 1000.0; }

}  // namespace

void start_device_timing() {
  if (cuda_is_available()) cuda_synchronize();
}

size_t begin_device_timing(ThreadBuffer& buffer, size_t index, int device) {
  const cuda::Stream stream = cuda::current_stream(device);
  DeviceTiming timing;
  timing.event = index;
  timing.device = device;
  timing.stream = stream.handle();
  DeviceClocks& c = clocks();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (!c.reference.count(device)) {
      ReferenceEvent& ref = c.reference[device];
      ref.event.record(stream);
      ref.host_ns = buffer.now_ns();
    }
    timing.start = take_locked(c, device);
    timing.end = take_locked(c, device);
  }
  timing.start.record(stream);
  std::lock_guard<std::mutex> lock(buffer.mutex);
  buffer.device_timings.push_back(std::move(timing));
  return buffer.device_timings.size() - 1;
}

void end_device_timing(ThreadBuffer& buffer, size_t slot) {
  std::lock_guard<std::mutex> lock(buffer.mutex);
  if (buffer.closed || slot >= buffer.device_timings.size()) return;  // stopped meanwhile: dropped
  DeviceTiming& t = buffer.device_timings[slot];
  t.end.record(cuda::current_stream(t.device));
  t.ended = true;
}

void resolve_device_timing(SessionResult& session) {
  DeviceClocks& c = clocks();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.reference.empty()) return;  // nothing was timed
  cuda_synchronize();  // the one wait: every event below has completed
  std::map<std::pair<int, void*>, int> stream_number;  // 0: the default stream; the rest in order of first use
  std::map<int, int> streams_of_device;
  for (auto& buffer : session.buffers) {
    std::vector<Event>& events = buffer->events;
    for (DeviceTiming& t : buffer->device_timings) {
      if (t.ended) {
        Event& e = events[t.event];
        e.device_time_us = micros(t.start.elapsed_time(t.end));
        e.self_device_time_us = e.device_time_us;
        const ReferenceEvent& ref = c.reference.at(t.device);
        e.device_start_us = static_cast<double>(ref.host_ns) / 1000.0 + micros(ref.event.elapsed_time(t.start));
        auto [it, added] = stream_number.try_emplace({t.device, t.stream}, 0);
        if (added && t.stream != nullptr) it->second = ++streams_of_device[t.device];
        e.device_stream = it->second;
      }
      std::vector<cuda::Event>& free = c.pool[t.device];
      free.push_back(std::move(t.start));
      free.push_back(std::move(t.end));
    }
    buffer->device_timings.clear();
    // Self time: minus the direct children's (parent_id is still the parent's index + 1).
    for (const Event& e : events) {
      if (e.device_stream < 0 || e.parent_id == 0) continue;
      Event& parent = events[e.parent_id - 1];
      if (parent.device_stream >= 0) parent.self_device_time_us -= e.device_time_us;
    }
    for (Event& e : events)
      if (e.device_stream >= 0) e.self_device_time_us = std::max(0.0, e.self_device_time_us);
  }
  c.reference.clear();
}

}  // namespace ember::profiler::detail
