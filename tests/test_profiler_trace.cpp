// The profiler's Chrome trace (Profile::export_chrome_trace) and memory
// profile (ProfileOptions::profile_memory).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "ember/allocator.h"
#include "ember/profiler.h"
#include "tests/test_util.h"

namespace ember {
namespace {

namespace prof = ember::profiler;
using nlohmann::json;

int64_t ns(const json& micros) { return std::llround(micros.get<double>() * 1000.0); }

struct TempDir {
  std::filesystem::path path;
  TempDir() : path(std::filesystem::temp_directory_path() / ("ember_profiler_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// A profile with nesting on two threads, a backward pass and memory.
prof::Profile& sample_profile() {
  static prof::Profile* p = [] {
    auto* profile = new prof::Profile({.record_shapes = true, .profile_memory = true});
    Tensor x = ones({16, 16}).requires_grad_();
    {
      prof::Range r("forward");
      Tensor y = x.matmul(x).relu().sum();
      y.backward();
    }
    std::thread worker([] {
      prof::ThreadGuard guard("worker");
      prof::Range r("work");
      Tensor z = ones({4}) * 2.0;
    });
    worker.join();
    profile->stop();
    return profile;
  }();
  return *p;
}

TEST(ProfilerTrace, IsValidChromeTraceJson) {
  TempDir dir;
  const auto path = dir.path / "trace.json";
  const prof::Profile& p = sample_profile();
  p.export_chrome_trace(path.string());
  const json doc = read_json(path);
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::map<std::string, int> phases;
  std::set<uint64_t> named_threads, used_threads;
  for (const json& e : doc["traceEvents"]) {
    const std::string ph = e.at("ph");
    ++phases[ph];
    EXPECT_TRUE(e.contains("pid") && e.contains("name")) << e.dump();
    if (ph == "X") {
      for (const char* key : {"cat", "tid", "ts", "dur", "args"}) EXPECT_TRUE(e.contains(key)) << key << e.dump();
      EXPECT_GE(e["dur"].get<double>(), 0.0);
      used_threads.insert(e["tid"].get<uint64_t>());
    }
    if (ph == "M" && e["name"] == "thread_name") named_threads.insert(e["tid"].get<uint64_t>());
    if (ph == "C") {
      EXPECT_GE(e["args"]["reserved"].get<int64_t>(), e["args"]["allocated"].get<int64_t>());
    }
  }
  EXPECT_EQ(phases["X"], static_cast<int>(p.events().size()));
  EXPECT_GT(phases["C"], 0);
  EXPECT_GT(phases["s"], 0);
  EXPECT_EQ(phases["s"], phases["f"]);
  EXPECT_EQ(used_threads.size(), 2u);
  EXPECT_EQ(named_threads, used_threads);
  // Nothing beside the trace: the write went through a temporary file.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path), std::filesystem::directory_iterator()), 1);
}

TEST(ProfilerTrace, ChildrenNestInsideParentsOnEachThread) {
  const prof::Profile& p = sample_profile();
  const json doc = json::parse(p.chrome_trace_json());
  struct Span {
    int64_t start, end;
    uint64_t tid;
  };
  std::map<uint64_t, Span> by_id;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "X") by_id[e["args"]["id"]] = {ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["tid"]};
  ASSERT_EQ(by_id.size(), p.events().size());
  for (const prof::Event& e : p.events()) {
    const Span& s = by_id.at(e.id);
    EXPECT_EQ(s.start, e.start_ns) << e.name;  // round trip, to the nanosecond
    EXPECT_EQ(s.end, e.end_ns) << e.name;
    if (e.parent_id == 0) continue;
    const Span& parent = by_id.at(e.parent_id);
    EXPECT_EQ(parent.tid, s.tid) << e.name;
    EXPECT_GE(s.start, parent.start) << e.name;
    EXPECT_LE(s.end, parent.end) << e.name;
  }
  // Sibling events on a thread do not overlap.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<Span>> siblings;  // (tid, parent) -> spans
  for (const prof::Event& e : p.events()) siblings[{e.thread, e.parent_id}].push_back(by_id.at(e.id));
  for (auto& [key, spans] : siblings) {
    std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    for (size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].end, spans[i].start);
  }
}

TEST(ProfilerTrace, FlowEventsJoinOpsToTheirBackwardNodes) {
  const prof::Profile& p = sample_profile();
  const json doc = json::parse(p.chrome_trace_json());
  std::map<int64_t, std::string> start_of_flow;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "cpu_op" && e["args"].contains("Sequence number"))
      start_of_flow[e["args"]["Sequence number"]] = e["name"];
  }
  int backward = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "autograd" || !e["args"].contains("Forward op id")) continue;
    ++backward;
    const std::string op = start_of_flow.at(e["args"]["Sequence number"]);
    if (e["name"] == "MmBackward") {
      EXPECT_EQ(op, "mm");
    }
    if (e["name"] == "ReluBackward") {
      EXPECT_EQ(op, "relu");
    }
  }
  EXPECT_GE(backward, 3);  // sum, relu, the product
}

TEST(ProfilerTrace, BadPathIsAnError) {
  EXPECT_EMBER_ERROR(sample_profile().export_chrome_trace("/nonexistent-dir/trace.json"), "trace.json");
}

TEST(ProfilerMemory, CountsBytesPerOpThePeakAndWhatStaysAlive) {
  Tensor a = ones({256, 256});  // 256 KiB
  Tensor kept;
  prof::Profile p({.profile_memory = true});
  {
    prof::Range r("scratch");
    Tensor t = a * a;  // freed at the end of the range
  }
  kept = a + a;
  p.stop();
  const prof::MemoryProfile& m = p.memory();
  const int64_t block = 256 * 256 * 4;
  bool found = false;
  for (const prof::Event& e : p.events()) {
    if (e.name == "mul" || e.name == "add") {
      EXPECT_EQ(e.self_allocated_bytes, block) << e.name;
    }
    if (e.name == "scratch") {
      EXPECT_EQ(e.allocated_bytes, block);  // the mul inside it
      EXPECT_EQ(e.self_freed_bytes, block);  // t dies in the range itself
      found = true;
    }
  }
  EXPECT_TRUE(found);
  ASSERT_GE(m.timeline.size(), 4u);  // start, mul, free, add
  for (size_t i = 1; i < m.timeline.size(); ++i) EXPECT_GE(m.timeline[i].time_ns, m.timeline[i - 1].time_ns);
  for (const prof::MemorySample& s : m.timeline) EXPECT_GE(s.reserved_bytes, s.allocated_bytes);
  EXPECT_EQ(m.peak_allocated_bytes, m.timeline.front().allocated_bytes + block);
  EXPECT_TRUE(m.peak_op == "mul" || m.peak_op == "add") << m.peak_op;
  ASSERT_EQ(m.still_alive.size(), 1u);
  EXPECT_EQ(m.still_alive[0].bytes, block);
  EXPECT_EQ(m.still_alive[0].op, "add");
  EXPECT_EQ(m.still_alive[0].shape, (std::vector<int64_t>{256, 256}));
  EXPECT_EQ(m.still_alive[0].dtype, "float32");
  const std::string table = p.key_averages().table();
  EXPECT_NE(table.find("Self CPU Mem"), std::string::npos) << table;
  EXPECT_NE(table.find("256.00 Kb"), std::string::npos) << table;
}

TEST(ProfilerTrace, ACpuOnlyProfileHasNoCudaColumnsOrTrack) {
  prof::Profile p({.profile_memory = true});
  Tensor t = ones({8, 8}).matmul(ones({8, 8})).sum();
  p.stop();
  for (const prof::Event& e : p.events()) {
    EXPECT_EQ(e.device_stream, -1) << e.name;
    EXPECT_EQ(e.device_time_us, 0.0) << e.name;
  }
  const std::string table = p.key_averages().table();
  EXPECT_EQ(table.find("CUDA"), std::string::npos) << table;
  const std::string trace = p.chrome_trace_json();
  EXPECT_EQ(trace.find("cuda"), std::string::npos);
  ASSERT_EQ(p.memory().peaks.size(), 1u);
  EXPECT_TRUE(p.memory().peaks[0].device.is_cpu());
  EXPECT_EQ(p.memory().peaks[0].allocated_bytes, p.memory().peak_allocated_bytes);
}

TEST(ProfilerMemory, NothingIsTrackedWithoutTheOption) {
  prof::Profile p;
  Tensor t = ones({1000}) * 3.0;
  p.stop();
  EXPECT_TRUE(p.memory().timeline.empty());
  for (const prof::Event& e : p.events()) EXPECT_EQ(e.self_allocated_bytes, 0);
}

}  // namespace
}  // namespace ember
