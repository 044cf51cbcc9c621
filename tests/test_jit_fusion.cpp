// Elementwise fusion: the fused programs (core/fused_program.h), the pass
// (jit/passes/fusion.cpp) on hand-built and traced graphs, the CPU kernel
// against the unfused graph, autograd through fused groups, archives.
#include <gtest/gtest.h>

#include <filesystem>
#include <cctype>
#include <random>

#include <unistd.h>

#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "ember/autograd.h"
#include "ember/jit.h"
#include "ember/parallel.h"
#include "jit/executor.h"
#include "jit/graph.h"
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

std::string joined(const jit::PassLog& log) {
  std::string s;
  for (const std::string& line : log) s += line + "\n";
  return s;
}

Tensor fused_call(const std::vector<Tensor>& inputs, const std::string& expr) {
  return op::_fused_elementwise.call(TensorList(inputs.begin(), inputs.end()), expr);
}

// ---- programs ----

TEST(FusedProgram, ParsesAndPrintsTheSameText) {
  const std::string text =
      "t0=mul(i0, 2); t1=add(t0, 1, alpha=0.5); t2=relu(t1); t3=where(i2, t2, -inf); t4=clamp(t3, min=-1.5); "
      "t5=leaky_relu(t4, slope=0.2); t6=gelu(t5, approximate=tanh); t7=mul(t6, i1)";
  const fused::FusedProgram p = fused::FusedProgram::parse(text, 3, "test");
  ASSERT_EQ(p.code.size(), 8u);
  EXPECT_EQ(p.str(), text);
  EXPECT_EQ(p.code[1].alpha, 0.5);
  EXPECT_EQ(p.condition_inputs(), (std::vector<char>{0, 0, 1}));
  // Numbers read back to the same double.
  const fused::FusedProgram q = fused::FusedProgram::parse("t0=mul(i0, 0.1)", 1, "test");
  EXPECT_EQ(q.code[0].args[1].number, 0.1);
  EXPECT_EQ(fused::FusedProgram::parse(q.str(), 1, "test").code[0].args[1].number, 0.1);
}

TEST(FusedProgram, ReductionsEndTheProgram) {
  const std::string text = "t0=mul(i0, i1); t1=sum(t0, keepdim=1)";
  const fused::FusedProgram p = fused::FusedProgram::parse(text, 2, "test");
  EXPECT_TRUE(p.reduces());
  EXPECT_TRUE(p.code[1].keepdim);
  EXPECT_EQ(p.str(), text);
}

TEST(FusedProgram, RejectsMalformedPrograms) {
  auto bad = [](const std::string& text, size_t inputs, const char* why) {
    EXPECT_EMBER_ERROR(fused::FusedProgram::parse(text, inputs, "load"), "load", why);
  };
  bad("", 1, "must assign t0");
  bad("t0=exp(i0); ", 1, "must assign t1");
  bad("t1=exp(i0)", 1, "must assign t0");
  bad("t0=system(i0)", 1, "unknown op 'system'");
  bad("t0=exp(i1)", 1, "out of range");
  bad("t0=exp(t0)", 1, "out of range");
  bad("t0=exp(i0); t1=mul(t0, t5)", 1, "out of range");
  bad("t0=exp(i0, i0)", 1, "exp takes 1 operand(s)");
  bad("t0=exp(i0); t1=neg(i0); t2=sin(t1)", 1, "t0 is never used");
  bad("t0=mul(i0)", 1, "expected ','");
  bad("t0=mul(2, 3)", 0, "at least one tensor operand");
  bad("t0=exp(i0)", 2, "input i1 is never used");
  bad("t0=where(i0, i1, i1)", 3, "never used");
  bad("t0=where(1, i0, i1)", 2, "condition must be an input");
  bad("t0=exp(i0, alpha=2)", 1, "exp has no parameter 'alpha'");
  bad("t0=add(i0, i0, alpha=nan)", 1, "must be a number");
  bad("t0=clamp(i0)", 1, "clamp needs min or max");
  bad("t0=gelu(i0, approximate=fast)", 1, "tanh or none");
  bad("t0=exp(i0)x", 1, "expected ';'");
  bad("t0=exp(i99999999999999999999)", 1, "is not an input");
  bad("t0=mul(i0, 1e999)", 1, "expected a number");
  bad("t0=sum(i0); t1=exp(t0)", 1, "only the last instruction of a fused program may reduce");
  bad("t0=sum(i0, keepdim=2)", 1, "keepdim must be 0 or 1");
  bad("t0=exp(i0, keepdim=1)", 1, "exp has no parameter 'keepdim'");
}

// ---- the kernel against the unfused ops ----

// A random program over `inputs` of the given shapes: chains and trees of
// every op, numbers, where with a bool input.
struct RandomCase {
  std::string expr;
  std::vector<Tensor> inputs;
};

// The case's value computed by its unfused ops (the fused kernel's reference).
Tensor unfused_reference(const RandomCase& c) {
  NoGradGuard no_grad;
  return fused::run_unfused(fused::FusedProgram::parse(c.expr, c.inputs.size(), "test"), c.inputs);
}

RandomCase random_case(std::mt19937& rng, DType dtype, const std::vector<std::vector<int64_t>>& shapes,
                       bool non_contiguous) {
  RandomCase c;
  for (size_t k = 0; k < shapes.size(); ++k) {
    Tensor t = randn(shapes[k], dtype);
    if (non_contiguous && k % 2 == 1 && t.dim() >= 2)  // same values, transposed storage
      t = t.transpose(0, 1).contiguous().transpose(0, 1);
    c.inputs.push_back(t);
  }
  const size_t n_float = c.inputs.size();
  c.inputs.push_back(randn(shapes[0], kFloat32).gt(0.0));  // a where condition
  const char* unary[] = {"neg", "abs", "exp", "tanh", "sigmoid", "relu", "silu", "erf", "sin", "floor",
                         "round", "gelu", "leaky_relu", "clamp", "expm1", "log1p", "sqrt", "reciprocal"};
  const char* binary[] = {"add", "sub", "mul", "div", "maximum", "minimum"};
  std::vector<std::string> values;
  for (size_t k = 0; k < n_float; ++k) values.push_back("i" + std::to_string(k));
  int t = 0;
  std::vector<std::string> unused;  // results no later instruction reads yet
  auto emit = [&](const std::string& rhs) {
    std::erase_if(unused, [&](const std::string& u) {
      for (size_t p = rhs.find(u); p != std::string::npos; p = rhs.find(u, p + 1)) {
        const size_t end = p + u.size();
        if ((p == 0 || !std::isalnum(static_cast<unsigned char>(rhs[p - 1]))) &&
            (end == rhs.size() || !std::isdigit(static_cast<unsigned char>(rhs[end]))))
          return true;
      }
      return false;
    });
    c.expr += (t ? "; t" : "t") + std::to_string(t) + "=" + rhs;
    values.push_back("t" + std::to_string(t++));
    unused.push_back(values.back());
  };
  auto pick = [&]() { return values[rng() % values.size()]; };
  auto last = [&]() { return "t" + std::to_string(t - 1); };
  // Every input is used: fold them together first.
  std::string acc = "i0";
  for (size_t k = 1; k < n_float; ++k) {
    emit(std::string(binary[rng() % 6]) + "(" + acc + ", i" + std::to_string(k) + ")");
    acc = last();
  }
  if (n_float == 1) emit("mul(i0, 0.75)");
  for (int step = 0; step < 6; ++step) {
    const int kind = static_cast<int>(rng() % 4);
    const std::string x = pick();
    if (kind == 0) {
      const std::string op = unary[rng() % 18];
      std::string a = x;
      if (op == "sqrt" || op == "log1p" || op == "reciprocal") {  // keep the argument in the domain
        emit("abs(" + x + ")");
        emit("add(" + last() + ", 0.5)");
        a = last();
      }
      if (op == "gelu") emit("gelu(" + a + (rng() % 2 ? ", approximate=tanh)" : ")"));
      else if (op == "leaky_relu") emit("leaky_relu(" + a + ", slope=0.125)");
      else if (op == "clamp") emit("clamp(" + a + ", min=-0.5, max=0.75)");
      else emit(op + "(" + a + ")");
    } else if (kind == 1) {
      const int b = static_cast<int>(rng() % 6);
      emit(std::string(binary[b]) + "(" + x + ", " + pick() + (b < 2 && rng() % 2 ? ", alpha=2)" : ")"));
    } else if (kind == 2) {
      emit("mul(" + x + ", " + std::to_string(static_cast<int>(rng() % 5) - 2) + ".5)");
    } else {
      emit("where(i" + std::to_string(n_float) + ", " + x + ", " + pick() + ")");
    }
  }
  while (unused.size() > 1) emit("add(" + unused[0] + ", " + unused[1] + ")");  // every result reaches the last
  if (c.expr.find("where(") == std::string::npos) c.inputs.pop_back();
  return c;
}

TEST(FusedKernel, MatchesTheUnfusedOpsOnRandomPrograms) {
  std::mt19937 rng(1234);
  manual_seed(5);
  const std::vector<std::vector<std::vector<int64_t>>> shape_sets = {
      {{1}},
      {{7}, {7}},
      {{1000}, {1}},
      {{33, 17}, {17}, {33, 1}},
      {{5, 1, 9}, {1, 4, 9}, {}},
      {{3, 70, 11}, {3, 70, 11}},
      {{4099}, {4099}},  // tiles of 512 plus an odd tail, several parallel chunks
      {{2, 3, 0}, {3, 1}},
  };
  int checked = 0;
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    for (const auto& shapes : shape_sets) {
      for (bool non_contiguous : {false, true}) {
        for (int rep = 0; rep < 3; ++rep) {
          RandomCase c = random_case(rng, dtype, shapes, non_contiguous);
          const Tensor reference = unfused_reference(c);
          for (int threads : {1, 2}) {
            testing::ThreadCount tc(threads);
            const Tensor got = fused_call(c.inputs, c.expr);
            ASSERT_EQ(got.sizes(), reference.sizes()) << c.expr;
            ASSERT_EQ(got.dtype(), dtype);
            // Each op computes as its eager kernel does (float16 and bfloat16
            // in float32, rounded after every op): the same bits.
            EXPECT_TRUE(all_close(got, reference, 0, 0)) << c.expr << " threads " << threads;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 4 * 8 * 2 * 3 * 2);
}

// The same random programs ending in a sum or mean of every element.
TEST(FusedKernel, TrailingReductionsMatchTheUnfusedOps) {
  std::mt19937 rng(99);
  manual_seed(7);
  const std::vector<std::vector<std::vector<int64_t>>> shape_sets = {
      {{1}}, {{7}, {7}}, {{33, 17}, {17}, {33, 1}}, {{3, 70, 11}, {3, 70, 11}}, {{5000}, {1}}, {{2, 0}, {2, 1}}};
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    for (const auto& shapes : shape_sets) {
      for (int rep = 0; rep < 4; ++rep) {
        RandomCase c = random_case(rng, dtype, shapes, rep % 2 == 1);
        const size_t last = fused::FusedProgram::parse(c.expr, c.inputs.size(), "test").code.size() - 1;
        c.expr += "; t" + std::to_string(last + 1) + "=" + (rep < 2 ? "sum" : "mean") + "(t" + std::to_string(last) +
                  (rep % 3 == 0 ? ", keepdim=1)" : ")");
        const Tensor reference = unfused_reference(c);
        for (int threads : {1, 2}) {
          testing::ThreadCount tc(threads);
          const Tensor got = fused_call(c.inputs, c.expr);
          ASSERT_EQ(got.sizes(), reference.sizes()) << c.expr;
          ASSERT_EQ(got.dtype(), dtype);
          // Summed in double here, in the dtype's own accumulator there.
          const double tol = dtype == kFloat64 ? 1e-9 : dtype == kFloat32 ? 1e-4 : 2e-2;
          EXPECT_TRUE(all_close(got, reference, tol, tol)) << c.expr << " " << dtype;
        }
      }
    }
  }
}

TEST(FusedKernel, BitwiseEqualToEagerOnTheBenchChain) {
  manual_seed(6);
  Tensor x = randn({10007}), y = randn({10007});
  const Tensor eager = (((x * 2 + 1).relu()) * y).exp();
  for (int threads : {1, 2}) {
    testing::ThreadCount tc(threads);
    const Tensor got = fused_call({x, y}, "t0=mul(i0, 2); t1=add(t0, 1); t2=relu(t1); t3=mul(t2, i1); t4=exp(t3)");
    EXPECT_TRUE(all_close(got, eager, 0, 0));
  }
}

TEST(FusedKernel, RejectsBadInputs) {
  Tensor x = randn({3}), y = randn({4});
  EXPECT_EMBER_ERROR(fused_call({x, y}, "t0=add(i0, i1)"), "_fused_elementwise", "[3]", "[4]");
  EXPECT_EMBER_ERROR(fused_call({x, randn({3}, kFloat64)}, "t0=add(i0, i1)"), "_fused_elementwise", "input i1",
                     "float64");
  EXPECT_EMBER_ERROR(fused_call({x, x}, "t0=where(i1, i0, 1)"), "input i1", "bool");
  EXPECT_EMBER_ERROR(fused_call({x}, "t0=launch(i0)"), "unknown op 'launch'");
}

// ---- the pass ----

// ((x*2+1).relu()*y).exp() by hand: one fused node, the numbers inlined.
TEST(JitFusion, FusesTheChainIntoOneNode) {
  Graph g;
  Value* x = input(g, "x", {4, 5});
  Value* y = input(g, "y", {5});
  Value* a = node(g, "mul", {v(x), v(g.add_constant(full({}, 2.0, kFloat64)))}, x);
  Value* b = node(g, "add", {v(a), v(g.add_constant(full({}, 1, kInt64))), scalar(1)}, x);
  Value* r = node(g, "relu", {v(b)}, x);
  Value* m = node(g, "mul", {v(r), v(y)}, x);
  Value* e = node(g, "exp", {v(m)}, x);
  g.outputs() = {e};
  std::unique_ptr<Graph> before = g.clone();
  jit::PassLog log;
  EXPECT_EQ(jit::fuse_elementwise(g, log), 1);
  jit::eliminate_dead_code(g, log);
  g.verify("test");
  ASSERT_EQ(g.nodes().size(), 1u) << g.str();
  EXPECT_EQ(g.nodes()[0]->name(), "_fused_elementwise");
  EXPECT_EQ(g.outputs()[0]->id, e->id);  // the root's value keeps its id
  EXPECT_NE(g.str().find("expr=\"t0=mul(i0, 2); t1=add(t0, 1); t2=relu(t1); t3=mul(t2, i1); t4=exp(t3)\""),
            std::string::npos)
      << g.str();
  EXPECT_NE(joined(log).find("fusion: 5 ops (mul, add, relu, mul, exp)"), std::string::npos) << joined(log);
  Tensor xs = randn({4, 5}), ys = randn({5});
  EXPECT_TRUE(all_close(jit::run_graph(g, {xs, ys})[0], jit::run_graph(*before, {xs, ys})[0], 0, 0));
}

TEST(JitFusion, SharedValuesInsideTheGroupAndTrees) {
  Graph g;
  Value* x = input(g, "x", {6});
  Value* y = input(g, "y", {6});
  Value* s = node(g, "sigmoid", {v(x)}, x);
  Value* xs = node(g, "mul", {v(x), v(s)}, x);  // x * sigmoid(x): x read twice
  Value* t = node(g, "tanh", {v(y)}, y);
  Value* sum = node(g, "add", {v(xs), v(t), scalar(2)}, x);  // a tree: two branches
  g.outputs() = {sum};
  std::unique_ptr<Graph> before = g.clone();
  jit::PassLog log;
  EXPECT_EQ(jit::fuse_elementwise(g, log), 1);
  ASSERT_EQ(g.nodes().size(), 1u) << g.str();
  EXPECT_NE(g.str().find("t3=add(t1, t2, alpha=2)"), std::string::npos) << g.str();
  Tensor a = randn({6}), b = randn({6});
  EXPECT_TRUE(all_close(jit::run_graph(g, {a, b})[0], jit::run_graph(*before, {a, b})[0], 1e-6, 1e-6));
}

TEST(JitFusion, SaysWhyCandidatesAreNotFused) {
  Graph g;
  Value* x = input(g, "x", {4});
  Value* h = input(g, "h", {4}, kFloat16);
  Value* cuda = input(g, "c", {4}, kFloat16, Device::cuda(0));
  Value* a = node(g, "exp", {v(x)}, x);
  Value* b = node(g, "neg", {v(a)}, x);         // a escapes: it is also an output
  Value* c = node(g, "relu", {v(b)}, x);
  Value* hc = node(g, "abs", {v(h)}, h);        // float16
  Value* hf = node(g, "mul", {v(c), v(hc)}, x);  // dtype change: not fusible itself
  Value* d = node(g, "sin", {v(hf)}, x);
  Value* cu = node(g, "exp", {v(cuda)}, cuda);  // float16 on CUDA
  Value* cu2 = node(g, "neg", {v(cu)}, cuda);
  Value* mm = node(g, "mm", {v(x), v(x)}, x);   // not elementwise
  Value* e = node(g, "cos", {v(mm)}, x);
  Value* f = node(g, "exp", {v(e)}, x);
  Value* i = node(g, "mul", {v(f), v(f)}, x);   // f read twice inside the group
  Value* w = node(g, "tanh", {v(i)}, x);
  Value* used_twice = node(g, "sigmoid", {v(x)}, x);
  Value* u1 = node(g, "exp", {v(used_twice)}, x);
  Value* u2 = node(g, "log", {v(used_twice)}, x);
  g.outputs() = {a, d, cu2, w, u1, u2};
  jit::PassLog log;
  jit::fuse_elementwise(g, log);
  jit::eliminate_dead_code(g, log);
  g.verify("test");
  const std::string text = joined(log);
  EXPECT_NE(text.find("stays outside the group of %" + std::to_string(c->id) + ": its output %" + std::to_string(a->id) +
                      " is a graph output"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("dtype change"), std::string::npos) << text;
  EXPECT_NE(text.find("not an elementwise op"), std::string::npos) << text;
  EXPECT_NE(text.find("is also used by"), std::string::npos) << text;
  (void)hf;
  // cos, exp, mul, tanh fuse; neg+relu fuse; the cuda pair and the f16 abs stay.
  EXPECT_EQ(count_op(g, "_fused_elementwise"), 2u) << g.str();
  EXPECT_EQ(count_op(g, "abs"), 1u);
  EXPECT_EQ(count_op(g, "neg"), 1u);  // the cuda one
  EXPECT_EQ(count_op(g, "sigmoid"), 1u);
  EXPECT_NE(g.str().find("t0=cos(i0); t1=exp(t0); t2=mul(t1, t1); t3=tanh(t2)"), std::string::npos) << g.str();
}

TEST(JitFusion, LeavesInPlaceAndAliasedMemoryAlone) {
  Graph g;
  Value* x = input(g, "x", {4});
  Value* a = node(g, "exp", {v(x)}, x);
  Value* b = node(g, "neg", {v(a)}, x);
  Value* inplace = node(g, "mul_", {v(a), v(g.add_constant(full({}, 3.0)))}, x);  // writes a
  Value* c = node(g, "add", {v(b), v(inplace), scalar(1)}, x);
  Value* d = node(g, "sin", {v(c)}, x);
  g.outputs() = {d};
  jit::PassLog log;
  jit::fuse_elementwise(g, log);
  // exp, neg and add read memory that mul_ writes: they keep their place.
  EXPECT_EQ(count_op(g, "_fused_elementwise"), 0u) << g.str();
  EXPECT_EQ(count_op(g, "exp"), 1u) << g.str();
  EXPECT_EQ(count_op(g, "neg"), 1u);
  EXPECT_EQ(count_op(g, "mul_"), 1u);
  EXPECT_NE(joined(log).find("aliasing"), std::string::npos) << joined(log);
  Tensor xs = randn({4});
  const Tensor eager = ((xs.exp().neg()) + xs.exp() * 3).sin();
  EXPECT_TRUE(all_close(jit::run_graph(g, {xs})[0], eager, 1e-6, 1e-6));
}

// ---- traced programs: fused vs unfused, threads, broadcasting, strides ----

jit::TraceOptions static_batch() {  // the bias input has no batch dim
  jit::TraceOptions o;
  o.dynamic_batch = false;
  return o;
}

std::vector<Tensor> program(const std::vector<Tensor>& in) {
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  const Tensor& b = in[2];
  Tensor h = (x * 0.5 + b).gelu() * y.sigmoid();
  Tensor k = where(x > 0, h, (y - b).clamp(-1.0, 1.0)).tanh() + 1;
  return {k, (h * h).exp() - x.abs()};
}

TEST(JitFusion, TracedProgramsMatchUnfusedAtAnyThreadCountAndLayout) {
  manual_seed(11);
  for (DType dtype : {kFloat32, kFloat64}) {
    for (int64_t cols : {int64_t{1}, int64_t{13}, int64_t{600}}) {
      jit::TraceOptions topt;
      topt.dynamic_batch = false;  // the bias b has no batch dim
      jit::GraphModule fused =
          jit::trace(program, {randn({5, cols}, dtype), randn({5, cols}, dtype), randn({cols}, dtype)}, topt);
      const jit::GraphModule unfused(std::shared_ptr<Graph>(fused.graph().clone()), {});
      const std::vector<std::string> log = jit::optimize(fused, {{"fusion", "dce"}});
      EXPECT_GE(count_op(fused.graph(), "_fused_elementwise"), 2u) << fused.graph_text() << joined(log);
      for (int64_t batch : {int64_t{5}}) {
        Tensor x = randn({batch, cols}, dtype);
        Tensor y = randn({cols, batch}, dtype).transpose(0, 1);  // non-contiguous
        Tensor b = randn({cols}, dtype);
        const std::vector<Tensor> want = unfused.forward({x, y, b});
        for (int threads : {1, 2}) {
          testing::ThreadCount tc(threads);
          const std::vector<Tensor> got = fused.forward({x, y, b});
          const double tol = dtype == kFloat64 ? 1e-12 : 1e-5;
          for (size_t i = 0; i < got.size(); ++i)
            EXPECT_TRUE(all_close(got[i], want[i], tol, tol)) << dtype << " cols " << cols << " batch " << batch;
        }
      }
    }
  }
}

TEST(JitFusion, DynamicBatchGraphsRunFusedAtOtherBatchSizes) {
  manual_seed(16);
  auto chain = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{(((in[0] * 2 + 1).relu()) * in[1]).exp()}; };
  jit::GraphModule g = jit::trace(chain, {randn({4, 33}), randn({4, 33})});
  jit::optimize(g);
  ASSERT_EQ(g.graph().nodes().size(), 1u) << g.graph_text();
  EXPECT_NE(g.graph_text().find("Float(*, 33) = _fused_elementwise"), std::string::npos) << g.graph_text();
  for (int64_t batch : {int64_t{1}, int64_t{9}, int64_t{2000}}) {
    Tensor x = randn({batch, 33}), y = randn({batch, 33});
    EXPECT_TRUE(all_close(g.forward({x, y})[0], chain({x, y})[0], 0, 0)) << batch;
  }
}

TEST(JitFusion, HalfPrecisionChainsFuseAndEqualEager) {
  manual_seed(17);
  auto chain = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{((in[0] * 0.1 + in[1]).sigmoid() * in[1] - 1.5).gelu()};
  };
  for (DType dtype : {kFloat16, kBFloat16}) {
    Tensor x = randn({3, 77}).to(dtype), y = randn({3, 77}).to(dtype);
    jit::GraphModule g = jit::trace(chain, {x, y});
    jit::optimize(g);
    ASSERT_EQ(count_op(g.graph(), "_fused_elementwise"), 1u) << g.graph_text();
    EXPECT_TRUE(all_close(g.forward({x, y})[0], chain({x, y})[0], 0, 0)) << dtype;
  }
}

TEST(JitFusion, FullSumsAndMeansEndAGroup) {
  manual_seed(18);
  auto fn = [](const std::vector<Tensor>& in) {
    const Tensor t = ((in[0] * in[1] + 1).relu() * 0.5).tanh();
    return std::vector<Tensor>{((in[0] - in[1]).abs() + 2).sum(), (in[0] * 3 + in[1]).exp().mean(), t.sum({0})};
  };
  jit::GraphModule g = jit::trace(fn, {randn({4, 30}, kFloat64), randn({4, 30}, kFloat64)}, static_batch());
  const std::string log = joined(jit::optimize(g));
  EXPECT_EQ(count_op(g.graph(), "_fused_elementwise"), 3u) << g.graph_text() << log;
  EXPECT_EQ(count_op(g.graph(), "sum"), 1u) << g.graph_text();  // over dim 0: not fused
  EXPECT_NE(g.graph_text().find("t3=sum(t2)"), std::string::npos) << g.graph_text();
  EXPECT_NE(g.graph_text().find("t3=mean(t2)"), std::string::npos) << g.graph_text();
  EXPECT_NE(log.find("only sums and means of every element or of the last dim fuse"), std::string::npos) << log;
  Tensor x = randn({4, 30}, kFloat64), y = randn({4, 30}, kFloat64);
  const std::vector<Tensor> got = g.forward({x, y}), want = fn({x, y});
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(all_close(got[i], want[i], 1e-12, 1e-12)) << i;
  // Differentiable through the fused reduction, as eager.
  Tensor xa = x.clone().requires_grad_(), ya = y.clone().requires_grad_();
  Tensor xb = x.clone().requires_grad_(), yb = y.clone().requires_grad_();
  const std::vector<Tensor> e = fn({xa, ya}), o = g.forward({xb, yb});
  (e[0] + e[1] + e[2].sum()).backward();
  (o[0] + o[1] + o[2].sum()).backward();
  EXPECT_TRUE(all_close(xb.grad(), xa.grad(), 1e-10, 1e-10));
  EXPECT_TRUE(all_close(yb.grad(), ya.grad(), 1e-10, 1e-10));
}

TEST(JitFusion, GradientsThroughFusedGroupsEqualEagerInFloat64) {
  manual_seed(12);
  Tensor x0 = randn({4, 6}, kFloat64), y0 = randn({4, 6}, kFloat64), b0 = randn({6}, kFloat64);
  jit::GraphModule g = jit::trace(program, {x0, y0, b0}, static_batch());
  jit::optimize(g);
  ASSERT_GE(count_op(g.graph(), "_fused_elementwise"), 1u);
  auto leaves = [&] {
    return std::vector<Tensor>{x0.clone().requires_grad_(), y0.clone().requires_grad_(), b0.clone().requires_grad_()};
  };
  std::vector<Tensor> eager_in = leaves(), graph_in = leaves();
  std::vector<Tensor> e = program(eager_in);
  (e[0].sum() + e[1].sum()).backward();
  std::vector<Tensor> o = g.forward(graph_in);
  EXPECT_TRUE(o[0].requires_grad());
  (o[0].sum() + o[1].sum()).backward();
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(all_close(graph_in[i].grad(), eager_in[i].grad(), 1e-10, 1e-10)) << i;
}

TEST(JitFusion, SelfCheckCoversTheFusionPass) {
  manual_seed(13);
  jit::GraphModule g = jit::trace(program, {randn({3, 8}), randn({3, 8}), randn({8})}, static_batch());
  jit::OptimizeOptions options;
  options.check = true;
  jit::optimize(g, options);
  ASSERT_GE(count_op(g.graph(), "_fused_elementwise"), 1u);
  Tensor x = randn({3, 8}), y = randn({3, 8}), b = randn({8});
  const std::vector<Tensor> got = g.forward({x, y, b});
  const std::vector<Tensor> want = program({x, y, b});
  EXPECT_TRUE(all_close(got[0], want[0], 1e-5, 1e-5));
  // A wrong fused program is caught and named.
  jit::CheckPlan plan;
  Graph h;
  Value* xi = input(h, "x", {3});
  h.outputs() = {node(h, "exp", {v(node(h, "neg", {v(xi)}, xi))}, xi)};
  plan.stages.push_back({"", std::shared_ptr<Graph>(h.clone())});
  std::shared_ptr<Graph> broken(h.clone());
  jit::PassLog log;
  jit::fuse_elementwise(*broken, log);
  jit::eliminate_dead_code(*broken, log);
  ASSERT_EQ(count_op(*broken, "_fused_elementwise"), 1u);
  broken->nodes()[0]->args[1] = Arg::of_constant(IValue(IValue::Payload(std::string("t0=neg(i0); t1=exp2(t0)"))));
  plan.stages.push_back({"fusion", broken});
  EXPECT_EMBER_ERROR(jit::run_checked(plan, *broken, {randn({3})}), "after pass 'fusion'", "_fused_elementwise",
                     "max abs difference");
}

// The demo models have no chain of two elementwise ops (each add, relu or gelu
// sits between matrix products, views and layer norms): the pass changes
// nothing and says why, and the graphs still equal eager.
TEST(JitFusion, DemoModelsMatchEagerAndTheLogSaysWhyNothingFuses) {
  manual_seed(14);
  testing::TinyTransformer transformer;
  transformer->eval();
  nn::Sequential mlp = testing::demo_mlp();
  mlp->eval();
  jit::GraphModule t = jit::trace(transformer, randn({2, 1, 28, 28}));
  const std::string log = joined(jit::optimize(t));
  EXPECT_NE(log.find("is also used by"), std::string::npos) << log;  // the residual adds feed layer_norm and the next add
  EXPECT_NE(log.find("not an elementwise op the fused kernel has"), std::string::npos) << log;
  Tensor x = randn({3, 1, 28, 28});
  EXPECT_TRUE(all_close(t(x), transformer->forward(x), 1e-6, 1e-6));
  jit::GraphModule m = jit::trace(mlp, randn({2, 1, 28, 28}));
  jit::optimize(m);
  EXPECT_TRUE(all_close(m(x), mlp->forward(x), 1e-6, 1e-6));
}

// ---- archives ----

struct TempFile {
  explicit TempFile(const std::string& name)
      : path((std::filesystem::temp_directory_path() / ("ember_fusion_" + std::to_string(::getpid()) + "_" + name))
                 .string()) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

TEST(JitFusion, FusedGraphsRoundTripThroughArchives) {
  manual_seed(15);
  jit::GraphModule g = jit::trace(program, {randn({3, 8}), randn({3, 8}), randn({8})}, static_batch());
  jit::optimize(g);
  TempFile file("fused.emb");
  jit::save(g, file.path);
  jit::GraphModule loaded = jit::load(file.path);
  EXPECT_EQ(loaded.graph_text(), g.graph_text());
  Tensor x = randn({3, 8}), y = randn({3, 8}), b = randn({8});
  const std::vector<Tensor> a = g.forward({x, y, b}), c = loaded.forward({x, y, b});
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(all_close(a[i], c[i], 0, 0));
}

TEST(JitFusion, LoadRejectsMalformedFusedPrograms) {
  for (const char* expr : {"t0=exp(i0); t1=system(t0)", "t0=exp(i0)", "t0=add(i0, i1); t1=neg(t7)", "t0=mul(i0,"}) {
    Graph g;
    Value* x = input(g, "x", {3});
    Value* y = input(g, "y", {3});
    Arg list;
    list.kind = Arg::Kind::ValueList;
    list.values = {x, y};
    g.outputs() = {node(g, "_fused_elementwise", {list, Arg::of_constant(IValue(IValue::Payload(std::string(expr))))}, x)};
    TempFile file("bad.emb");
    jit::save(jit::GraphModule(std::shared_ptr<Graph>(g.clone()), {}), file.path);
    SCOPED_TRACE(expr);
    EXPECT_EMBER_ERROR(jit::load(file.path), "jit::load", "_fused_elementwise", "fused program");
  }
}

}  // namespace
}  // namespace ember
