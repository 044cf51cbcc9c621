// ember::jit passes on hand-built graphs: what each pass changes, and what it
// must leave alone (in-place ops, aliased memory, random ops, dtype changes).
#include <gtest/gtest.h>

#include "ember/autograd.h"
#include "ember/jit.h"
#include "jit/graph.h"
#include "jit/executor.h"
#include "jit/optimize.h"
#include "jit/passes/pass.h"
#include "tests/jit_graph_builder.h"
#include "test_jit_models.h"
#include "test_util.h"

namespace ember {
namespace {

using jit::Arg;
using jit::Graph;
using jit::Value;
using testing::all_close;

using namespace testing::jit_graph;

std::vector<Tensor> run(const Graph& g, std::vector<Tensor> inputs) { return jit::run_graph(g, inputs); }

TEST(JitDce, RemovesUnusedNodesButNotSideEffects) {
  Graph g;
  Value* x = input(g, "x", {4});
  Value* used = node(g, "exp", {v(x)}, x);
  node(g, "relu", {v(x)}, x);                                              // unused: removed
  Value* y = node(g, "mul", {v(x), v(g.add_constant(full({}, 2.0)))}, x);  // unused: removed
  (void)y;
  Value* z = node(g, "neg", {v(x)}, x);
  node(g, "add_", {v(z), v(used), scalar(1)}, x);                          // in place: kept
  node(g, "dropout", {v(x), c(0.5), c(int64_t{0}), c(int64_t{0})}, x);    // random: kept
  g.outputs().push_back(used);
  jit::PassLog log;
  EXPECT_EQ(jit::eliminate_dead_code(g, log), 3);  // relu, mul, and the constant 2
  EXPECT_EQ(count_op(g, "relu"), 0u);
  EXPECT_EQ(count_op(g, "mul"), 0u);
  EXPECT_EQ(count_op(g, "add_"), 1u);
  EXPECT_EQ(count_op(g, "neg"), 1u);  // read by the in-place add_
  EXPECT_EQ(count_op(g, "dropout"), 1u);
  EXPECT_TRUE(g.constants().empty());
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log[0].find("dce: removed"), std::string::npos) << log[0];
  g.verify("test");
}

TEST(JitCse, MergesEqualNodes) {
  Graph g;
  Value* x = input(g, "x", {3});
  Value* a = node(g, "exp", {v(x)}, x);
  Value* b = node(g, "exp", {v(x)}, x);
  Value* s1 = node(g, "add", {v(a), v(x), scalar(2)}, x);
  Value* s2 = node(g, "add", {v(b), v(x), scalar(2)}, x);  // same once b is a
  Value* s3 = node(g, "add", {v(a), v(x), scalar(3)}, x);  // other alpha: kept
  g.outputs() = {node(g, "mul", {v(s1), v(s2)}, x), s3};
  const Tensor in = randn({3});
  const std::vector<Tensor> before = run(g, {in});
  jit::PassLog log;
  EXPECT_EQ(jit::eliminate_common_subexpressions(g, log), 2);
  EXPECT_EQ(count_op(g, "exp"), 1u);
  EXPECT_EQ(count_op(g, "add"), 2u);
  const std::vector<Tensor> after = run(g, {in});
  EXPECT_TRUE(all_close(after[0], before[0], 0, 0));
  EXPECT_TRUE(all_close(after[1], before[1], 0, 0));
  EXPECT_NE(log[0].find("cse: "), std::string::npos);
}

TEST(JitCse, LeavesMutatedMemoryAndRandomOpsAlone) {
  Graph g;
  Value* x0 = input(g, "x", {3});
  Value* x = node(g, "clone", {v(x0)}, x0);
  Value* a = node(g, "exp", {v(x)}, x);
  Value* view = node(g, "view", {v(x), c(std::vector<int64_t>{3})}, x);
  node(g, "add_", {v(view), v(a), scalar(1)}, x);  // writes x through a view
  Value* b = node(g, "exp", {v(x)}, x);            // reads the new x: not a
  Value* d1 = node(g, "dropout", {v(x0), c(0.5), c(int64_t{1}), c(int64_t{0})}, x0);
  Value* d2 = node(g, "dropout", {v(x0), c(0.5), c(int64_t{1}), c(int64_t{0})}, x0);
  g.outputs() = {a, b, d1, d2};
  jit::PassLog log;
  EXPECT_EQ(jit::eliminate_common_subexpressions(g, log), 0);
  EXPECT_EQ(count_op(g, "exp"), 2u);
  EXPECT_EQ(count_op(g, "dropout"), 2u);
}

TEST(JitConstantFolding, FoldsChainsOfConstants) {
  Graph g;
  Value* x = input(g, "x", {2});
  Value* c1 = g.add_constant(full({2}, 3.0));
  Value* c2 = g.add_constant(full({2}, 4.0));
  Value* sum = node(g, "add", {v(c1), v(c2), scalar(1)}, c1);
  Value* e = node(g, "neg", {v(sum)}, c1);
  g.outputs() = {node(g, "mul", {v(x), v(e)}, x)};
  jit::PassLog log;
  EXPECT_EQ(jit::fold_constants(g, log), 2);
  EXPECT_EQ(g.nodes().size(), 1u);
  ASSERT_EQ(g.constants().size(), 1u);
  EXPECT_TRUE(all_close(g.constants()[0]->constant, full({2}, -7.0), 0, 0));
  EXPECT_TRUE(all_close(run(g, {full({2}, 2.0)})[0], full({2}, -14.0), 0, 0));
}

TEST(JitConstantFolding, LeavesRandomAndInPlaceOpsAlone) {
  Graph g;
  Value* x = input(g, "x", {2});
  Value* c1 = g.add_constant(full({2}, 3.0));
  Value* drop = node(g, "dropout", {v(c1), c(0.5), c(int64_t{1}), c(int64_t{0})}, c1);
  Value* c2 = g.add_constant(full({2}, 1.0));
  Value* inplace = node(g, "mul_", {v(c2), v(c1)}, c1);
  g.outputs() = {node(g, "add", {v(x), v(drop), scalar(1)}, x), inplace};
  jit::PassLog log;
  EXPECT_EQ(jit::fold_constants(g, log), 0);
  EXPECT_EQ(g.nodes().size(), 3u);
}

TEST(JitSimplify, DropsIdentities) {
  Graph g;
  Value* x0 = input(g, "x", {2, 3});
  Value* x = node(g, "relu", {v(x0)}, x0);
  Value* m = node(g, "mul", {v(x), v(g.add_constant(full({}, 1.0)))}, x);
  Value* a = node(g, "add", {v(m), v(g.add_constant(zeros({3}))), scalar(1)}, x);
  Value* t1 = node(g, "transpose", {v(a), c(int64_t{0}), c(int64_t{1})}, a);
  t1->shape = jit::static_shape({3, 2});
  Value* t2 = node(g, "transpose", {v(t1), c(int64_t{-1}), c(int64_t{0})}, a);
  Value* v1 = node(g, "view", {v(t2), c(std::vector<int64_t>{6})}, a);
  v1->shape = jit::static_shape({6});
  Value* v2 = node(g, "view", {v(v1), c(std::vector<int64_t>{3, 2})}, a);
  v2->shape = jit::static_shape({3, 2});
  g.outputs() = {node(g, "exp", {v(v2)}, v2)};
  const Tensor in = randn({2, 3});
  const Tensor before = run(g, {in})[0];
  jit::PassLog log;
  EXPECT_EQ(jit::simplify_algebra(g, log), 4);  // mul, add, the transpose pair, the view chain
  jit::eliminate_dead_code(g, log);
  EXPECT_EQ(count_op(g, "mul"), 0u);
  EXPECT_EQ(count_op(g, "add"), 0u);
  EXPECT_EQ(count_op(g, "transpose"), 0u);
  EXPECT_EQ(count_op(g, "view"), 1u);
  EXPECT_TRUE(all_close(run(g, {in})[0], before, 0, 0));
}

TEST(JitSimplify, KeepsDtypeChangesOutputsAndMutatedMemory) {
  Graph g;
  Value* i = input(g, "i", {3}, kInt64);
  Value* one = g.add_constant(full({}, 1.0));
  one->constant.impl()->set_wrapped_number(false);  // a real float tensor: int * float is float
  Value* f = node(g, "mul", {v(i), v(one)}, i);
  f->dtype = kFloat32;
  Value* x = input(g, "x", {3});
  Value* same = node(g, "mul", {v(x), v(g.add_constant(full({}, 1.0)))}, x);  // output = input: kept
  Value* y = node(g, "exp", {v(x)}, x);
  Value* y1 = node(g, "add", {v(y), v(g.add_constant(zeros({3}))), scalar(1)}, x);
  node(g, "relu_", {v(y)}, x);  // y is written: y + 0 must stay a copy
  g.outputs() = {f, same, y1};
  jit::PassLog log;
  EXPECT_EQ(jit::simplify_algebra(g, log), 0);
  EXPECT_EQ(count_op(g, "mul"), 2u);
  EXPECT_EQ(count_op(g, "add"), 1u);
}

TEST(JitBatchNormFolding, FoldsFrozenEvalConvAndLinear) {
  manual_seed(7);
  nn::Sequential net(nn::Conv2d(2, 4, 3), nn::BatchNorm2d(4), nn::ReLU(), nn::Flatten(), nn::Linear(4 * 6 * 6, 5),
                     nn::BatchNorm1d(5));
  net->train();
  for (int i = 0; i < 3; ++i) net->forward(randn({8, 2, 8, 8}) * 2 + 1);  // non-trivial running statistics
  net->eval();
  jit::TraceOptions freeze;
  freeze.freeze = true;
  jit::GraphModule g = jit::trace(net, randn({2, 2, 8, 8}), freeze);
  EXPECT_EQ(count_op(g.graph(), "batch_norm"), 2u);
  const std::vector<std::string> log = jit::optimize(g, {{"batchnorm_folding", "dce"}});
  EXPECT_EQ(count_op(g.graph(), "batch_norm"), 0u) << g.graph_text();
  EXPECT_NE(log[0].find("batchnorm_folding: folded"), std::string::npos) << log[0];
  Tensor x = randn({3, 2, 8, 8});
  EXPECT_TRUE(all_close(g(x), net->forward(x), 1e-5, 1e-5));
}

TEST(JitBatchNormFolding, KeepsTrainingModeAndUnfrozenWeights) {
  nn::Sequential net(nn::Conv2d(2, 4, 3), nn::BatchNorm2d(4));
  net->eval();
  jit::GraphModule unfrozen = jit::trace(net, randn({2, 2, 8, 8}));
  std::vector<std::string> log = jit::optimize(unfrozen, {{"batchnorm_folding"}});
  EXPECT_EQ(count_op(unfrozen.graph(), "batch_norm"), 1u);
  EXPECT_NE(log[0].find("graph inputs"), std::string::npos) << log[0];

  net->train();
  jit::TraceOptions freeze;
  freeze.freeze = true;
  jit::GraphModule training = jit::trace(net, randn({2, 2, 8, 8}), freeze);
  log = jit::optimize(training, {{"batchnorm_folding"}});
  EXPECT_EQ(count_op(training.graph(), "batch_norm"), 1u);
  EXPECT_NE(log[0].find("training mode"), std::string::npos) << log[0];
}

TEST(JitOptimize, UnknownPassIsAnError) {
  jit::GraphModule g = jit::trace([](const std::vector<Tensor>& x) { return std::vector<Tensor>{x[0] + 1}; },
                                  {ones({2})});
  EXPECT_EMBER_ERROR(jit::optimize(g, {{"unroll"}}), "unknown pass 'unroll'", "fusion", "dce");
}

TEST(JitOptimize, DemoModelsWithSelfCheckEqualEager) {
  manual_seed(8);
  testing::TinyTransformer transformer;
  transformer->eval();
  nn::Sequential cnn = testing::demo_cnn();
  cnn->eval();
  for (int which = 0; which < 2; ++which) {
    jit::GraphModule g = which == 0 ? jit::trace(transformer, randn({2, 1, 28, 28})) : jit::trace(cnn, randn({2, 1, 28, 28}));
    jit::OptimizeOptions options;
    options.check = true;
    jit::optimize(g, options);
    Tensor x = randn({3, 1, 28, 28});
    const Tensor eager = which == 0 ? transformer->forward(x) : cnn->forward(x);
    EXPECT_TRUE(all_close(g(x), eager, 1e-6, 1e-6)) << which;
  }
}

TEST(JitOptimize, GradientsThroughOptimisedGraphEqualEager) {
  manual_seed(9);
  nn::Sequential mlp = testing::demo_mlp();
  mlp->to(kFloat64);
  mlp->eval();
  jit::GraphModule g = jit::trace(mlp, randn({2, 1, 28, 28}, kFloat64));
  jit::optimize(g);
  Tensor x = randn({3, 1, 28, 28}, kFloat64);
  mlp->forward(x).sum().backward();
  std::vector<Tensor> eager;
  for (const Tensor& p : mlp->parameters()) eager.push_back(p.grad().clone());
  mlp->zero_grad();
  g(x).sum().backward();
  const std::vector<Tensor> params = g.parameters();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(all_close(params[i].grad(), eager[i], 1e-10, 1e-10)) << i;
}

TEST(JitSelfCheck, NamesThePassAndTheValueThatDiffers) {
  Graph g;
  Value* x = input(g, "x", {3});
  Value* e = node(g, "exp", {v(x)}, x);
  g.outputs() = {node(g, "mul", {v(e), v(g.add_constant(full({3}, 2.0)))}, x)};
  jit::CheckPlan plan;
  plan.stages.push_back({"", std::shared_ptr<Graph>(g.clone())});
  std::shared_ptr<Graph> broken(g.clone());
  broken->constants()[0]->constant = full({3}, 2.5);  // what a wrong pass might do
  plan.stages.push_back({"simplify", broken});
  EXPECT_EMBER_ERROR(jit::run_checked(plan, *broken, {randn({3})}), "after pass 'simplify'", "%3 (output of %3 = mul(%1, %2))",
                     "max abs difference");
  plan.stages.pop_back();
  plan.stages.push_back({"cse", std::shared_ptr<Graph>(g.clone())});
  EXPECT_TRUE(all_close(jit::run_checked(plan, g, {full({3}, 0.0)})[0], full({3}, 2.0), 0, 0));
}

}  // namespace
}  // namespace ember
