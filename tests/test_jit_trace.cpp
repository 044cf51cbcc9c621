// ember::jit: tracing the demo models, running the graphs, symbolic batch,
// escapes and modes.
#include <gtest/gtest.h>

#include "ember/autograd.h"
#include "ember/jit.h"
#include "jit/graph.h"
#include "test_jit_models.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;

// Bitwise: the graph runs the same kernels on the same inputs as eager.
::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) { return all_close(a, b, 0.0, 0.0); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(JitTrace, MlpGraphEqualsEagerAtOtherBatchSizes) {
  manual_seed(0);
  nn::Sequential mlp = testing::demo_mlp();
  mlp->eval();
  jit::GraphModule g = jit::trace(mlp, randn({4, 1, 28, 28}));
  for (int64_t n : {1, 4, 7}) {
    Tensor x = randn({n, 1, 28, 28});
    EXPECT_TRUE(same_bits(g(x), mlp->forward(x))) << "batch " << n;
  }
  const std::string text = g.graph_text();
  EXPECT_TRUE(contains(text, "graph(%x : Float(*, 1, 28, 28),")) << text;
  EXPECT_TRUE(contains(text, "%1.weight : Float(64, 784)")) << text;
  EXPECT_TRUE(contains(text, "view(%x, size=[*, 784])")) << text;
  EXPECT_TRUE(contains(text, "# mode: eval")) << text;
  EXPECT_TRUE(g.warnings().empty());
}

TEST(JitTrace, CnnGraphEqualsEager) {
  manual_seed(1);
  nn::Sequential cnn = testing::demo_cnn();
  cnn->eval();
  jit::GraphModule g = jit::trace(cnn, randn({2, 1, 28, 28}));
  for (int64_t n : {2, 5}) {
    Tensor x = randn({n, 1, 28, 28});
    EXPECT_TRUE(same_bits(g(x), cnn->forward(x))) << "batch " << n;
  }
  EXPECT_TRUE(contains(g.graph_text(), "convolution(%x, %0.weight, %0.bias")) << g.graph_text();
  EXPECT_TRUE(contains(g.graph_text(), "max_pool2d_with_indices(")) << g.graph_text();
}

TEST(JitTrace, TransformerReshapesBecomeSymbolic) {
  manual_seed(2);
  testing::TinyTransformer model;
  model->eval();
  jit::GraphModule g = jit::trace(model, randn({3, 1, 28, 28}));
  for (int64_t n : {1, 3, 6}) {
    Tensor x = randn({n, 1, 28, 28});
    EXPECT_TRUE(same_bits(g(x), model->forward(x))) << "batch " << n;
  }
  EXPECT_TRUE(contains(g.graph_text(), "[*, 4, 7, 4, 7]")) << g.graph_text();
}

TEST(JitTrace, TransformerInTrainingModeMatchesEagerWithTheSameDraws) {
  manual_seed(15);
  testing::TinyTransformer model;
  model->train();
  jit::GraphModule g = jit::trace(model, randn({3, 1, 28, 28}));
  EXPECT_TRUE(g.warnings().empty()) << g.warnings()[0];  // detach() inside attention keeps the value traced
  Tensor x = randn({5, 1, 28, 28});
  manual_seed(16);
  const Tensor eager = model->forward(x);
  manual_seed(16);
  EXPECT_TRUE(same_bits(g(x), eager));
}

TEST(JitTrace, WrongInputShapeNamesInputExpectedAndActual) {
  nn::Sequential mlp = testing::demo_mlp();
  mlp->eval();
  jit::GraphModule g = jit::trace(mlp, randn({4, 1, 28, 28}));
  EXPECT_EMBER_ERROR(g(randn({3, 1, 28, 27})), "input 'x'", "[3, 1, 28, 27]", "[*, 1, 28, 28]", "dim 3 must be 28");
  EXPECT_EMBER_ERROR(g(randn({3, 784})), "input 'x'", "number of dims");
  EXPECT_EMBER_ERROR(g(randn({3, 1, 28, 28}, kFloat64)), "input 'x'", "dtype");
  EXPECT_EMBER_ERROR(g.forward(std::vector<Tensor>{}), "takes 1 inputs, got 0");
}

TEST(JitTrace, StaticBatchWhenNotDynamic) {
  nn::Sequential mlp = testing::demo_mlp();
  mlp->eval();
  jit::TraceOptions options;
  options.dynamic_batch = false;
  jit::GraphModule g = jit::trace(mlp, randn({4, 1, 28, 28}), options);
  EXPECT_TRUE(contains(g.graph_text(), "%x : Float(4, 1, 28, 28)")) << g.graph_text();
  EXPECT_EMBER_ERROR(g(randn({5, 1, 28, 28})), "input 'x'", "dim 0 must be 4");
}

TEST(JitTrace, GradientsThroughGraphEqualEager) {
  manual_seed(3);
  nn::Sequential cnn = testing::demo_cnn();
  cnn->to(kFloat64);
  cnn->eval();
  jit::GraphModule g = jit::trace(cnn, randn({2, 1, 28, 28}, kFloat64));
  Tensor x = randn({3, 1, 28, 28}, kFloat64);
  Tensor xe = x.clone().requires_grad_(true);
  Tensor xg = x.clone().requires_grad_(true);

  const Tensor ye = cnn->forward(xe);
  (ye * ye).sum().backward();
  std::vector<Tensor> eager_grads;
  for (const Tensor& p : cnn->parameters()) eager_grads.push_back(p.grad().clone());
  cnn->zero_grad();
  const Tensor yg = g(xg);
  (yg * yg).sum().backward();

  EXPECT_TRUE(same_bits(xg.grad(), xe.grad()));
  const std::vector<Tensor> params = g.parameters();
  ASSERT_EQ(params.size(), eager_grads.size());
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(all_close(params[i].grad(), eager_grads[i], 0, 1e-12)) << i;
}

TEST(JitTrace, TrainingModeKeepsDropoutAndDrawsFreshMasks) {
  manual_seed(4);
  nn::Sequential mlp = testing::demo_mlp(0.5);
  mlp->train();
  jit::GraphModule g = jit::trace(mlp, randn({4, 1, 28, 28}));
  EXPECT_TRUE(contains(g.graph_text(), "# mode: train")) << g.graph_text();
  EXPECT_TRUE(contains(g.graph_text(), "dropout(")) << g.graph_text();
  Tensor x = randn({6, 1, 28, 28});
  // Same generator state: the graph draws what eager draws.
  manual_seed(5);
  Tensor eager = mlp->forward(x);
  manual_seed(5);
  Tensor first = g(x);
  EXPECT_TRUE(same_bits(first, eager));
  EXPECT_FALSE(all_close(g(x), first));  // the next run draws a new mask

  mlp->eval();
  jit::GraphModule inference = jit::trace(mlp, randn({4, 1, 28, 28}));
  EXPECT_FALSE(contains(inference.graph_text(), "dropout(")) << inference.graph_text();
}

TEST(JitTrace, BatchNormBuffersUpdatedOnceByTheTrace) {
  manual_seed(6);
  nn::Sequential net(nn::Conv2d(1, 4, 3), nn::BatchNorm2d(4), nn::ReLU());
  nn::Sequential twin(nn::Conv2d(1, 4, 3), nn::BatchNorm2d(4), nn::ReLU());
  twin->load_state_dict(net->state_dict());
  Tensor x = randn({4, 1, 8, 8});
  jit::GraphModule g = jit::trace(net, x);
  twin->forward(x);
  const auto a = net->named_buffers();
  const auto b = twin->named_buffers();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i].value(), b[i].value())) << a[i].key();
  // The graph updates the module's own buffers, as eager does.
  Tensor y = randn({5, 1, 8, 8});
  EXPECT_TRUE(same_bits(g(y), twin->forward(y)));
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i].value(), b[i].value())) << a[i].key();
}

TEST(JitTrace, ItemOnComputedValueWarnsAndStrictRaises) {
  const jit::TracedFunction fn = [](const std::vector<Tensor>& x) {
    const Tensor s = x[0].sum();
    return std::vector<Tensor>{s.item<double>() > 0 ? x[0].relu() : x[0].neg()};
  };
  jit::GraphModule g = jit::trace(fn, {ones({2, 3})});
  ASSERT_FALSE(g.warnings().empty());
  EXPECT_TRUE(contains(g.warnings()[0], "item()")) << g.warnings()[0];
  EXPECT_TRUE(contains(g.warnings()[0], "output of sum")) << g.warnings()[0];
  jit::TraceOptions strict;
  strict.strict = true;
  EXPECT_EMBER_ERROR(jit::trace(fn, {ones({2, 3})}, strict), "item()", "output of sum");
}

TEST(JitTrace, ItemOnConstantIsNoEscape) {
  const Tensor scale = full({}, 2.0);
  const jit::TracedFunction fn = [&](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{x[0] * scale.item<double>()};
  };
  jit::GraphModule g = jit::trace(fn, {ones({2, 3})});
  EXPECT_TRUE(g.warnings().empty());
  EXPECT_TRUE(same_bits(g.forward(std::vector<Tensor>{full({5, 3}, 3.0)})[0], full({5, 3}, 6.0)));
}

TEST(JitTrace, ControlFlowOnBatchSizeKeepsGraphStatic) {
  const jit::TracedFunction fn = [](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{x[0].size(0) % 2 == 0 ? x[0].relu() : x[0].sigmoid()};
  };
  jit::GraphModule g = jit::trace(fn, {randn({4, 3})});
  ASSERT_EQ(g.warnings().size(), 1u);
  EXPECT_TRUE(contains(g.warnings()[0], "depends on the batch size")) << g.warnings()[0];
  EXPECT_TRUE(contains(g.graph_text(), "Float(4, 3)")) << g.graph_text();
  jit::TraceOptions strict;
  strict.strict = true;
  EXPECT_EMBER_ERROR(jit::trace(fn, {randn({4, 3})}, strict), "depends on the batch size", "relu", "sigmoid");
}

TEST(JitTrace, FreezeMakesParametersConstants) {
  nn::Sequential mlp = testing::demo_mlp();
  mlp->eval();
  jit::TraceOptions options;
  options.freeze = true;
  jit::GraphModule g = jit::trace(mlp, randn({2, 1, 28, 28}), options);
  EXPECT_EQ(g.graph().inputs().size(), 1u);
  EXPECT_TRUE(g.parameters().empty());
  Tensor x = randn({3, 1, 28, 28});
  EXPECT_TRUE(same_bits(g(x), mlp->forward(x)));
}

TEST(JitTrace, InPlaceOpsRebindTheirTensor) {
  const jit::TracedFunction fn = [](const std::vector<Tensor>& x) {
    Tensor y = x[0] * 2;
    y.add_(1);
    y.relu_();
    return std::vector<Tensor>{y + x[0]};
  };
  jit::GraphModule g = jit::trace(fn, {randn({4, 3})});
  Tensor x = randn({5, 3});
  EXPECT_TRUE(same_bits(g.forward(std::vector<Tensor>{x})[0], fn({x})[0]));
  EXPECT_TRUE(contains(g.graph_text(), "add_(")) << g.graph_text();
}

TEST(JitTrace, DotExportNamesOpsAndValues) {
  nn::Sequential mlp = testing::demo_mlp();
  mlp->eval();
  jit::GraphModule g = jit::trace(mlp, randn({2, 1, 28, 28}));
  const std::string dot = g.graph_dot();
  EXPECT_TRUE(contains(dot, "digraph ember_graph {")) << dot;
  EXPECT_TRUE(contains(dot, "addmm")) << dot;
  EXPECT_TRUE(contains(dot, "-> out0")) << dot;
}

TEST(JitTrace, TracesDoNotNest) {
  const jit::TracedFunction inner = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] + 1}; };
  const jit::TracedFunction outer = [&](const std::vector<Tensor>& x) { return jit::trace(inner, x).forward(x); };
  EXPECT_EMBER_ERROR(jit::trace(outer, {ones({2})}), "do not nest");
}

TEST(JitTrace, GraphRunInsideATraceIsRecorded) {
  const jit::TracedFunction inner = [](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0].exp()}; };
  jit::GraphModule g = jit::trace(inner, {ones({2, 2})});
  const jit::TracedFunction outer = [&](const std::vector<Tensor>& x) {
    return std::vector<Tensor>{g.forward(x)[0] * 3};
  };
  jit::GraphModule h = jit::trace(outer, {ones({2, 2})});
  EXPECT_TRUE(contains(h.graph_text(), "exp(")) << h.graph_text();
  Tensor x = randn({3, 2});
  EXPECT_TRUE(same_bits(h.forward(std::vector<Tensor>{x})[0], x.exp() * 3));
}

}  // namespace
}  // namespace ember
