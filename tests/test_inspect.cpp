// `ember inspect`: ops, dispatch, checkpoint, autograd and memory, through the
// real command (the tool sits next to the tests folder of the build:
// build/<preset>/ember; without it the tests skip). The JSON of each
// subcommand is parsed and its content checked against what the engine
// knows independently (the dispatcher, the model's parameters, the saved files).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "core/dispatcher.h"
#include "ember/jit.h"
#include "ember/nn.h"
#include "ember/ops.h"
#include "ember/serialize.h"
#include "ember/training_checkpoint.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CommandResult {
  int status = -1;
  std::string out;  // stdout only: the JSON document
};

class InspectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tool_ = fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "ember";
    if (!fs::exists(tool_)) GTEST_SKIP() << "no ember tool at " << tool_ << " (build the ember_cli target)";
    dir_ = fs::temp_directory_path() / ("ember_inspect_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "data");
    // The config check asks that the data files exist; inspect never reads them.
    for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                             "t10k-labels-idx1-ubyte"}) {
      std::ofstream(dir_ / "data" / name).put('\0');
    }
    std::ofstream(dir_ / "mlp.yaml") << "model:\n  name: mlp\n  hidden: [32, 16]\ndata:\n  path: "
                                     << (dir_ / "data").string() << "\n  batch_size: 8\nthreads: 1\n";
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  CommandResult run(const std::string& args) const {
    CommandResult result;
    FILE* pipe = ::popen((tool_.string() + " " + args + " 2>/dev/null").c_str(), "r");
    if (pipe == nullptr) return result;
    std::array<char, 4096> buffer;
    while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) result.out.append(buffer.data(), n);
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
  }
  json run_json(const std::string& args) const {
    const CommandResult r = run(args + " --json");
    EXPECT_EQ(r.status, 0) << "ember " << args << " --json";
    json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "ember " << args << " --json printed no JSON:\n" << r.out;
    return j;
  }
  std::string mlp_config() const { return (dir_ / "mlp.yaml").string(); }

  fs::path tool_, dir_;
};

const json* find_by_name(const json& list, const std::string& name) {
  for (const json& item : list)
    if (item.at("name") == name) return &item;
  return nullptr;
}

TEST_F(InspectTest, OpsListsEveryOpWithKernelsDerivativeAndReference) {
  const json j = run_json("inspect ops");
  const json& ops = j.at("ops");
  EXPECT_EQ(ops.size(), ember::Dispatcher::instance().ops().size());
  EXPECT_EQ(j.at("summary").at("ops"), ops.size());
  const json* add = find_by_name(ops, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->at("derivative"), "formula");
  const auto cpu = add->at("kernels").at("CPU").get<std::vector<std::string>>();
  EXPECT_NE(std::find(cpu.begin(), cpu.end(), "float32"), cpu.end());
  EXPECT_EQ(add->at("in_place"), false);
  const json* add_ = find_by_name(ops, "add_");
  ASSERT_NE(add_, nullptr);
  EXPECT_EQ(add_->at("derivative"), "formula");  // the out-of-place twin's
  EXPECT_EQ(add_->at("in_place"), true);
  const json* eq = find_by_name(ops, "eq");
  ASSERT_NE(eq, nullptr);
  EXPECT_EQ(eq->at("derivative"), "not differentiable");
  const json* mm = find_by_name(ops, "mm");
  ASSERT_NE(mm, nullptr);
  ASSERT_FALSE(mm->at("references").empty());
  EXPECT_EQ(mm->at("references")[0].at("backend"), "CPU");
  EXPECT_EQ(mm->at("references")[0].at("file"), "kernels/cpu/linalg/gemm_reference.cpp");
  EXPECT_TRUE(find_by_name(ops, "eq")->at("references").empty());
  const json& add_refs = add->at("references");
  ASSERT_EQ(add_refs.size(), 1u);
  EXPECT_EQ(add_refs[0].at("file"), "kernels/cpu/elementwise/elementwise_reference.cpp");
  // The kernel lists match the dispatcher's table.
  for (const ember::OpEntry* op : ember::Dispatcher::instance().ops()) {
    const json* row = find_by_name(ops, op->name());
    ASSERT_NE(row, nullptr) << op->name();
    size_t cpu_kernels = 0;
    for (int t = 0; t < ember::kNumDTypes; ++t)
      cpu_kernels += op->backend_kernel(ember::DispatchKey::CPU, static_cast<ember::DType>(t)).present();
    EXPECT_EQ(row->at("kernels").at("CPU").size(), cpu_kernels) << op->name();
  }
  const CommandResult text = run("inspect ops");
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find(std::to_string(ops.size()) + " ops:"), std::string::npos) << text.out.substr(0, 200);
  EXPECT_NE(text.out.find("cpu::gemm_reference_f32/f64"), std::string::npos);
}

TEST_F(InspectTest, DispatchJsonNamesKernelsAndLayers) {
  const json all = run_json("inspect dispatch");
  EXPECT_EQ(all.at("ops").size(), ember::Dispatcher::instance().ops().size());
  const json add = run_json("inspect dispatch add");
  EXPECT_EQ(add.at("name"), "add");
  EXPECT_EQ(add.at("schema"), ember::Dispatcher::instance().find("add")->schema().text);
  EXPECT_EQ(add.at("dtype_rule"), "promote");
  EXPECT_FALSE(add.at("backends").at("CPU").at("float32").get<std::string>().empty());
  EXPECT_EQ(add.at("layers").at("Autograd").at("kind"), "fallback");
  EXPECT_EQ(run("inspect dispatch no_such_op --json").status, 2);
}

TEST_F(InspectTest, CheckpointJsonListsTensorsAndRunState) {
  const std::string plain = (dir_ / "weights.safetensors").string();
  ember::save({{"w", ember::zeros({2, 3})}, {"b", ember::zeros({3}, ember::kFloat64)}}, plain);
  const json p = run_json("inspect checkpoint " + plain);
  EXPECT_EQ(p.at("kind"), "safetensors");
  const json* w = find_by_name(p.at("tensors"), "w");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->at("shape"), json::array({2, 3}));
  EXPECT_EQ(w->at("dtype"), "float32");
  EXPECT_EQ(find_by_name(p.at("tensors"), "b")->at("numel"), 3);

  ember::TrainingCheckpoint ckpt;
  ckpt.epoch = 3;
  ckpt.step = 120;
  ckpt.rng_seed = 9;
  ckpt.info = {{"seed", "9"}};
  ckpt.states["model"] = {{"fc.weight", ember::zeros({4, 2})}};
  const std::string path = (dir_ / "run.ckpt").string();
  ember::save_training_checkpoint(ckpt, path);
  const json c = run_json("inspect checkpoint " + path);
  EXPECT_EQ(c.at("kind"), "training_checkpoint");
  EXPECT_EQ(c.at("epoch"), 3);
  EXPECT_EQ(c.at("step"), 120);
  EXPECT_EQ(c.at("generator").at("seed"), 9);
  EXPECT_EQ(c.at("info").at("seed"), "9");
  EXPECT_EQ(find_by_name(c.at("parts").at("model"), "fc.weight")->at("shape"), json::array({4, 2}));
}

TEST_F(InspectTest, GraphJsonListsInputsNodesAndOutputsById) {
  ember::manual_seed(0);
  ember::nn::Sequential net(ember::nn::Linear(4, 3), ember::nn::ReLU());
  const std::string archive = (dir_ / "net.emb").string();
  ember::jit::save(ember::jit::trace(net, ember::randn({2, 4})), archive);
  const json g = run_json("inspect graph " + archive);
  const json& graph = g.at("graph");
  std::set<std::string> roles, ops;
  std::set<int64_t> known;
  for (const json& v : graph.at("inputs")) {
    roles.insert(v.at("role").get<std::string>());
    known.insert(v.at("id").get<int64_t>());
  }
  for (const json& v : graph.at("constants")) known.insert(v.at("id").get<int64_t>());
  EXPECT_EQ(roles, (std::set<std::string>{"user", "parameter"}));
  for (const json& n : graph.at("nodes")) {
    ops.insert(n.at("op").get<std::string>());
    for (const json& a : n.at("args")) {  // SSA: every value read is defined above
      if (a.contains("value")) {
        EXPECT_TRUE(known.count(a.at("value").get<int64_t>())) << n.dump();
      }
    }
    for (const json& o : n.at("outputs")) known.insert(o.at("id").get<int64_t>());
  }
  EXPECT_TRUE(ops.count("relu")) << graph.dump();
  ASSERT_EQ(graph.at("outputs").size(), 1u);
  EXPECT_TRUE(known.count(graph.at("outputs")[0].get<int64_t>()));
  const json passes = run_json("inspect graph " + archive + " --passes");
  EXPECT_TRUE(passes.contains("graph_before"));
  EXPECT_FALSE(passes.at("graph").at("passes_applied").empty());
}

TEST_F(InspectTest, AutogradGraphOfTheMlpReachesEveryParameter) {
  const json g = run_json("inspect autograd --config " + mlp_config());
  EXPECT_EQ(g.at("model"), "mlp");
  EXPECT_EQ(g.at("batch_size"), 8);
  const json& nodes = g.at("nodes");
  std::map<std::string, int> count;
  std::set<std::string> leaves;
  for (const json& n : nodes) {
    ++count[n.at("name").get<std::string>()];
    if (n.at("leaf")) leaves.insert(n.at("parameter").get<std::string>());
    for (const json& e : n.at("next")) {
      if (!e.is_null()) {
        EXPECT_LT(e.at("node").get<size_t>(), nodes.size());
      }
    }
  }
  // Three linear layers: three addmm nodes, and one leaf per parameter, named.
  EXPECT_EQ(count["AddmmBackward"], 3);
  EXPECT_EQ(count["AccumulateGrad"], 6);
  EXPECT_EQ(leaves, (std::set<std::string>{"1.weight", "1.bias", "3.weight", "3.bias", "5.weight", "5.bias"}));
  EXPECT_TRUE(g.at("unreached_parameters").empty());
  EXPECT_FALSE(nodes[0].at("leaf"));
  EXPECT_TRUE(std::isfinite(g.at("loss").get<double>()));

  const CommandResult text = run("inspect autograd --config " + mlp_config());
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("AccumulateGrad  1.weight [32, 784] float32"), std::string::npos) << text.out;
  const CommandResult dot = run("inspect autograd --dot --config " + mlp_config());
  EXPECT_EQ(dot.status, 0);
  EXPECT_EQ(dot.out.rfind("digraph autograd {", 0), 0u) << dot.out;
  EXPECT_NE(dot.out.find("AddmmBackward"), std::string::npos);
  EXPECT_NE(dot.out.find("5.bias"), std::string::npos);
}

TEST_F(InspectTest, MemorySizeClassesAddUpToTheStatistics) {
  for (const std::string& args : {std::string("inspect memory"), "inspect memory --config " + mlp_config()}) {
    const json m = run_json(args);
    const json& s = m.at("stats");
    int64_t allocated = 0, cached = 0;
    for (const json& c : m.at("size_classes")) {
      allocated += c.at("block_bytes").get<int64_t>() * c.at("allocated_blocks").get<int64_t>();
      cached += c.at("block_bytes").get<int64_t>() * c.at("cached_blocks").get<int64_t>();
    }
    EXPECT_EQ(allocated, s.at("allocated_bytes").get<int64_t>()) << args;
    EXPECT_EQ(cached, s.at("cached_bytes").get<int64_t>()) << args;
    EXPECT_EQ(s.at("reserved_bytes").get<int64_t>(), allocated + cached) << args;
    EXPECT_GE(s.at("peak_allocated_bytes").get<int64_t>(), s.at("allocated_bytes").get<int64_t>()) << args;
    EXPECT_EQ(s.at("cache_hits").get<int64_t>() + s.at("cache_misses").get<int64_t>(),
              s.at("num_allocations").get<int64_t>());
  }
  const json step = run_json("inspect memory --config " + mlp_config());
  EXPECT_EQ(step.at("after_training_step").at("model"), "mlp");
  EXPECT_EQ(step.at("after_training_step").at("optimizer"), "adam");
  // After the step the float32 parameters of the 784-32-16-10 MLP, their
  // gradients and Adam's two moments are alive: at least 4 copies.
  const int64_t parameter_bytes = 4 * (784 * 32 + 32 + 32 * 16 + 16 + 16 * 10 + 10);
  EXPECT_GE(step.at("stats").at("allocated_bytes").get<int64_t>(), 4 * parameter_bytes);
  EXPECT_GE(step.at("stats").at("peak_allocated_bytes").get<int64_t>(), 4 * parameter_bytes);
  EXPECT_GT(step.at("stats").at("cached_blocks").get<int64_t>(), 0);  // the step's temporaries
  const CommandResult text = run("inspect memory --config " + mlp_config());
  EXPECT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("size classes"), std::string::npos) << text.out;
}

}  // namespace
