// ONNX export (ember::onnx::export_graph): the demo models and the op set
// run in onnxruntime give ember's outputs, at the traced batch size and at
// others (the dynamic axis); unmapped ops, training-mode graphs and bad
// options are ember::Errors that leave no file behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "ember/ember.h"
#include "ember/jit.h"
#include "ember/onnx.h"
#include "jit/graph.h"
#include "tests/onnx/onnxruntime_runner.h"
#include "tests/test_jit_models.h"

namespace ember {
namespace {

namespace F = nn::functional;
using testing::ScratchDir;

// onnxruntime against ember: 1e-5, absolute up to 1 and relative above (testing::max_error).
constexpr double kTolerance = 1e-5;

std::string output_name(size_t i, size_t count) { return count == 1 ? "output" : "output" + std::to_string(i); }

// Exports `graph`, checks the file with ONNX's checker, then runs it in
// onnxruntime on inputs(batch) for each batch and compares with `eager`.
using InputsAt = std::function<std::vector<Tensor>(int64_t batch)>;
void expect_onnxruntime_matches(const jit::GraphModule& graph, const InputsAt& inputs, const jit::TracedFunction& eager,
                                const std::vector<int64_t>& batches) {
  ScratchDir dir;
  const std::string path = dir.path("model.onnx");
  onnx::export_graph(graph, path);
  testing::expect_checker_accepts(path);
  for (int64_t batch : batches) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const std::vector<Tensor> x = inputs(batch);
    TensorDict feed;
    for (size_t i = 0; i < x.size(); ++i) feed[x.size() == 1 ? "x" : "x" + std::to_string(i)] = x[i];
    const std::vector<Tensor> expected = eager(x);
    const TensorDict got = testing::run_onnxruntime(path, feed, dir);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string name = output_name(i, expected.size());
      ASSERT_EQ(got.count(name), 1u) << name;
      EXPECT_EQ(got.at(name).dtype(), expected[i].dtype()) << name;
      EXPECT_LE(testing::max_error(got.at(name), expected[i]), kTolerance) << name;
    }
  }
}

template <class Model>
void expect_model_matches(Model model) {
  model->eval();
  NoGradGuard no_grad;
  const jit::GraphModule graph = jit::trace(model, randn({4, 1, 28, 28}));
  expect_onnxruntime_matches(
      graph, [](int64_t n) { return std::vector<Tensor>{randn({n, 1, 28, 28})}; },
      [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{model->forward(x[0])}; }, {4, 3, 9});
}

TEST(OnnxExport, DemoMlp) {
  manual_seed(1);
  expect_model_matches(testing::demo_mlp(0.2));
}

TEST(OnnxExport, DemoCnn) {
  manual_seed(2);
  expect_model_matches(testing::demo_cnn());
}

TEST(OnnxExport, DemoTransformer) {
  manual_seed(3);
  expect_model_matches(testing::TinyTransformer());
}

// Traces `fn` at batch 4 and compares at batches 4 and 2.
void expect_function_matches(const jit::TracedFunction& fn, const InputsAt& inputs) {
  NoGradGuard no_grad;
  const jit::GraphModule graph = jit::trace(fn, inputs(4));
  expect_onnxruntime_matches(graph, inputs, fn, {4, 2});
}

TEST(OnnxExport, UnaryOps) {
  manual_seed(4);
  expect_function_matches(
      [](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        const Tensor p = x.abs() + 0.5;
        return std::vector<Tensor>{x.abs(), -x, x.exp(), p.log(), p.sqrt(), p.rsqrt(), p.reciprocal(), x.sin(),
                                   x.cos(), x.tanh(), x.sigmoid(), x.relu(), F::gelu(x), F::gelu(x, "tanh"),
                                   F::silu(x), x.erf(), x.floor(), x.ceil(), F::softplus(x, 2.0, 1.0),
                                   F::leaky_relu(x, 0.1), F::elu(x, 0.7), p.log1p(), x.expm1(), p.log2(),
                                   x.clamp(-0.5, 0.5), x.sign(), F::hardswish(x), F::hardsigmoid(x), F::mish(x),
                                   F::log_sigmoid(x), x.trunc(), x.asinh(), x.atan()};
      },
      [](int64_t n) { return std::vector<Tensor>{randn({n, 6}) * 2}; });
}

TEST(OnnxExport, BinaryOpsAndPromotion) {
  manual_seed(5);
  expect_function_matches(
      [](const std::vector<Tensor>& in) {
        const Tensor &a = in[0], &b = in[1];
        const Tensor pos = b.abs() + 0.5;
        const Tensor idx = in[2];  // int64
        return std::vector<Tensor>{add(a, b, 2.0), sub(a, b, 0.5), a * b, a / pos, pos.pow(a), maximum(a, b),
                                   minimum(a, b), a * 3.0, a + idx, idx * 2, idx / 2, remainder(a, pos),
                                   remainder(idx, Tensor(full({1}, 3, kInt64))), eq(a, b), idx != 1, lt(a, b),
                                   a <= 0.0, gt(idx, a), ge(a, b), logical_and((a > 0.0), (b > 0.0)),
                                   logical_or((a > 0.0), (b > 0.0)), logical_xor((a > 0.0), (b > 0.0)),
                                   logical_not((a > 0.0)), where(gt(a, b), a, b), masked_fill(a, (b > 0.0), -1.5),
                                   lerp(a, b, 0.25), isnan(a / (b - b)), isinf(a / (b - b))};
      },
      [](int64_t n) {
        return std::vector<Tensor>{randn({n, 5}), randn({n, 5}), randint(-3, 4, {n, 5})};
      });
}

TEST(OnnxExport, Reductions) {
  manual_seed(6);
  expect_function_matches(
      [](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];
        return std::vector<Tensor>{x.sum({1}), x.sum({1, 2}, true), x.mean({2}), x.amax({1}), x.amin({-1}, true),
                                   x.prod({2}), logsumexp(x, {2}), norm(x, 2, {2}), norm(x, 1, {1}),
                                   x.var({2}), x.std({1}, 0, true), x.argmax(1), x.argmin(-1, true),
                                   x.cumsum(2), x.sum(), (x > 0.0).sum({1})};
      },
      [](int64_t n) { return std::vector<Tensor>{randn({n, 3, 4})}; });
}

TEST(OnnxExport, ShapeOps) {
  manual_seed(7);
  expect_function_matches(
      [](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];  // (N, 2, 3, 4)
        const int64_t n = x.size(0);
        const Tensor idx = tensor({2, 0}, kInt64);
        // Shapes with two sizes that depend on N: computed in the ONNX graph.
        const Tensor square = x.reshape({n, 24}).unsqueeze(0).expand({n, n, 24});
        return std::vector<Tensor>{x.reshape({-1, 12}), x.flatten(1), x.permute({0, 3, 1, 2}), x.transpose(1, 3),
                                   x.slice(3, 1, 3), x.select(2, -1), x.unsqueeze(1), x.sum({1}, true).squeeze(1),
                                   x.narrow(1, 0, 1).expand({-1, 5, 3, 4}), cat({x, x * 2}, 1), x.flip({1, 3}),
                                   x.repeat({1, 2, 1, 1}), x.tril(), x.triu(1), index_select(x, 3, idx),
                                   F::pad(x, {1, 2}, "constant", 0.5), x.reshape({-1}).reshape({-1, 6, 4}),
                                   square.reshape({n, n, 2, 12}), x.sum({1, 2, 3}).unsqueeze(0).expand({n, n})};
      },
      [](int64_t n) { return std::vector<Tensor>{randn({n, 2, 3, 4})}; });
}

TEST(OnnxExport, NnOps) {
  manual_seed(8);
  const Tensor weight = randn({4, 3, 3, 3}), bias = randn({4});
  const Tensor mean = randn({3}), var = rand({3}) + 0.5, gamma = randn({3}), beta = randn({3});
  const Tensor table = randn({10, 5});
  expect_function_matches(
      [&](const std::vector<Tensor>& in) {
        const Tensor& x = in[0];  // (N, 3, 8, 8)
        const Tensor& tokens = in[1];  // (N, 4) int64
        const Tensor y = F::conv2d(x, weight, bias, 2, 1);
        return std::vector<Tensor>{y,
                                   F::conv_transpose2d(y, weight, std::nullopt, 2, 1, 1),
                                   F::batch_norm(x, mean, var, gamma, beta, false, 0.1, 1e-3),
                                   F::avg_pool2d(x, {2, 2}),
                                   F::avg_pool2d(x, {3, 3}, {2, 2}, 1, false, false),
                                   F::max_pool2d(x, {3, 3}, {2, 2}, 1),
                                   F::adaptive_avg_pool2d(x, {1, 1}),
                                   F::adaptive_avg_pool2d(x, {2, 4}),
                                   F::softmax(x, 1),
                                   F::log_softmax(x, -1),
                                   F::layer_norm(x, {8, 8}),
                                   F::embedding(tokens, table),
                                   matmul(x, x.transpose(2, 3))};
      },
      [](int64_t n) { return std::vector<Tensor>{randn({n, 3, 8, 8}), randint(0, 10, {n, 4})}; });
}

TEST(OnnxExport, AttentionWithMasks) {
  manual_seed(9);
  const Tensor keep = rand({5, 7}) > 0.3;
  expect_function_matches(
      [&](const std::vector<Tensor>& in) {
        const Tensor &q = in[0], &k = in[1], &v = in[2];
        const Tensor none = zeros({5, 7}, kBool);  // every key masked: the rows are 0
        return std::vector<Tensor>{F::scaled_dot_product_attention(q, k, v, keep),
                                   F::scaled_dot_product_attention(q, k.narrow(2, 0, 5), v.narrow(2, 0, 5),
                                                                   std::nullopt, 0.0, true, 0.5),
                                   F::scaled_dot_product_attention(q, k, v, keep.to(kFloat32) * -2.0),
                                   F::scaled_dot_product_attention(q, k, v, none)};
      },
      [](int64_t n) { return std::vector<Tensor>{randn({n, 2, 5, 8}), randn({n, 2, 7, 8}), randn({n, 2, 7, 3})}; });
}

// The fusion pass's _fused_elementwise nodes export as their programs' ops.
TEST(OnnxExport, FusedGroups) {
  manual_seed(10);
  const jit::TracedFunction fn = [](const std::vector<Tensor>& in) {
    const Tensor &x = in[0], &y = in[1];
    const Tensor z = ((x * 2 + 1).relu() * y).exp();
    return std::vector<Tensor>{z, where(x > y, F::gelu(x, "tanh") - y * 0.5, F::leaky_relu(y, 0.2).clamp(-1, 2)),
                               (x * y + 1).sum(), (x - y).abs().mean({}, /*keepdim=*/true),
                               (x * y - 1).exp().sum({-1}), (x + y).tanh().mean({1}, /*keepdim=*/true)};
  };
  auto inputs = [](int64_t n) { return std::vector<Tensor>{randn({n, 6}), randn({n, 6})}; };
  NoGradGuard no_grad;
  jit::GraphModule graph = jit::trace(fn, inputs(4));
  jit::OptimizeOptions options;
  options.passes = {"fusion"};
  jit::optimize(graph, options);
  int fused = 0;
  for (const auto& node : graph.graph().nodes()) fused += node->name() == "_fused_elementwise" ? 1 : 0;
  ASSERT_GE(fused, 5) << graph.graph_text();  // the four reductions end groups of their own
  EXPECT_NE(graph.graph_text().find("sum("), std::string::npos) << graph.graph_text();
  EXPECT_NE(graph.graph_text().find("mean(t1, dim=-1, keepdim=1)"), std::string::npos) << graph.graph_text();
  expect_onnxruntime_matches(graph, inputs, fn, {4, 3});
}

// ---- errors ----

class OnnxExportErrors : public ::testing::Test {
 protected:
  std::string message_of(const std::function<void()>& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no ember::Error";
    return "";
  }
  // Nothing but `keep` in the scratch directory: no temporary files left.
  void expect_only(const std::vector<std::string>& keep) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path(".")))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, keep);
  }
  ScratchDir dir;
};

TEST_F(OnnxExportErrors, UnmappedOpIsNamedAndNoFileIsWritten) {
  const jit::GraphModule g = jit::trace(
      [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].cumprod(1) + 1}; }, {randn({3, 4})});
  const std::string path = dir.path("model.onnx");
  const std::string message = message_of([&] { onnx::export_graph(g, path); });
  EXPECT_NE(message.find("'cumprod' has no ONNX mapping"), std::string::npos) << message;
  EXPECT_NE(message.find("= cumprod"), std::string::npos) << message;  // the node: "%1 = cumprod"
  expect_only({});
}

TEST_F(OnnxExportErrors, FailedExportLeavesTheOldFile) {
  const std::string path = dir.path("model.onnx");
  testing::write_text(path, "the previous model");
  const jit::GraphModule g = jit::trace(
      [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].relu().cumprod(0)}; }, {randn({3, 4})});
  EXPECT_THROW(onnx::export_graph(g, path), Error);
  EXPECT_EQ(testing::read_text(path), "the previous model");
  expect_only({"model.onnx"});
}

TEST_F(OnnxExportErrors, TrainingModeGraphIsRejected) {
  nn::Sequential mlp = testing::demo_mlp(0.5);
  mlp->train();
  const jit::GraphModule g = jit::trace(mlp, randn({4, 1, 28, 28}));
  const std::string message = message_of([&] { onnx::export_graph(g, dir.path("model.onnx")); });
  EXPECT_NE(message.find("training mode"), std::string::npos) << message;
  expect_only({});
}

TEST_F(OnnxExportErrors, TrainingDropoutIsRejected) {
  const jit::GraphModule g = jit::trace(
      [](const std::vector<Tensor>& x) { return std::vector<Tensor>{F::dropout(x[0], 0.5, true) * 2}; },
      {randn({4, 3})});
  const std::string message = message_of([&] { onnx::export_graph(g, dir.path("model.onnx")); });
  EXPECT_NE(message.find("= dropout"), std::string::npos) << message;
  EXPECT_NE(message.find("random numbers"), std::string::npos) << message;
  expect_only({});
}

TEST_F(OnnxExportErrors, TrainingBatchNormIsRejected) {
  const jit::GraphModule g = jit::trace(
      [](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{F::batch_norm(x[0], std::nullopt, std::nullopt, std::nullopt, std::nullopt, true)};
      },
      {randn({4, 3, 2, 2})});
  const std::string message = message_of([&] { onnx::export_graph(g, dir.path("model.onnx")); });
  EXPECT_NE(message.find("batch_norm"), std::string::npos) << message;
  EXPECT_NE(message.find("training mode"), std::string::npos) << message;
}

TEST_F(OnnxExportErrors, UsedPoolingIndicesAreRejected) {
  const jit::GraphModule g = jit::trace(
      [](const std::vector<Tensor>& x) {
        auto [values, indices] = F::max_pool2d_with_indices(x[0], {2, 2});
        return std::vector<Tensor>{values, indices};
      },
      {randn({2, 3, 4, 4})});
  const std::string message = message_of([&] { onnx::export_graph(g, dir.path("model.onnx")); });
  EXPECT_NE(message.find("max_pool2d_with_indices: its output 1 (the indices) is used"), std::string::npos) << message;
  expect_only({});
}

TEST_F(OnnxExportErrors, InPlaceOpIsRejected) {
  const jit::GraphModule g = jit::trace(
      [](const std::vector<Tensor>& x) {
        Tensor y = x[0] * 2;
        y.relu_();
        return std::vector<Tensor>{y + 1};
      },
      {randn({2, 3})});
  const std::string message = message_of([&] { onnx::export_graph(g, dir.path("model.onnx")); });
  EXPECT_NE(message.find("= relu_: in-place ops have no ONNX equivalent"), std::string::npos) << message;
}

TEST_F(OnnxExportErrors, OnlyOpset17) {
  const jit::GraphModule g =
      jit::trace([](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] * 2}; }, {randn({2, 3})});
  const std::string message = message_of([&] { onnx::export_graph(g, dir.path("m.onnx"), {.opset = 13}); });
  EXPECT_NE(message.find("opset 13"), std::string::npos) << message;
  expect_only({});
}

TEST(OnnxExportOps, TableCoversTheDemoModels) {
  const std::vector<std::string> ops = onnx::exportable_ops();
  for (const char* op : {"view", "addmm", "transpose", "relu", "convolution", "max_pool2d_with_indices", "permute",
                         "clone", "slice", "flash_attention", "add", "layer_norm", "mean"})
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), op)) << op;
  EXPECT_FALSE(std::binary_search(ops.begin(), ops.end(), "dropout"));
}

}  // namespace
}  // namespace ember
