// The profiler on CUDA (<ember/profiler.h>): CUDA time per op from events on
// its stream, the CUDA columns of the table and the trace's CUDA track, and
// the CUDA caching allocator in the memory profile. Skips without a GPU.
//
// In the emulation build CUDA events are stamped with the host's clock when
// the emulator reaches them in its queue, so device times there measure how
// long the emulator took to run the work between two events: positive for a
// kernel launch, as on a GPU, but no measure of a GPU's speed.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "ember/allocator.h"
#include "ember/cuda.h"
#include "ember/ember.h"
#include "ember/profiler.h"
#include "test_util.h"

namespace ember {
namespace {

using namespace cuda_testing;
namespace prof = ember::profiler;
using nlohmann::json;

// Float milliseconds from cudaEventElapsedTime, summed in double: allow a nanosecond.
constexpr double kSlackUs = 1e-3;

const prof::Event* find_top(const std::vector<prof::Event>& events, const std::string& name) {
  for (const prof::Event& e : events)
    if (e.parent_id == 0 && e.name == name) return &e;
  return nullptr;
}

// add, mm, sum, matmul (an mm) and a copy to the host.
struct CudaRun {
  Tensor x, w, added, product, total, chained, host;
};

CudaRun run_ops(const Tensor& x, const Tensor& w) {
  CudaRun r;
  r.added = x + w;
  r.product = mm(x, w);
  r.total = r.product.sum();
  r.chained = x.matmul(w);
  r.host = r.total.cpu();
  return r;
}

TEST(CudaProfiler, EveryCudaOpHasDeviceTimeAndNestingSums) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({48, 48}, kFloat32).cuda(), w = random_cpu({48, 48}, kFloat32).cuda();
  const CudaRun plain = run_ops(x, w);
  prof::Profile p;
  const CudaRun profiled = run_ops(x, w);
  p.stop();

  // Profiling changes no result, bit for bit.
  EXPECT_TRUE(bitwise_equal(profiled.added, plain.added));
  EXPECT_TRUE(bitwise_equal(profiled.product, plain.product));
  EXPECT_TRUE(bitwise_equal(profiled.total, plain.total));
  EXPECT_TRUE(bitwise_equal(profiled.chained, plain.chained));
  EXPECT_TRUE(bitwise_equal(profiled.host, plain.host));

  const std::vector<prof::Event>& events = p.events();
  for (const char* name : {"add", "mm", "sum"}) {  // each launches a kernel
    const prof::Event* e = find_top(events, name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_TRUE(e->device.is_cuda()) << name;
    EXPECT_EQ(e->device_stream, 0) << name;  // the default stream
    EXPECT_GT(e->device_time_us, 0.0) << name;
    EXPECT_GE(e->device_start_us, 0.0) << name;
  }
  // The copy to the host: timed on the device of its CUDA source (its first
  // tensor, the destination, is on the CPU).
  const prof::Event* copy = find_top(events, "copy_");
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(copy->device.is_cpu());
  EXPECT_EQ(copy->device_stream, 0);
  EXPECT_GE(copy->device_time_us, 0.0);

  const prof::Event* mm_call = find_top(events, "mm");  // its views of the operands nest inside it
  ASSERT_NE(mm_call, nullptr);
  size_t timed_children = 0;
  for (const prof::Event& e : events) {
    if (e.kind != prof::EventKind::Op) continue;
    if (e.device.is_cuda()) {
      ASSERT_GE(e.device_stream, 0) << e.name;  // every CUDA op is timed
    }
    if (e.device_stream < 0) continue;
    EXPECT_GE(e.device_time_us, 0.0) << e.name;
    EXPECT_GE(e.self_device_time_us, 0.0) << e.name;
    // Self = total minus the direct children's totals (clamped at zero).
    double children = 0;
    for (const prof::Event& c : events)
      if (c.parent_id == e.id && c.device_stream >= 0) children += c.device_time_us;
    EXPECT_LE(children, e.device_time_us + kSlackUs) << e.name;
    EXPECT_NEAR(e.self_device_time_us, std::max(0.0, e.device_time_us - children), kSlackUs) << e.name;
    // A child's kernels run inside its parent's events on the stream.
    if (e.parent_id == mm_call->id) {
      ++timed_children;
      EXPECT_GE(e.device_start_us + kSlackUs, mm_call->device_start_us) << e.name;
      EXPECT_LE(e.device_start_us + e.device_time_us, mm_call->device_start_us + mm_call->device_time_us + kSlackUs)
          << e.name;
    }
  }
  EXPECT_GE(timed_children, 1u);
}

TEST(CudaProfiler, TableHasTheCudaColumns) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({32, 32}, kFloat32).cuda(), w = random_cpu({32, 32}, kFloat32).cuda();
  prof::Profile p;
  run_ops(x, w);
  p.stop();
  const prof::KeyAverages averages = p.key_averages();
  double self_sum = 0;
  for (const prof::KeyAverage& r : averages.rows()) {
    self_sum += r.self_device_time_us;
    if (r.name == "add" || r.name == "mm" || r.name == "sum") {
      EXPECT_GT(r.device_time_total_us, 0.0) << r.name;
      EXPECT_GE(r.device_count, 1) << r.name;
    }
  }
  EXPECT_GT(self_sum, 0.0);
  for (const char* sort_by : {"self_cuda_time", "cuda_time_total", "cuda_time", "self_cuda_time_total"}) {
    const std::string table = averages.table({.sort_by = sort_by});
    for (const char* column : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "Self CUDA time total: "})
      EXPECT_NE(table.find(column), std::string::npos) << column << "\n" << table;
  }
  // Largest CUDA total first.
  std::vector<const prof::KeyAverage*> rows;
  for (const prof::KeyAverage& r : averages.rows()) rows.push_back(&r);
  const std::string table = averages.table({.sort_by = "cuda_time_total", .row_limit = 1});
  const prof::KeyAverage* top = *std::max_element(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    return a->device_time_total_us < b->device_time_total_us;
  });
  EXPECT_NE(table.find(top->name), std::string::npos) << table;
}

TEST(CudaProfiler, ChromeTraceHasACudaStreamTrack) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({32, 32}, kFloat32).cuda(), w = random_cpu({32, 32}, kFloat32).cuda();
  prof::Profile p;
  run_ops(x, w);
  p.stop();
  const json trace = json::parse(p.chrome_trace_json());
  std::set<int64_t> cuda_pids;
  int64_t named_pid = -1, named_tid = -1;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name" && e.at("args").at("name") == "cuda:0")
      named_pid = e.at("pid").get<int64_t>();
    if (e.at("ph") == "M" && e.at("name") == "thread_name" && e.at("args").at("name") == "cuda stream 0")
      named_tid = e.at("tid").get<int64_t>();
  }
  ASSERT_GE(named_pid, 0);
  EXPECT_EQ(named_tid, 0);
  std::multiset<std::string> on_track, timed;
  for (const prof::Event& e : p.events())
    if (e.device_stream >= 0) timed.insert(e.name);
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("cat") != "cuda_op") continue;
    EXPECT_EQ(e.at("pid").get<int64_t>(), named_pid);
    EXPECT_EQ(e.at("tid").get<int64_t>(), 0);
    EXPECT_GE(e.at("ts").get<double>(), 0.0);
    EXPECT_GE(e.at("dur").get<double>(), 0.0);
    const prof::Event& op = p.events().at(e.at("args").at("id").get<size_t>() - 1);
    EXPECT_EQ(op.name, e.at("name").get<std::string>());
    EXPECT_NEAR(e.at("dur").get<double>(), op.device_time_us, kSlackUs);
    on_track.insert(op.name);
  }
  EXPECT_EQ(on_track, timed);
  EXPECT_EQ(on_track.count("mm"), 2u);  // its own call and the one inside matmul
}

TEST(CudaProfiler, MemoryTimelinePeakAndLiveBlocksPerDevice) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({64, 64}, kFloat32).cuda();  // 16 KiB, a multiple of the 512-byte block
  const int64_t block = 64 * 64 * 4;
  cuda_synchronize();
  Tensor kept;
  prof::Profile p({.profile_memory = true});
  {
    Tensor scratch = x * 2.0;  // +16 KiB on cuda:0, then freed: the device's peak
  }
  kept = x + 1.0;  // back to the same level: not a new peak (each scalar operand takes a block meanwhile)
  p.stop();
  const prof::MemoryProfile& m = p.memory();

  std::vector<prof::MemorySample> cuda;
  for (const prof::MemorySample& s : m.timeline)
    if (s.device == kCuda) cuda.push_back(s);
  ASSERT_GE(cuda.size(), 4u);  // the state at the start, scratch, its free, kept (and the scalar operands)
  int rises = 0, falls = 0;
  for (size_t i = 1; i < cuda.size(); ++i) {
    EXPECT_GE(cuda[i].time_ns, cuda[i - 1].time_ns);
    EXPECT_GE(cuda[i].reserved_bytes, cuda[i].allocated_bytes);
    const int64_t step = cuda[i].allocated_bytes - cuda[i - 1].allocated_bytes;
    if (step == block) ++rises;
    if (step == -block) ++falls;
  }
  EXPECT_EQ(rises, 2);
  EXPECT_EQ(falls, 1);
  EXPECT_EQ(cuda.back().allocated_bytes, cuda.front().allocated_bytes + block);

  int64_t highest = 0;
  for (const prof::MemorySample& s : cuda) highest = std::max(highest, s.allocated_bytes);
  EXPECT_GE(highest, cuda.front().allocated_bytes + block);
  const prof::MemoryPeak* peak = nullptr;
  for (const prof::MemoryPeak& pk : m.peaks)
    if (pk.device == kCuda) peak = &pk;
  ASSERT_NE(peak, nullptr);
  EXPECT_EQ(peak->allocated_bytes, highest);
  EXPECT_EQ(peak->op, "mul");
  ASSERT_FALSE(m.peaks.empty());
  EXPECT_TRUE(m.peaks.front().device.is_cpu());
  EXPECT_EQ(m.peak_allocated_bytes, m.peaks.front().allocated_bytes);  // the CPU's

  const prof::LiveAllocation* alive = nullptr;
  for (const prof::LiveAllocation& a : m.still_alive)
    if (a.device == kCuda) {
      EXPECT_EQ(alive, nullptr) << "a second live CUDA block";
      alive = &a;
    }
  ASSERT_NE(alive, nullptr);
  EXPECT_EQ(alive->bytes, block);
  EXPECT_EQ(alive->op, "add");
  EXPECT_EQ(alive->shape, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(alive->dtype, "float32");

  const json trace = json::parse(p.chrome_trace_json());
  bool counter = false;
  for (const json& e : trace.at("traceEvents"))
    if (e.at("ph") == "C" && e.at("name") == "Memory (cuda:0)") counter = true;
  EXPECT_TRUE(counter);
  EXPECT_EQ(trace.at("devicePeaks").at("cuda:0").at("op"), "mul");
}

TEST(CudaProfiler, AFreshDeviceStartsItsCounterAtZero) {
  REQUIRE_CUDA();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs a second device";
  const Device second = Device::cuda(1);
  cuda_synchronize();
  empty_cache(second);
  if (memory_stats(second).reserved_bytes != 0) GTEST_SKIP() << "cuda:1 holds memory already";
  prof::Profile p({.profile_memory = true});
  Tensor t = random_cpu({128}, kFloat32).to(second);
  p.stop();
  std::vector<prof::MemorySample> samples;
  for (const prof::MemorySample& s : p.memory().timeline)
    if (s.device == second) samples.push_back(s);
  ASSERT_GE(samples.size(), 2u);
  EXPECT_EQ(samples[0].allocated_bytes, 0);
  EXPECT_EQ(samples[0].reserved_bytes, 0);
  EXPECT_EQ(samples[1].allocated_bytes, 512);  // 128 floats in one 512-byte block
}

TEST(CudaProfiler, EachOfSeveralProfilesTimesItsOps) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({16}, kFloat32).cuda();
  for (int round = 0; round < 3; ++round) {
    prof::Profile p;
    Tensor y = x + x;
    p.stop();
    const prof::Event* add = find_top(p.events(), "add");
    ASSERT_NE(add, nullptr);
    EXPECT_GT(add->device_time_us, 0.0) << "round " << round;
  }
}

}  // namespace
}  // namespace ember
