// The profiler (<ember/profiler.h>): op events, nesting and self time,
// ranges, backward nodes linked to their ops, threads, key averages.
#include <cstring>
#include <map>
#include <thread>

#include "ember/data.h"
#include "ember/nn.h"
#include "ember/optim.h"
#include "ember/profiler.h"
#include "tests/test_util.h"

namespace ember {
namespace {

namespace prof = ember::profiler;

std::vector<const prof::Event*> children_of(const std::vector<prof::Event>& events, uint64_t id) {
  std::vector<const prof::Event*> out;
  for (const prof::Event& e : events)
    if (e.parent_id == id) out.push_back(&e);
  return out;
}

std::vector<std::string> top_level_names(const std::vector<prof::Event>& events) {
  std::vector<std::string> names;
  for (const prof::Event& e : events)
    if (e.parent_id == 0) names.push_back(e.name);
  return names;
}

const prof::Event* find(const std::vector<prof::Event>& events, const std::string& name) {
  for (const prof::Event& e : events)
    if (e.name == name) return &e;
  return nullptr;
}

TEST(Profiler, RecordsEachOpCallInOrder) {
  Tensor a = ones({2, 3}), b = full({2, 3}, 2.0);
  prof::Profile p;
  Tensor c = a + b;
  Tensor d = c * b;
  Tensor e = d.relu();
  Tensor s = e.sum();
  p.stop();
  const auto& events = p.events();
  EXPECT_EQ(top_level_names(events), (std::vector<std::string>{"add", "mul", "relu", "sum"}));
  int64_t previous_end = 0;
  for (const prof::Event& ev : events) {
    EXPECT_EQ(ev.kind, prof::EventKind::Op);
    EXPECT_TRUE(ev.device.is_cpu());
    EXPECT_GT(ev.duration_ns(), 0) << ev.name;
    EXPECT_GE(ev.start_ns, previous_end) << ev.name;
    previous_end = ev.end_ns;
  }
  EXPECT_EQ(s.item<float>(), 36.0f);
}

TEST(Profiler, NoEventsOutsideTheProfile) {
  Tensor a = ones({2});
  prof::Profile p(prof::ProfileOptions{}, /*start_now=*/false);
  Tensor before = a + a;
  p.start();
  Tensor inside = a * a;
  p.stop();
  Tensor after = a - a;
  EXPECT_EQ(top_level_names(p.events()), (std::vector<std::string>{"mul"}));
  EXPECT_FALSE(prof::is_profiling());
}

TEST(Profiler, SelfTimeIsTotalMinusDirectChildren) {
  Tensor a = ones({64, 64});
  prof::Profile p;
  {
    prof::Range outer("outer");
    {
      prof::Range inner("inner");
      Tensor x = a + a;
      Tensor y = x.matmul(x);
    }
    Tensor z = a * a;
  }
  p.stop();
  const auto& events = p.events();
  const prof::Event* outer = find(events, "outer");
  const prof::Event* inner = find(events, "inner");
  ASSERT_TRUE(outer && inner);
  EXPECT_EQ(outer->parent_id, 0u);
  EXPECT_EQ(inner->parent_id, outer->id);
  EXPECT_EQ(outer->kind, prof::EventKind::UserRange);
  EXPECT_EQ(find(events, "add")->parent_id, inner->id);
  EXPECT_EQ(find(events, "mul")->parent_id, outer->id);
  for (const prof::Event& e : events) {
    int64_t children = 0;
    for (const prof::Event* c : children_of(events, e.id)) {
      children += c->duration_ns();
      EXPECT_GE(c->start_ns, e.start_ns) << c->name << " in " << e.name;
      EXPECT_LE(c->end_ns, e.end_ns) << c->name << " in " << e.name;
      EXPECT_EQ(c->thread, e.thread);
    }
    EXPECT_EQ(e.self_ns, e.duration_ns() - children) << e.name;
    EXPECT_GE(e.self_ns, 0) << e.name;
  }
}

TEST(Profiler, RangesOpenAtStopEndThere) {
  prof::Profile p;
  prof::Range open("still open");
  Tensor a = ones({3}) + 1.0;
  p.stop();
  const prof::Event* e = find(p.events(), "still open");
  ASSERT_NE(e, nullptr);
  EXPECT_GE(e->end_ns, e->start_ns);
  EXPECT_EQ(find(p.events(), "add")->parent_id, e->id);
}

TEST(Profiler, BackwardNodesLinkToTheirForwardOps) {
  Tensor x = ones({4}).requires_grad_();
  prof::Profile p;
  Tensor y = (x * 3.0).sum();
  y.backward();
  p.stop();
  const auto& events = p.events();
  const prof::Event* mul = find(events, "mul");
  const prof::Event* sum = find(events, "sum");
  const prof::Event* mul_backward = find(events, "MulBackward");
  const prof::Event* sum_backward = find(events, "SumBackward");
  ASSERT_TRUE(mul && sum && mul_backward && sum_backward);
  EXPECT_EQ(mul_backward->kind, prof::EventKind::Backward);
  EXPECT_EQ(mul_backward->forward_id, mul->id);
  EXPECT_EQ(sum_backward->forward_id, sum->id);
  EXPECT_EQ(mul_backward->sequence_nr, mul->sequence_nr);
  EXPECT_GE(mul->sequence_nr, 0);
  // Backward runs later-created nodes first, and the formulas' ops nest inside their node.
  EXPECT_LT(sum_backward->start_ns, mul_backward->start_ns);
  EXPECT_FALSE(children_of(events, mul_backward->id).empty());
  EXPECT_EQ(x.grad().sum().item<float>(), 12.0f);
}

TEST(Profiler, RecordShapesAndDtypes) {
  Tensor a = ones({2, 3}), b = ones({3}, TensorOptions().dtype(kFloat64));
  prof::Profile p({.record_shapes = true});
  Tensor c = a.add(b, 2.0);
  p.stop();
  const prof::Event* add = find(p.events(), "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input_shapes, (std::vector<std::vector<int64_t>>{{2, 3}, {3}, {}}));
  EXPECT_EQ(add->input_dtypes, (std::vector<std::string>{"float32", "float64", "Scalar"}));
}

TEST(Profiler, WithStackNamesTheEnclosingEvents) {
  prof::Profile p({.with_stack = true});
  {
    prof::Range r("step");
    Tensor a = ones({2}) * 2.0;
  }
  p.stop();
  EXPECT_EQ(find(p.events(), "mul")->stack, "step > mul");
  EXPECT_EQ(find(p.events(), "step")->stack, "step");
}

TEST(Profiler, ProfilingNeverChangesResults) {
  auto train_step = [](bool profiled) {
    manual_seed(3);
    nn::Sequential model(nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 3));
    optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
    Tensor x = randn({5, 8});
    Tensor target = tensor({0, 1, 2, 1, 0});
    std::optional<prof::Profile> p;
    if (profiled) p.emplace(prof::ProfileOptions{.record_shapes = true, .profile_memory = true, .with_stack = true});
    for (int i = 0; i < 2; ++i) {
      Tensor loss = nn::functional::cross_entropy(model->forward(x), target);
      loss.backward();
      opt.step();
      opt.zero_grad();
    }
    if (p) {
      p->stop();
      EXPECT_NE(find(p->events(), "Optimizer.step#Adam.step"), nullptr);
    }
    std::vector<float> out;
    for (const Tensor& t : model->parameters()) {
      Tensor c = t.contiguous();
      out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    }
    return out;
  };
  const std::vector<float> plain = train_step(false), profiled = train_step(true);
  ASSERT_EQ(plain.size(), profiled.size());
  EXPECT_EQ(std::memcmp(plain.data(), profiled.data(), plain.size() * sizeof(float)), 0);
}

TEST(Profiler, OptimizerStepsAndDataLoaderWaitsAreRanges) {
  Tensor x = randn({8, 2});
  auto set = std::make_shared<data::TensorDataset>(x, zeros({8}, TensorOptions().dtype(kInt64)));
  data::DataLoader loader(set, {.batch_size = 4, .num_workers = 1, .name = "train"});
  Tensor w = zeros({2}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  prof::Profile p;
  for (data::Example& batch : loader) {
    (batch.data * w).sum().backward();
    opt.step();
  }
  p.stop();
  const auto& events = p.events();
  int waits = 0, steps = 0, worker_batches = 0;
  uint64_t main_thread = 0;
  for (const prof::Event& e : events) {
    if (e.name == "DataLoader.next#train") {
      EXPECT_EQ(e.kind, prof::EventKind::DataLoader);
      main_thread = e.thread;
      ++waits;
    }
    if (e.name == "Optimizer.step#SGD.step") {
      EXPECT_EQ(e.kind, prof::EventKind::Optimizer);
      EXPECT_FALSE(children_of(events, e.id).empty());  // the fused update op
      ++steps;
    }
    if (e.name.rfind("DataLoader batch ", 0) == 0) ++worker_batches;
  }
  EXPECT_EQ(waits, 3);  // two batches and the end
  EXPECT_EQ(steps, 2);
  EXPECT_EQ(worker_batches, 2);
  for (const prof::Event& e : events) {
    if (e.name.rfind("DataLoader batch ", 0) != 0) continue;
    EXPECT_NE(e.thread, main_thread);
    EXPECT_EQ(p.thread_name(e.thread), "DataLoader worker");
    EXPECT_FALSE(children_of(events, e.id).empty());  // the collate's ops
  }
}

TEST(Profiler, ThreadsRecordOnlyWhenTheyJoin) {
  Tensor a = ones({4});
  prof::Profile p;
  std::thread joined([&] {
    prof::ThreadGuard guard("helper");
    Tensor b = a * 2.0;
  });
  joined.join();
  std::thread other([&] { Tensor c = a - 1.0; });
  other.join();
  Tensor d = a + 1.0;
  p.stop();
  std::map<std::string, uint64_t> thread_of;
  for (const prof::Event& e : p.events()) thread_of[e.name] = e.thread;
  EXPECT_EQ(thread_of.count("sub"), 0u);
  ASSERT_EQ(thread_of.count("mul"), 1u);
  ASSERT_EQ(thread_of.count("add"), 1u);
  EXPECT_NE(thread_of["mul"], thread_of["add"]);
  EXPECT_EQ(p.thread_name(thread_of["mul"]), "helper");
}

TEST(Profiler, ManyThreadsRecordConcurrently) {
  Tensor a = ones({8});
  prof::Profile p;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      prof::ThreadGuard guard("worker");
      for (int i = 0; i < 200; ++i) {
        prof::Range r("iteration");
        Tensor b = a * 2.0;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  p.stop();
  int64_t muls = 0, ranges = 0;
  for (const prof::Event& e : p.events()) {
    if (e.name == "mul") {
      ++muls;
      ASSERT_NE(e.parent_id, 0u);
      EXPECT_EQ(p.events()[e.parent_id - 1].name, "iteration");
      EXPECT_EQ(p.events()[e.parent_id - 1].thread, e.thread);
    }
    ranges += e.name == "iteration";
  }
  EXPECT_EQ(muls, 800);
  EXPECT_EQ(ranges, 800);
}

TEST(Profiler, MisuseIsAnError) {
  prof::Profile p;
  EXPECT_EMBER_ERROR(prof::Profile second, "already running");
  EXPECT_EMBER_ERROR(p.events(), "still running");
  EXPECT_EMBER_ERROR(p.start(), "already running");
  std::thread other([&] { EXPECT_EMBER_ERROR(p.stop(), "stop it where it started"); });
  other.join();
  p.stop();
  EXPECT_EMBER_ERROR(p.stop(), "not running");
  EXPECT_EMBER_ERROR(p.key_averages().table({.sort_by = "speed"}), "unknown sort_by 'speed'", "self_cpu_time");
  prof::Profile never(prof::ProfileOptions{}, false);
  EXPECT_EMBER_ERROR(never.events(), "never started");
}

TEST(Profiler, KeyAveragesGroupByNameAndShape) {
  Tensor small = ones({2}), large = ones({3, 3});
  prof::Profile p({.record_shapes = true});
  for (int i = 0; i < 3; ++i) Tensor x = small + small;
  Tensor y = large + large;
  Tensor z = large * large;
  p.stop();
  std::map<std::string, prof::KeyAverage> by_name;
  const prof::KeyAverages by_name_only = p.key_averages();
  for (const prof::KeyAverage& r : by_name_only.rows()) by_name[r.name] = r;
  EXPECT_EQ(by_name.at("add").count, 4);
  EXPECT_EQ(by_name.at("mul").count, 1);
  int64_t self = 0, total = 0;
  for (const prof::Event& e : p.events()) {
    if (e.name != "add") continue;
    self += e.self_ns;
    total += e.duration_ns();
  }
  EXPECT_EQ(by_name.at("add").self_ns, self);
  EXPECT_EQ(by_name.at("add").total_ns, total);
  std::map<std::string, int64_t> add_by_shape;
  const prof::KeyAverages by_shape = p.key_averages(/*group_by_input_shape=*/true);
  for (const prof::KeyAverage& r : by_shape.rows())
    if (r.name == "add") add_by_shape[r.input_shapes] = r.count;
  EXPECT_EQ(add_by_shape, (std::map<std::string, int64_t>{{"[[2], [2], []]", 3}, {"[[3, 3], [3, 3], []]", 1}}));
}

TEST(Profiler, TableLooksLikePyTorchs) {
  Tensor a = ones({2});
  prof::Profile p({.record_shapes = true});
  for (int i = 0; i < 3; ++i) Tensor x = a + a;
  Tensor y = a * a;
  p.stop();
  const std::string table = p.key_averages().table({.sort_by = "count", .row_limit = 1});
  for (const char* column : {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"})
    EXPECT_NE(table.find(column), std::string::npos) << column << "\n" << table;
  EXPECT_NE(table.find("add"), std::string::npos) << table;
  EXPECT_EQ(table.find("mul"), std::string::npos) << table;  // row_limit 1, add has more calls
  EXPECT_NE(table.find("Self CPU time total: "), std::string::npos);
  const std::string shapes = p.key_averages(true).table({.row_limit = -1});
  EXPECT_NE(shapes.find("Input Shapes"), std::string::npos);
  EXPECT_NE(shapes.find("[[2], [2], []]"), std::string::npos) << shapes;
}

}  // namespace
}  // namespace ember
