// Profile::export_chrome_trace: Chrome's trace event format, which Perfetto
// (ui.perfetto.dev) and chrome://tracing load. Timestamps and durations are
// microseconds with at most three decimals, so nanosecond nesting survives exactly.
#include <unistd.h>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "profiler/profile_result.h"
#include "serialize/safetensors_format.h"

namespace ember::profiler {
namespace {

using nlohmann::json;

// ns -> µs. The quotient is correctly rounded, so the shortest form that
// reads back as the same double (what dump() prints) has at most three decimals.
double micros(int64_t ns) { return static_cast<double>(ns) / 1000.0; }

json event_json(const Event& e, int64_t pid) {
  json args = json::object();
  args["id"] = e.id;
  if (e.kind == EventKind::Op) args["Device"] = e.device.str();
  if (e.sequence_nr >= 0) args["Sequence number"] = e.sequence_nr;
  if (e.forward_id) args["Forward op id"] = e.forward_id;
  if (!e.input_shapes.empty()) {
    args["Input Dims"] = e.input_shapes;
    args["Input type"] = e.input_dtypes;
  }
  if (e.allocated_bytes || e.freed_bytes) {
    args["Allocated bytes"] = e.allocated_bytes;
    args["Freed bytes"] = e.freed_bytes;
    args["Self allocated bytes"] = e.self_allocated_bytes;
    args["Self freed bytes"] = e.self_freed_bytes;
  }
  if (!e.stack.empty()) args["Stack"] = e.stack;
  return {{"ph", "X"},         {"cat", event_kind_name(e.kind)}, {"name", e.name},
          {"pid", pid},        {"tid", e.thread},                {"ts", micros(e.start_ns)},
          {"dur", micros(e.duration_ns())}, {"args", std::move(args)}};
}

// The CUDA track of an op timed on a device: a process per device ("cuda:0")
// with a thread per stream ("cuda stream 0"). Its pid lies above any Linux
// pid (at most 2^22), so it never meets a host process's.
constexpr int64_t kCudaPidBase = int64_t{1} << 30;

int64_t nanos(double us) { return std::llround(us * 1000.0); }

json device_event_json(const Event& e) {
  json args = {{"id", e.id}, {"Device", e.device.str()}, {"Self CUDA time us", e.self_device_time_us}};
  return {{"ph", "X"},
          {"cat", "cuda_op"},
          {"name", e.name},
          {"pid", kCudaPidBase + e.device.index},
          {"tid", e.device_stream},
          {"ts", micros(nanos(e.device_start_us))},
          {"dur", micros(nanos(e.device_time_us))},
          {"args", std::move(args)}};
}

}  // namespace

std::string Profile::chrome_trace_json() const {
  check_stopped("export_chrome_trace");
  const int64_t pid = ::getpid();
  json trace = json::array();
  trace.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", "ember"}}}});
  for (const auto& [tid, name] : result_->thread_names)
    trace.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  std::map<uint64_t, const Event*> by_id;
  std::set<std::pair<int, int>> device_tracks;  // (device, stream)
  for (const Event& e : result_->events) {
    trace.push_back(event_json(e, pid));
    by_id[e.id] = &e;
    if (e.device_stream >= 0) {
      trace.push_back(device_event_json(e));
      device_tracks.emplace(e.device.index, e.device_stream);
    }
  }
  std::set<int> devices;
  for (const auto& [device, stream] : device_tracks) {
    if (devices.insert(device).second)
      trace.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kCudaPidBase + device}, {"tid", 0},
                       {"args", {{"name", Device::cuda(device).str()}}}});
    trace.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", kCudaPidBase + device}, {"tid", stream},
                     {"args", {{"name", "cuda stream " + std::to_string(stream)}}}});
  }
  // An arrow from each op to the backward node it recorded.
  for (const Event& e : result_->events) {
    if (!e.forward_id) continue;
    const Event& op = *by_id.at(e.forward_id);
    trace.push_back({{"ph", "s"}, {"cat", "fwdbwd"}, {"name", "fwdbwd"}, {"id", e.sequence_nr}, {"pid", pid},
                     {"tid", op.thread}, {"ts", micros(op.start_ns)}});
    trace.push_back({{"ph", "f"}, {"bp", "e"}, {"cat", "fwdbwd"}, {"name", "fwdbwd"}, {"id", e.sequence_nr},
                     {"pid", pid}, {"tid", e.thread}, {"ts", micros(e.start_ns)}});
  }
  for (const MemorySample& s : result_->memory.timeline) {
    trace.push_back({{"ph", "C"}, {"name", "Memory (" + s.device.str() + ")"}, {"pid", pid}, {"tid", 0},
                     {"ts", micros(s.time_ns)},
                     {"args", {{"allocated", s.allocated_bytes}, {"reserved", s.reserved_bytes}}}});
  }
  json doc = {{"traceEvents", std::move(trace)}, {"displayTimeUnit", "ms"}};
  if (options_.profile_memory) {
    doc["peakAllocatedBytes"] = result_->memory.peak_allocated_bytes;
    doc["peakOp"] = result_->memory.peak_op;
    for (const MemoryPeak& p : result_->memory.peaks) {
      if (!p.device.is_cuda()) continue;
      doc["devicePeaks"][p.device.str()] = {{"allocatedBytes", p.allocated_bytes}, {"op", p.op}};
    }
  }
  return doc.dump();
}

void Profile::export_chrome_trace(const std::string& path) const {
  const std::string text = chrome_trace_json();
  serialize::write_file_atomic(path, reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

}  // namespace ember::profiler
