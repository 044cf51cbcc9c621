// Graph archives: trace -> save -> load -> run equals eager, and malformed
// archives are rejected with ember::Error (the loader treats files as untrusted).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "ember/jit.h"
#include "ember/serialize.h"
#include "jit/graph.h"
#include "test_jit_models.h"
#include "test_util.h"

namespace ember {
namespace {

using nlohmann::json;
using testing::all_close;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("ember_jit_" + std::to_string(::getpid()) + "_" + name)).string();
}

// Removes the file when the test ends, also when it fails.
struct TempFile {
  explicit TempFile(const std::string& name) : path(temp_path(name)) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

template <class Model>
void expect_round_trip(Model& model, int64_t batch, const std::string& name, bool optimise) {
  model->eval();
  jit::GraphModule g = jit::trace(model, randn({batch, 1, 28, 28}));
  if (optimise) jit::optimize(g);
  TempFile file(name);
  jit::save(g, file.path);
  jit::GraphModule loaded = jit::load(file.path);
  EXPECT_EQ(loaded.graph_text(), g.graph_text());
  for (int64_t n : {int64_t{1}, batch + 3}) {
    Tensor x = randn({n, 1, 28, 28});
    EXPECT_TRUE(all_close(loaded(x), model->forward(x), 0, 0)) << name << " batch " << n;
  }
}

TEST(JitArchive, DemoModelsRoundTripBitwise) {
  manual_seed(10);
  nn::Sequential mlp = testing::demo_mlp(0.2);
  expect_round_trip(mlp, 4, "mlp.emb", false);
  nn::Sequential cnn = testing::demo_cnn();
  expect_round_trip(cnn, 2, "cnn.emb", true);
  testing::TinyTransformer transformer;
  expect_round_trip(transformer, 3, "transformer.emb", true);
}

TEST(JitArchive, FrozenFoldedGraphRoundTrips) {
  manual_seed(11);
  nn::Sequential net(nn::Conv2d(1, 4, 3), nn::BatchNorm2d(4), nn::ReLU(), nn::Flatten(), nn::Linear(4 * 26 * 26, 10));
  net->eval();
  jit::TraceOptions freeze;
  freeze.freeze = true;
  jit::GraphModule g = jit::trace(net, randn({2, 1, 28, 28}), freeze);
  jit::optimize(g);
  TempFile file("frozen.emb");
  jit::save(g, file.path);
  jit::GraphModule loaded = jit::load(file.path);
  EXPECT_EQ(loaded.graph().passes_applied, g.graph().passes_applied);
  Tensor x = randn({5, 1, 28, 28});
  EXPECT_TRUE(all_close(loaded(x), g(x), 0, 0));
  EXPECT_TRUE(all_close(loaded(x), net->forward(x), 1e-5, 1e-5));
  EXPECT_EMBER_ERROR(loaded(randn({5, 1, 28, 29})), "input 'x'", "[5, 1, 28, 29]", "[*, 1, 28, 28]");
}

TEST(JitArchive, TrainingGraphRoundTripsAndStaysDifferentiable) {
  manual_seed(12);
  nn::Sequential mlp = testing::demo_mlp(0.3);
  mlp->train();
  jit::GraphModule g = jit::trace(mlp, randn({4, 1, 28, 28}));
  TempFile file("train.emb");
  jit::save(g, file.path);
  jit::GraphModule loaded = jit::load(file.path);
  EXPECT_TRUE(loaded.graph().training);
  Tensor x = randn({3, 1, 28, 28});
  manual_seed(13);
  const Tensor eager = mlp->forward(x);
  manual_seed(13);
  const Tensor y = loaded(x);
  EXPECT_TRUE(all_close(y, eager, 0, 0));
  y.sum().backward();
  for (const Tensor& p : loaded.parameters()) EXPECT_TRUE(p.grad().defined());
}

// ---- malformed archives ----

struct Archive {
  TensorDict tensors;
  std::map<std::string, std::string> metadata;
  json graph;
};

class JitArchiveMalformed : public ::testing::Test {
 protected:
  void SetUp() override {
    manual_seed(14);
    nn::Sequential net(nn::Conv2d(1, 2, 3), nn::ReLU(), nn::Flatten(), nn::Linear(2 * 6 * 6, 3));
    net->eval();
    jit::GraphModule g = jit::trace(net, randn({2, 1, 8, 8}));
    jit::save(g, good_.path);
    SafetensorsFile f = load_safetensors(good_.path);
    base_.tensors = f.tensors;
    base_.metadata = f.metadata;
    base_.graph = json::parse(f.metadata.at("graph"));
  }

  // Writes the archive after `edit` and expects load to fail naming `part`.
  void expect_rejected(const std::function<void(Archive&)>& edit, const char* part) {
    Archive a = base_;
    edit(a);
    a.metadata["graph"] = a.graph.dump();
    save_safetensors(a.tensors, bad_.path, a.metadata);
    EXPECT_EMBER_ERROR(jit::load(bad_.path), "jit::load", part);
  }
  json& node(Archive& a, const std::string& op) {
    for (json& n : a.graph["nodes"])
      if (n["op"] == op) return n;
    ADD_FAILURE() << "no node " << op;
    return a.graph["nodes"][0];
  }
  std::string bytes_of(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void write_bytes(const std::string& bytes) { std::ofstream(bad_.path, std::ios::binary) << bytes; }

  TempFile good_{"good.emb"};
  TempFile bad_{"bad.emb"};
  Archive base_;
};

TEST_F(JitArchiveMalformed, TheBaseArchiveLoads) { EXPECT_NO_THROW(jit::load(good_.path)); }

TEST_F(JitArchiveMalformed, BrokenFilesAreRejected) {
  const std::string good = bytes_of(good_.path);
  for (size_t cut : {size_t{0}, size_t{7}, size_t{20}, good.size() / 2, good.size() - 1}) {
    write_bytes(good.substr(0, cut));
    EXPECT_THROW(jit::load(bad_.path), Error) << "cut at " << cut;
  }
  write_bytes("this is not an archive at all, just some text");
  EXPECT_THROW(jit::load(bad_.path), Error);
  EXPECT_THROW(jit::load(temp_path("missing.emb")), Error);
}

TEST_F(JitArchiveMalformed, MetadataAndVersion) {
  expect_rejected([](Archive& a) { a.metadata.erase("format"); }, "missing 'format'");
  expect_rejected([](Archive& a) { a.metadata["format"] = "ember.checkpoint"; }, "format is 'ember.checkpoint'");
  expect_rejected([](Archive& a) { a.metadata["format_version"] = "2"; }, "format version 2 is not supported");
  expect_rejected([](Archive& a) { a.metadata["format_version"] = "one"; }, "format version one");
  Archive a = base_;
  a.metadata["graph"] = "{\"nodes\": [";
  save_safetensors(a.tensors, bad_.path, a.metadata);
  EXPECT_EMBER_ERROR(jit::load(bad_.path), "not valid JSON");
  expect_rejected([](Archive& a) { a.graph = json::array(); }, "expected a JSON object");
  expect_rejected([](Archive& a) { a.graph.erase("nodes"); }, "missing field 'nodes'");
  expect_rejected([](Archive& a) { a.graph["training"] = 1; }, "expected true or false");
}

TEST_F(JitArchiveMalformed, OpsAndArguments) {
  expect_rejected([&](Archive& a) { node(a, "relu")["op"] = "system"; }, "unknown op 'system'");
  expect_rejected([&](Archive& a) { node(a, "relu")["args"].push_back({{"int", 1}}); }, "takes 1 arguments");
  expect_rejected([&](Archive& a) { node(a, "transpose")["args"][1] = {{"value", 0}}; }, "cannot be 'value'");
  expect_rejected([&](Archive& a) { node(a, "transpose")["args"][1] = {{"int", "0"}}; }, "expected an integer");
  expect_rejected([&](Archive& a) { node(a, "transpose")["args"][1] = {{"shell", "rm"}}; }, "unknown argument kind");
  expect_rejected([&](Archive& a) { node(a, "relu")["args"][0] = {{"none", nullptr}}; }, "cannot be 'none'");
  expect_rejected([&](Archive& a) { node(a, "transpose")["args"][1] = {{"int", 0}, {"float", 1.0}}; },
                  "one kind");
  expect_rejected([&](Archive& a) { node(a, "convolution")["args"][6] = {{"bool", "yes"}}; }, "expected true or false");
  expect_rejected([&](Archive& a) { node(a, "addmm")["args"][3] = {{"scalar_float", "infinity?"}}; },
                  "expected a number");
  expect_rejected([&](Archive& a) { node(a, "convolution")["args"][6] = {{"bool", false}, {"sym", {{1, 0}}}}; },
                  "'sym' must list");
  expect_rejected([&](Archive& a) { node(a, "view")["args"][1]["sym"] = {{1, 0}}; }, "'sym' must list");
  expect_rejected([&](Archive& a) { node(a, "relu")["list_output"] = true; }, "list_output does not match");
  expect_rejected([&](Archive& a) { node(a, "relu")["random_blocks"] = {0, 4}; }, "draws no random numbers");
  expect_rejected([&](Archive& a) { node(a, "relu")["outputs"].push_back(node(a, "relu")["outputs"][0]); },
                  "returns 1 tensors");
}

TEST_F(JitArchiveMalformed, ValuesAndIds) {
  expect_rejected([&](Archive& a) { node(a, "relu")["args"][0] = {{"value", 99999}}; }, "dangling value");
  expect_rejected([&](Archive& a) { a.graph["nodes"][0]["args"][0] = {{"value", a.graph["outputs"][0]}}; },
                  "not defined before this use");  // a cycle: the first node reads the last one's output
  expect_rejected([&](Archive& a) { node(a, "relu")["outputs"][0]["id"] = a.graph["inputs"][0]["id"]; },
                  "defined twice");
  expect_rejected([&](Archive& a) { a.graph["outputs"] = {12345}; }, "graph outputs");
  expect_rejected([&](Archive& a) { node(a, "relu")["outputs"][0]["id"] = -1; }, "out of range");
  expect_rejected([&](Archive& a) { node(a, "relu")["outputs"][0]["id"] = int64_t{1} << 40; }, "out of range");
  expect_rejected([&](Archive& a) { a.graph["inputs"][0]["shape"] = {1, 2}; }, "[coeff, offset] pair");
  expect_rejected([&](Archive& a) { a.graph["inputs"][0]["shape"] = json(std::vector<json>(65, {0, 1})); },
                  "at most 64 sizes");
  expect_rejected([&](Archive& a) { a.graph["inputs"][0]["shape"][0] = {int64_t{1} << 30, 0}; }, "out of range");
  // Found by fuzzing: a negative size loaded, and only failed when run.
  expect_rejected([&](Archive& a) { a.graph["inputs"][0]["shape"][1] = {0, -6}; }, "negative for some batch size");
  expect_rejected([&](Archive& a) { a.graph["inputs"][0]["shape"][0] = {-1, 100}; }, "negative for some batch size");
  expect_rejected([&](Archive& a) { a.graph["inputs"][0]["dtype"] = "float128"; }, "unknown dtype 'float128'");
  expect_rejected([&](Archive& a) { a.graph["inputs"][0]["device"] = "tpu"; }, "unknown device 'tpu'");
  expect_rejected([&](Archive& a) { a.graph["inputs"][1]["role"] = "superuser"; }, "unknown role 'superuser'");
  expect_rejected([&](Archive& a) { a.graph["inputs"][1]["shape"][0] = {1, 0}; }, "batch-dependent shape");
  expect_rejected([&](Archive& a) { node(a, "view")["args"][1]["ints"] = json(std::vector<int>(100000, 1)); },
                  "short list");
}

TEST_F(JitArchiveMalformed, TensorsAgainstTheGraph) {
  const std::string weight = "input/" + base_.graph["inputs"][1]["name"].get<std::string>();
  expect_rejected([&](Archive& a) { a.tensors.erase(weight); }, "has no tensor");
  expect_rejected([&](Archive& a) { a.tensors[weight] = zeros({3, 3}); }, "but the graph declares");
  expect_rejected([&](Archive& a) { a.tensors[weight] = a.tensors[weight].to(kFloat64); }, "but the graph declares");
  expect_rejected([&](Archive& a) { a.tensors["const/999"] = zeros({1}); }, "is not used by the graph");
  expect_rejected([&](Archive& a) { a.graph["constants"].push_back({{"id", 777}, {"name", ""}, {"wrapped", false}}); },
                  "no tensor 'const/777'");
  expect_rejected(
      [&](Archive& a) {
        a.tensors["const/777"] = zeros({2});
        a.graph["constants"].push_back({{"id", 777}, {"name", ""}, {"wrapped", true}});
      },
      "wrapped number must be 0-d");
}

TEST_F(JitArchiveMalformed, NegativeRandomDrawsAreRejected) {
  nn::Sequential net(nn::Linear(4, 4), nn::Dropout(0.5));
  net->train();
  jit::save(jit::trace(net, randn({2, 4})), good_.path);
  SafetensorsFile f = load_safetensors(good_.path);
  base_ = {f.tensors, f.metadata, json::parse(f.metadata.at("graph"))};
  EXPECT_NO_THROW(jit::load(good_.path));
  expect_rejected([&](Archive& a) { node(a, "dropout")["random_blocks"] = {-1, 0}; }, "must not be negative");
}

}  // namespace
}  // namespace ember
