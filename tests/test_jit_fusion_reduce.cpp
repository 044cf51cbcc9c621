// Fused groups ending in a sum or mean over the last dim (Note [Fused
// elementwise programs] in core/fused_program.h): the program text, the CPU
// kernel against the unfused ops at 1 and 2 threads, the fusion pass on
// traced programs and what it leaves alone, gradients, archives and the
// loader's checks.
#include <gtest/gtest.h>

#include <filesystem>

#include <unistd.h>

#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "ember/autograd.h"
#include "ember/jit.h"
#include "jit/graph.h"
#include "tests/jit_graph_builder.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;
using namespace testing::jit_graph;

Tensor fused_call(const std::vector<Tensor>& inputs, const std::string& expr) {
  return op::_fused_elementwise.call(TensorList(inputs.begin(), inputs.end()), expr);
}

std::string joined(const std::vector<std::string>& log) {
  std::string s;
  for (const std::string& line : log) s += line + "\n";
  return s;
}

struct TempFile {
  explicit TempFile(const std::string& name)
      : path((std::filesystem::temp_directory_path() / ("ember_jit_" + std::to_string(::getpid()) + "_" + name))
                 .string()) {}
  ~TempFile() { std::filesystem::remove(path); }
  std::string path;
};

jit::TraceOptions static_batch() {
  jit::TraceOptions o;
  o.dynamic_batch = false;
  return o;
}

TEST(FusedProgram, LastDimReductionsParseAndPrint) {
  const std::string text = "t0=mul(i0, i1); t1=mean(t0, dim=-1, keepdim=1)";
  const fused::FusedProgram p = fused::FusedProgram::parse(text, 2, "test");
  EXPECT_TRUE(p.reduces());
  EXPECT_TRUE(p.reduces_rows());
  EXPECT_TRUE(p.code[1].keepdim);
  EXPECT_EQ(p.str(), text);
  EXPECT_FALSE(fused::FusedProgram::parse("t0=exp(i0); t1=sum(t0)", 1, "test").reduces_rows());
  auto bad = [](const std::string& t, const char* why) {
    EXPECT_EMBER_ERROR(fused::FusedProgram::parse(t, 1, "load"), "load", why);
  };
  bad("t0=exp(i0); t1=sum(t0, dim=0)", "dim must be -1");
  bad("t0=exp(i0); t1=sum(t0, dim=-2)", "dim must be -1");
  bad("t0=exp(i0); t1=sum(t0, dim=x)", "expected a number");
  bad("t0=exp(i0, dim=-1)", "exp has no parameter 'dim'");
  bad("t0=sum(i0, dim=-1); t1=exp(t0)", "only the last instruction");
}

// Programs ending in a last-dim sum or mean, on inputs of several layouts:
// the kernel equals the unfused ops within the accumulation's rounding, and
// gives the same bits on 1 and 2 threads.
TEST(FusedKernel, LastDimReductionsMatchTheUnfusedOps) {
  manual_seed(31);
  struct Case {
    const char* body;  // the elementwise part, ending in t2
    std::vector<std::vector<int64_t>> shapes;
  };
  const std::vector<Case> cases = {
      {"t0=mul(i0, i1); t1=add(t0, 1); t2=exp(t1)", {{7}, {7}}},
      {"t0=mul(i0, i1); t1=add(t0, i2); t2=tanh(t1)", {{33, 17}, {17}, {33, 1}}},
      {"t0=sub(i0, i1); t1=abs(t0); t2=mul(t1, 0.5)", {{3, 70, 11}, {3, 70, 11}}},
      {"t0=mul(i0, 2); t1=relu(t0); t2=add(t1, i1)", {{2, 5000}, {1}}},       // rows longer than a tile
      {"t0=mul(i0, 2); t1=relu(t0); t2=add(t1, i1)", {{3000, 3}, {3}}},       // many short rows per tile
      {"t0=mul(i0, i1); t1=neg(t0); t2=sigmoid(t1)", {{4, 1}, {4, 6}}},       // broadcast row
      {"t0=mul(i0, i1); t1=neg(t0); t2=sigmoid(t1)", {{2, 0}, {2, 1}}},       // empty rows
      {"t0=mul(i0, i1); t1=neg(t0); t2=sigmoid(t1)", {{0, 5}, {5}}},          // no rows
  };
  for (DType dtype : {kFloat32, kFloat64, kFloat16, kBFloat16}) {
    for (const Case& c : cases) {
      for (const char* tail : {"t3=sum(t2, dim=-1)", "t3=mean(t2, dim=-1)", "t3=sum(t2, dim=-1, keepdim=1)"}) {
        const std::string expr = std::string(c.body) + "; " + tail;
        std::vector<Tensor> inputs;
        for (size_t k = 0; k < c.shapes.size(); ++k) {
          Tensor t = randn(c.shapes[k], kFloat64).to(dtype);
          if (k == 0 && t.dim() == 3) t = t.transpose(0, 2).contiguous().transpose(0, 2);  // strided
          inputs.push_back(t);
        }
        const fused::FusedProgram p = fused::FusedProgram::parse(expr, inputs.size(), "test");
        Tensor reference;
        {
          NoGradGuard no_grad;
          reference = fused::run_unfused(p, inputs);
        }
        Tensor one_thread;
        for (int threads : {1, 2}) {
          testing::ThreadCount tc(threads);
          const Tensor got = fused_call(inputs, expr);
          ASSERT_EQ(got.sizes(), reference.sizes()) << expr;
          ASSERT_EQ(got.dtype(), dtype);
          const double tol = dtype == kFloat64 ? 1e-12 : dtype == kFloat32 ? 1e-5 : 2e-2;
          EXPECT_TRUE(all_close(got, reference, tol, tol)) << expr << " " << dtype << " " << got << reference;
          if (threads == 1) one_thread = got;
          else EXPECT_TRUE(all_close(got, one_thread, 0, 0)) << expr << " " << dtype << ": 2 threads differ from 1";
        }
      }
    }
  }
}

TEST(FusedKernel, LastDimReductionOfZeroDimInputsIsAnError) {
  EXPECT_EMBER_ERROR(fused_call({randn({})}, "t0=exp(i0); t1=sum(t0, dim=-1)"), "_fused_elementwise",
                     "reduces the last dim", "0-d");
}

TEST(JitFusion, LastDimSumsAndMeansEndAGroup) {
  manual_seed(32);
  auto fn = [](const std::vector<Tensor>& in) {
    const Tensor t = ((in[0] * in[1] + 1).relu() * 0.5).tanh();
    return std::vector<Tensor>{t.sum({-1}), (in[0] - in[1]).exp().mean({1}, /*keepdim=*/true),
                               (in[0] * 2 + 1).sum({0})};
  };
  jit::GraphModule g = jit::trace(fn, {randn({4, 30}, kFloat64), randn({4, 30}, kFloat64)}, static_batch());
  const std::string log = joined(jit::optimize(g));
  EXPECT_EQ(count_op(g.graph(), "_fused_elementwise"), 3u) << g.graph_text() << log;
  EXPECT_EQ(count_op(g.graph(), "sum"), 1u) << g.graph_text();  // over dim 0: not fused
  EXPECT_NE(g.graph_text().find("t5=sum(t4, dim=-1)"), std::string::npos) << g.graph_text();
  EXPECT_NE(g.graph_text().find("t2=mean(t1, dim=-1, keepdim=1)"), std::string::npos) << g.graph_text();
  EXPECT_NE(log.find("reduces over some dims (only sums and means of every element or of the last dim fuse)"),
            std::string::npos)
      << log;
  Tensor x = randn({4, 30}, kFloat64), y = randn({4, 30}, kFloat64);
  const std::vector<Tensor> got = g.forward({x, y}), want = fn({x, y});
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(all_close(got[i], want[i], 1e-12, 1e-12)) << i;
  // Gradients through the fused reductions equal eager's.
  Tensor xa = x.clone().requires_grad_(), ya = y.clone().requires_grad_();
  Tensor xb = x.clone().requires_grad_(), yb = y.clone().requires_grad_();
  const std::vector<Tensor> e = fn({xa, ya}), o = g.forward({xb, yb});
  (e[0].sum() + e[1].sum() + e[2].sum()).backward();
  (o[0].sum() + o[1].sum() + o[2].sum()).backward();
  EXPECT_TRUE(all_close(xb.grad(), xa.grad(), 1e-10, 1e-10));
  EXPECT_TRUE(all_close(yb.grad(), ya.grad(), 1e-10, 1e-10));
  // The archive keeps the program; the self-check accepts the fused graph.
  TempFile file("rows.emb");
  jit::save(g, file.path);
  jit::GraphModule loaded = jit::load(file.path);
  EXPECT_EQ(loaded.graph_text(), g.graph_text());
  const std::vector<Tensor> again = loaded.forward({x, y});
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(all_close(again[i], got[i], 0, 0)) << i;
  jit::GraphModule checked = jit::trace(fn, {x, y}, static_batch());
  jit::OptimizeOptions check;
  check.check = true;
  jit::optimize(checked, check);
  EXPECT_NO_THROW(checked.forward({x, y}));
}

TEST(JitFusion, LastDimReductionsLeaveEscapingValuesAndOtherDimsAlone) {
  manual_seed(33);
  // The group's value is also a graph output: the reduction cannot take it.
  auto escapes = [](const std::vector<Tensor>& in) {
    const Tensor t = (in[0] * 2).exp();
    return std::vector<Tensor>{t, t.sum({-1})};
  };
  jit::GraphModule g = jit::trace(escapes, {randn({3, 8})}, static_batch());
  const std::string log = joined(jit::optimize(g));
  EXPECT_EQ(count_op(g.graph(), "sum"), 1u) << g.graph_text();
  EXPECT_NE(log.find("is a graph output"), std::string::npos) << log;
  // A reduction over two dims, or one that converts the dtype, stays a node.
  auto others = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{(in[0] * 2).exp().sum({0, 1}), (in[0] + 1).exp().sum({-1}, false, kFloat64)};
  };
  jit::GraphModule h = jit::trace(others, {randn({3, 8})}, static_batch());
  const std::string log2 = joined(jit::optimize(h));
  EXPECT_EQ(count_op(h.graph(), "sum"), 2u) << h.graph_text();
  EXPECT_NE(log2.find("converts the dtype"), std::string::npos) << log2;
}

// A hand-built fused node: the loader checks the program's output rank
// against its inputs'.
void save_fused(const char* expr, IntArrayRef in_shape, IntArrayRef out_shape, const std::string& path) {
  jit::Graph g;
  jit::Value* x = input(g, "x", in_shape);
  jit::Value* shaped = input(g, "shaped", out_shape);
  jit::Arg list;
  list.kind = jit::Arg::Kind::ValueList;
  list.values = {x};
  g.outputs() = {node(g, "_fused_elementwise", {list, c(std::string(expr))}, shaped)};
  jit::save(jit::GraphModule(std::shared_ptr<jit::Graph>(g.clone()), {}), path);
}

TEST(JitFusion, LoadRejectsFusedNodesWhoseOutputRankIsWrong) {
  TempFile file("rank.emb");
  save_fused("t0=exp(i0); t1=sum(t0, dim=-1)", {3, 4}, {3}, file.path);
  EXPECT_NO_THROW(jit::load(file.path));
  save_fused("t0=exp(i0); t1=sum(t0, dim=-1, keepdim=1)", {3, 4}, {3, 1}, file.path);
  EXPECT_NO_THROW(jit::load(file.path));
  save_fused("t0=exp(i0); t1=sum(t0, dim=-1)", {3, 4}, {3, 4}, file.path);
  EXPECT_EMBER_ERROR(jit::load(file.path), "jit::load", "gives rank 1", "has rank 2");
  save_fused("t0=exp(i0); t1=sum(t0, dim=-1)", {}, {}, file.path);
  EXPECT_EMBER_ERROR(jit::load(file.path), "jit::load", "reduces the last dim", "0-d");
  save_fused("t0=exp(i0); t1=mean(t0)", {3, 4}, {3}, file.path);
  EXPECT_EMBER_ERROR(jit::load(file.path), "jit::load", "gives rank 0");
  save_fused("t0=exp(i0); t1=relu(t0)", {3, 4}, {4}, file.path);
  EXPECT_EMBER_ERROR(jit::load(file.path), "jit::load", "gives rank 2");
  save_fused("t0=exp(i0); t1=sum(t0, dim=1)", {3, 4}, {3}, file.path);
  EXPECT_EMBER_ERROR(jit::load(file.path), "jit::load", "dim must be -1");
}

}  // namespace
}  // namespace ember
