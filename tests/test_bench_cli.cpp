// `ember bench` (tools/ember/bench*.cpp), in process: the flop/byte model,
// the --shapes parser, the error metrics, and the JSON, SVG and markdown
// outputs of a tiny run. No timing is asserted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "tests/test_util.h"
#include "tools/ember/bench.h"
#include "tools/ember/commands.h"

namespace {

namespace fs = std::filesystem;
namespace b = ember::cli::bench;
using nlohmann::json;

b::Cost cost_of(const std::string& op, std::vector<int64_t> dims, double element_bytes = 4) {
  return b::find_bench_op(op).cost(dims, element_bytes);
}

// The message of the ember::Error that fn raises ("" if none).
template <class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "";
}

TEST(BenchCostModel, GemmCountsTwoFlopsPerMultiplyAddAndEachOperandOnce) {
  const b::Cost mm = cost_of("mm", {2, 3, 4});
  EXPECT_EQ(mm.flops, 2.0 * 2 * 3 * 4);
  EXPECT_EQ(mm.bytes, 4.0 * (2 * 3 + 3 * 4 + 2 * 4));
  const b::Cost addmm = cost_of("addmm", {2, 3, 4}, 8);
  EXPECT_EQ(addmm.flops, 48.0 + 8);       // plus the bias add per output
  EXPECT_EQ(addmm.bytes, 8.0 * (26 + 4));  // plus the bias [N]
  const b::Cost bmm = cost_of("bmm", {5, 2, 3, 4});
  EXPECT_EQ(bmm.flops, 5 * 48.0);
  EXPECT_EQ(bmm.bytes, 5 * 104.0);
  EXPECT_DOUBLE_EQ(mm.intensity(), 48.0 / 104);
}

TEST(BenchCostModel, ConvPoolNormAttentionAndElementwise) {
  // 1x1x3x3 image, one 3x3 filter, padding 1: 9 outputs of 9 multiply-adds and a bias add.
  const b::Cost conv = cost_of("conv2d", {1, 1, 3, 3, 1, 3});
  EXPECT_EQ(conv.flops, 9.0 * (2 * 9 + 1));
  EXPECT_EQ(conv.bytes, 4.0 * (9 + 9 + 1 + 9));
  // 4x4 image, 2x2 windows with stride 2: 4 outputs of 4 compares.
  const b::Cost pool = cost_of("max_pool2d", {1, 1, 4, 4, 2});
  EXPECT_EQ(pool.flops, 16.0);
  EXPECT_EQ(pool.bytes, 4.0 * (16 + 4));
  EXPECT_EQ(cost_of("avg_pool2d", {1, 1, 4, 4, 2}).flops, 16.0 + 4);
  EXPECT_EQ(cost_of("softmax", {2, 3}, 8).flops, 5.0 * 6);
  EXPECT_EQ(cost_of("softmax", {2, 3}, 8).bytes, 8.0 * 12);
  EXPECT_EQ(cost_of("layer_norm", {2, 3}).bytes, 4.0 * (12 + 6));
  const b::Cost attention = cost_of("scaled_dot_product_attention", {1, 2, 4, 8});
  EXPECT_EQ(attention.flops, 2 * (4.0 * 4 * 4 * 8 + 5 * 4 * 4));
  EXPECT_EQ(attention.bytes, 4.0 * 4 * 2 * 4 * 8);
  EXPECT_EQ(cost_of("add", {8}).flops, 8.0);
  EXPECT_EQ(cost_of("add", {8}).bytes, 96.0);
  EXPECT_EQ(cost_of("exp", {2, 4}).bytes, 64.0);
  // Reductions over the last dim: [6, 4] -> [6].
  EXPECT_EQ(cost_of("sum", {6, 4}).flops, 24.0);
  EXPECT_EQ(cost_of("sum", {6, 4}).bytes, 4.0 * (24 + 6));
}

TEST(BenchCostModel, EveryDefaultShapeFitsItsOpAndHasWork) {
  for (const b::BenchOp& op : b::bench_ops()) {
    ASSERT_FALSE(op.default_shapes.empty()) << op.name;
    for (const auto& dims : op.default_shapes) {
      EXPECT_NO_THROW(b::check_shape(op, dims)) << op.name << " " << b::shape_string(dims);
      const b::Cost c = op.cost(dims, 4);
      EXPECT_GT(c.flops, 0) << op.name;
      EXPECT_GT(c.bytes, 0) << op.name;
    }
  }
}

TEST(BenchShapes, ParsesShapesJoinedByXSeparatedByCommas) {
  EXPECT_EQ(b::parse_shapes("256x256x256,8,1x3"),
            (std::vector<std::vector<int64_t>>{{256, 256, 256}, {8}, {1, 3}}));
  EXPECT_EQ(b::shape_string({127, 1, 9}), "127x1x9");
}

TEST(BenchShapes, RejectsMalformedSpecsNamingTheFormat) {
  for (const char* bad : {"", "8,,9", "8x", "x8", "0", "8x-1", "8y9", "99999999999999999999", " 8", "8,"}) {
    const std::string msg = error_of([&] { b::parse_shapes(bad); });
    EXPECT_NE(msg.find("--shapes"), std::string::npos) << "'" << bad << "' -> " << msg;
  }
  EXPECT_NE(error_of([] { b::parse_shapes("8x0"); }).find("positive"), std::string::npos);
  const std::string count = error_of([] { b::check_shape(b::find_bench_op("mm"), {8}); });
  EXPECT_NE(count.find("3 numbers (MxKxN)"), std::string::npos) << count;
}

TEST(BenchShapes, UnknownOpAndDtypeNameTheChoices) {
  const std::string op = error_of([] { b::find_bench_op("matmull"); });
  EXPECT_NE(op.find("'matmull'"), std::string::npos) << op;
  EXPECT_NE(op.find("mm, addmm, bmm, conv2d"), std::string::npos) << op;
  EXPECT_EQ(b::parse_dtype("f64"), ember::DType::Float64);
  EXPECT_EQ(b::parse_dtype("bfloat16"), ember::DType::BFloat16);
  const std::string dtype = error_of([] { b::parse_dtype("float8"); });
  EXPECT_NE(dtype.find("float32 (f32), float64 (f64)"), std::string::npos) << dtype;
}

TEST(BenchError, UlpDistancesOfKnownPairs) {
  EXPECT_EQ(b::ulp_distance(1.0f, 1.0f), 0);
  EXPECT_EQ(b::ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(b::ulp_distance(1.0f, 2.0f), 8388608);  // 2^23 floats in [1, 2)
  EXPECT_EQ(b::ulp_distance(-0.0f, 0.0f), 0);
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(b::ulp_distance(-tiny, tiny), 2);  // across zero: -tiny, 0, tiny
  EXPECT_EQ(b::ulp_distance(1.0, std::nextafter(std::nextafter(1.0, 2.0), 2.0)), 2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(b::ulp_distance(nan, nan), 0);
  EXPECT_TRUE(std::isinf(b::ulp_distance(nan, 1.0f)));
  EXPECT_EQ(b::ulp_distance_bits(0x3C00, 0x3C01, 16), 1);  // float16 1.0 and its successor
  EXPECT_TRUE(std::isinf(b::ulp_distance_bits(0x7E00, 0x3C00, 16)));  // float16 NaN
}

TEST(BenchError, CompareOutputsMeasuresAbsRelAndUlp) {
  const float one_up = std::nextafter(1.0f, 2.0f);
  const ember::Tensor tuned = ember::tensor({1.0f, -2.0f, 0.5f, one_up});
  const ember::Tensor reference = ember::tensor({1.0f, -2.5f, 0.5f, 1.0f});
  const b::ErrorStats s = b::compare_outputs(tuned, reference);
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(s.max_rel, 0.5 / 2.5);
  EXPECT_EQ(s.max_ulp, b::ulp_distance(-2.0f, -2.5f));
  EXPECT_EQ(b::ulp_distance(-2.0f, -2.5f), 1 << 21);  // 0.5 in float steps of 2^-22 (in [2, 4))
  EXPECT_NE(error_of([&] { b::compare_outputs(tuned, ember::tensor({1.0f})); }).find("shape"), std::string::npos);
}

TEST(BenchError, GemmIsCheckedAgainstItsReference) {
  const b::BenchOp& mm = b::find_bench_op("mm");
  ember::Stack args = mm.make_args({5, 7, 3}, ember::TensorOptions(ember::DType::Float64));
  const ember::Tensor out = mm.call(args);
  const std::optional<b::ErrorStats> s = b::error_against_reference(mm, args, out);
  ASSERT_TRUE(s.has_value());
  EXPECT_NE(s->reference.find("gemm_reference"), std::string::npos) << s->reference;
  EXPECT_LT(s->max_abs, 1e-12);  // 7 products in float64
}

// A temporary folder, removed at the end.
class BenchOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ember_bench_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    // Limits for 1 thread written by hand: the run measures nothing.
    b::write_text_file(path("machine.json"), R"json({"schema": "ember-bench-machine/1", "machine": {
        "cpu": "Test CPU", "isa": "AVX2/FMA (ymm)", "measured_at": "2026-12-05T10:00:00Z", "quick": false,
        "fma_peak_gflops": {"1": 100.0}, "triad_gbs": {"1": 10.0}, "copy_gbs": {"1": 8.0}}})json");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // `ember bench --op add --op mm --shapes ... --repetitions 2 --json --svg`, on 1 thread.
  json tiny_run() {
    ember::testing::ThreadCount threads;
    ember::cli::BenchCommand c;
    c.ops = {"add", "mm"};
    c.shapes = "8x3x5";
    c.repetitions = 2;
    c.min_time = 0.001;
    c.threads = 1;
    c.machine_file = path("machine.json");
    c.json = path("bench.json");
    c.svg = path("roofline.svg");
    c.markdown = path("table.md");
    ::testing::internal::CaptureStdout();
    const int status = ember::cli::run_bench(c);
    stdout_ = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(status, 0);
    return json::parse(b::read_text_file(path("bench.json")));
  }

  fs::path dir_;
  std::string stdout_;
};

TEST_F(BenchOutputTest, JsonOfATinyRunHasEveryField) {
  const json doc = tiny_run();
  EXPECT_EQ(doc["schema"], "ember-bench/1");
  EXPECT_EQ(doc["settings"]["threads"], 1);
  EXPECT_EQ(doc["settings"]["repetitions"], 2);
  EXPECT_EQ(doc["machine"]["cpu"], "Test CPU");
  EXPECT_EQ(doc["machine"]["fma_peak_gflops"]["1"], 100.0);
  ASSERT_EQ(doc["results"].size(), 2u);
  const json& add = doc["results"][0];
  EXPECT_EQ(add["op"], "add");
  EXPECT_EQ(add["family"], "elementwise");
  EXPECT_EQ(add["dtype"], "float32");
  EXPECT_EQ(add["device"], "cpu");
  EXPECT_EQ(add["shape"], json::array({8, 3, 5}));
  EXPECT_EQ(add["flops"], 120.0);
  EXPECT_EQ(add["bytes"], 3 * 4 * 120.0);
  EXPECT_EQ(add["time"]["repetitions"], 2);
  const double median = add["time"]["median_s"];
  EXPECT_GT(median, 0);
  EXPECT_LE(add["time"]["min_s"].get<double>(), median);
  EXPECT_GE(add["time"]["max_s"].get<double>(), median);
  EXPECT_DOUBLE_EQ(add["gflops"].get<double>(), 120.0 / median * 1e-9);
  // Intensity 1/12 flop/byte: under the ridge (10 flop/byte), so the roof is 10 GB/s x 1/12.
  EXPECT_DOUBLE_EQ(add["roof_gflops"].get<double>(), 10.0 / 12);
  EXPECT_EQ(add["bound"], "memory");
  EXPECT_TRUE(add["torch"].is_null());
  const json& mm = doc["results"][1];
  EXPECT_EQ(mm["op"], "mm");
  EXPECT_EQ(mm["flops"], 2.0 * 8 * 3 * 5);
  ASSERT_TRUE(mm["error"].is_object());
  EXPECT_LT(mm["error"]["max_abs"].get<double>(), 1e-5);
  EXPECT_GE(mm["error"]["max_ulp"].get<double>(), 0);
  // The table on stdout, and in the --markdown file.
  EXPECT_NE(stdout_.find("| add | float32 | 8x3x5 |"), std::string::npos) << stdout_;
  EXPECT_EQ(b::read_text_file(path("table.md")), stdout_);
  // The report reads back as it was written.
  const b::BenchReport back = b::report_from_json(doc, "bench.json");
  EXPECT_EQ(b::report_to_json(back), doc);
}

TEST_F(BenchOutputTest, VsTorchTimesLibtorchOnTheSameCase) {
  if (!fs::exists(EMBER_BENCH_TORCH_PLUGIN)) GTEST_SKIP() << "no libtorch plugin in this build";
  ember::testing::ThreadCount threads;
  ember::cli::BenchCommand c;
  c.ops = {"mm"};
  c.shapes = "8x3x5";
  c.repetitions = 2;
  c.min_time = 0.001;
  c.threads = 1;
  c.vs_torch = true;
  c.torch_plugin = EMBER_BENCH_TORCH_PLUGIN;
  c.machine_file = path("machine.json");
  c.json = path("bench.json");
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(ember::cli::run_bench(c), 0);
  const std::string table = ::testing::internal::GetCapturedStdout();
  const json torch = json::parse(b::read_text_file(path("bench.json")))["results"][0]["torch"];
  ASSERT_TRUE(torch.is_object());
  EXPECT_EQ(torch["repetitions"], 2);
  EXPECT_GT(torch["median_s"].get<double>(), 0);
  EXPECT_NE(table.find("×"), std::string::npos) << table;
}

TEST_F(BenchOutputTest, VsTorchWithoutAPluginSaysHowToBuildOne) {
  ember::cli::BenchCommand c;
  c.ops = {"add"};
  c.vs_torch = true;
  c.torch_plugin = path("missing.so");
  c.machine_file = path("machine.json");
  const std::string msg = error_of([&] { ember::cli::run_bench(c); });
  EXPECT_NE(msg.find("no libtorch plugin at"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-DEMBER_BENCH_LIBTORCH=ON"), std::string::npos) << msg;
}

// A minimal well-formedness check: every tag closes in order, one root element.
std::string check_xml(const std::string& s, std::string* root) {
  std::vector<std::string> open;
  size_t i = 0, roots = 0;
  while ((i = s.find('<', i)) != std::string::npos) {
    const size_t end = s.find('>', i);
    if (end == std::string::npos) return "unterminated tag";
    const std::string tag = s.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag[0] == '?') continue;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag.substr(1) + ">";
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
    if (open.empty() && ++roots == 1) *root = name;
    if (tag.back() != '/') open.push_back(name);
  }
  if (!open.empty()) return "<" + open.back() + "> not closed";
  return roots == 1 ? "" : "more than one root element";
}

TEST_F(BenchOutputTest, SvgIsWellFormedWithOnePointPerResult) {
  tiny_run();
  const std::string svg = b::read_text_file(path("roofline.svg"));
  std::string root;
  EXPECT_EQ(check_xml(svg, &root), "");
  EXPECT_EQ(root, "svg");
  size_t circles = 0;
  for (size_t i = 0; (i = svg.find("<circle", i)) != std::string::npos; ++i) ++circles;
  EXPECT_EQ(circles, 2u);
  EXPECT_NE(svg.find("add 8x3x5"), std::string::npos);
  EXPECT_NE(svg.find("FMA peak 100.0 GFLOP/s"), std::string::npos);
  EXPECT_NE(svg.find("STREAM triad 10.0 GB/s"), std::string::npos);
}

TEST_F(BenchOutputTest, UpdateDocReplacesOnlyTheMarkedSection) {
  tiny_run();
  const std::string before = "# Performance\n\nintro\n\n<!-- ember bench: begin -->\nold table\n";
  const std::string after = "<!-- ember bench: end -->\n\n## Later\nkept\n";
  b::write_text_file(path("doc.md"), before + after);
  ember::cli::BenchCommand c;
  c.update_doc = path("doc.md");
  c.from = path("bench.json");
  EXPECT_EQ(ember::cli::run_bench(c), 0);
  const std::string doc = b::read_text_file(path("doc.md"));
  EXPECT_EQ(doc.rfind("# Performance\n\nintro\n\n<!-- ember bench: begin -->\n", 0), 0u);
  EXPECT_EQ(doc.substr(doc.size() - after.size()), after);
  EXPECT_EQ(doc.find("old table"), std::string::npos);
  EXPECT_NE(doc.find("| add | float32 | 8x3x5 |"), std::string::npos);
  EXPECT_NE(doc.find("Machine: Test CPU"), std::string::npos);
  EXPECT_NE(doc.find("| 1 | 100.0 GFLOP/s | 10.0 GB/s |"), std::string::npos);
}

TEST(BenchDoc, MarkersMustBeThereOnceAndInOrder) {
  const std::string b0 = b::kDocBegin, e0 = b::kDocEnd;
  EXPECT_EQ(b::replace_marked_section("x\n" + b0 + "\nold\n" + e0 + "\ny", "new\n", "doc.md"),
            "x\n" + b0 + "\nnew\n" + e0 + "\ny");
  EXPECT_NE(error_of([&] { b::replace_marked_section("no markers", "s", "doc.md"); }).find("doc.md has no"),
            std::string::npos);
  EXPECT_NE(error_of([&] { b::replace_marked_section(e0 + b0, "s", "doc.md"); }).find("comes before"),
            std::string::npos);
  EXPECT_NE(error_of([&] { b::replace_marked_section(b0 + b0 + e0, "s", "doc.md"); }).find("more than one"),
            std::string::npos);
}

TEST_F(BenchOutputTest, BadInputNamesTheChoices) {
  ember::cli::BenchCommand c;
  c.machine_file = path("machine.json");
  c.device = "tpu";
  EXPECT_NE(error_of([&] { ember::cli::run_bench(c); }).find("devices: cpu, cuda"), std::string::npos);
  if (!ember::cuda::is_available()) {
    c.device = "cuda";
    EXPECT_NE(error_of([&] { ember::cli::run_bench(c); }).find("no CUDA device"), std::string::npos);
  }
  c.device = "cpu";
  c.ops = {"nope"};
  EXPECT_NE(error_of([&] { ember::cli::run_bench(c); }).find("unknown op 'nope'"), std::string::npos);
  c.ops = {"add"};
  c.shapes = "8,,3";
  EXPECT_NE(error_of([&] { ember::cli::run_bench(c); }).find("empty shape"), std::string::npos);
  c.shapes = "8";
  c.dtype = "int4";
  EXPECT_NE(error_of([&] { ember::cli::run_bench(c); }).find("unknown dtype 'int4'"), std::string::npos);
  // A machine file is untrusted input.
  b::write_text_file(path("bad.json"), R"({"machine": {"cpu": "x", "isa": "y", "measured_at": "z", "quick": false,
      "fma_peak_gflops": {"one": 1.0}, "triad_gbs": {"1": 1.0}, "copy_gbs": {"1": 1.0}}})");
  c.dtype = "float32";
  c.machine_file = path("bad.json");
  EXPECT_NE(error_of([&] { ember::cli::run_bench(c); }).find("'one' that is not a thread count"), std::string::npos);
  b::write_text_file(path("bad.json"), "{not json");
  EXPECT_NE(error_of([&] { ember::cli::run_bench(c); }).find("not valid JSON"), std::string::npos);
}

}  // namespace
