// Fused groups on CUDA (Note [Fused groups on CUDA] in
// kernels/cuda/cuda_fused_ops.cpp): a program traced on CUDA tensors is fused
// by the pass and its graph gives the CPU fused kernel's values. On a GPU
// (label cuda) that runs the NVRTC-compiled kernel; in the emulation build
// (label cuda-emu) the group's program runs as the emulated device's
// unfused kernels.
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "ember/autograd.h"
#include "ember/jit.h"
#include "jit/graph.h"

namespace ember {
namespace {

using cuda_testing::kCuda;
using cuda_testing::random_cpu;
using testing::all_close;

size_t count_op(const jit::GraphModule& g, const std::string& name) {
  size_t n = 0;
  for (const auto& node : g.graph().nodes()) n += node->name() == name;
  return n;
}

std::string joined(const std::vector<std::string>& log) {
  std::string s;
  for (const std::string& line : log) s += line + "\n";
  return s;
}

jit::TraceOptions static_batch() {
  jit::TraceOptions o;
  o.dynamic_batch = false;
  return o;
}

// A chain, a tree with a broadcast bias and a where, a full and a last-dim sum.
std::vector<Tensor> program(const std::vector<Tensor>& in) {
  const Tensor &x = in[0], &y = in[1], &b = in[2];
  const Tensor chain = ((x * 2 + 1).relu() * y).exp();
  const Tensor tree = where(x > y, (x + b).tanh() - y * 0.5, (y - b).sigmoid());
  return {chain, tree, (x * y + 1).abs().sum(), ((x - b) * y).neg().sum({-1}), (x * 0.5 + y).sum({-1}, true)};
}

TEST(CudaFused, TracedGroupsFuseOnCudaAndMatchTheCpuKernel) {
  REQUIRE_CUDA();
  manual_seed(41);
  for (DType dtype : {kFloat32, kFloat64}) {
    const std::vector<Tensor> cpu = {random_cpu({5, 37}, dtype), random_cpu({5, 37}, dtype), random_cpu({37}, dtype)};
    std::vector<Tensor> dev;
    for (const Tensor& t : cpu) dev.push_back(t.to(kCuda));
    jit::GraphModule on_cpu = jit::trace(program, cpu, static_batch());
    jit::GraphModule on_cuda = jit::trace(program, dev, static_batch());
    jit::optimize(on_cpu);
    const std::string log = joined(jit::optimize(on_cuda));
    EXPECT_EQ(count_op(on_cuda, "_fused_elementwise"), count_op(on_cpu, "_fused_elementwise")) << on_cuda.graph_text()
                                                                                             << log;
    EXPECT_GE(count_op(on_cuda, "_fused_elementwise"), 5u) << on_cuda.graph_text() << log;
    EXPECT_NE(on_cuda.graph_text().find("t3=sum(t2, dim=-1)"), std::string::npos) << on_cuda.graph_text();
    NoGradGuard no_grad;
    const std::vector<Tensor> want = on_cpu.forward(cpu), got = on_cuda.forward(dev);
    ASSERT_EQ(got.size(), want.size());
    const auto tol = cuda_testing::tolerance(dtype);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(got[i].is_cuda()) << i;
      EXPECT_TRUE(all_close(got[i].cpu(), want[i], tol.rtol, tol.atol)) << dtype << " output " << i;
    }
    // Other shapes through the same cached kernels: broadcast rows, strided inputs.
    const std::vector<Tensor> cpu2 = {random_cpu({37, 9}, dtype).t(), random_cpu({1, 37}, dtype),
                                      random_cpu({37}, dtype)};
    std::vector<Tensor> dev2;
    for (const Tensor& t : cpu2) dev2.push_back(t.to(kCuda));
    jit::GraphModule cpu_graph = jit::trace(program, cpu2, static_batch());
    jit::GraphModule cuda_graph = jit::trace(program, dev2, static_batch());
    jit::optimize(cpu_graph);
    jit::optimize(cuda_graph);
    const std::vector<Tensor> want2 = cpu_graph.forward(cpu2), got2 = cuda_graph.forward(dev2);
    for (size_t i = 0; i < got2.size(); ++i)
      EXPECT_TRUE(all_close(got2[i].cpu(), want2[i], tol.rtol, tol.atol)) << dtype << " strided output " << i;
  }
}

TEST(CudaFused, GradientsThroughFusedGroupsOnCudaEqualEager) {
  REQUIRE_CUDA();
  manual_seed(42);
  const std::vector<Tensor> cpu = {random_cpu({4, 11}, kFloat64), random_cpu({4, 11}, kFloat64),
                                   random_cpu({11}, kFloat64)};
  std::vector<Tensor> dev;
  for (const Tensor& t : cpu) dev.push_back(t.to(kCuda));
  jit::GraphModule g = jit::trace(program, dev, static_batch());
  jit::optimize(g);
  ASSERT_GE(count_op(g, "_fused_elementwise"), 1u);
  std::vector<Tensor> a, b;
  for (const Tensor& t : dev) {
    a.push_back(t.clone().requires_grad_());
    b.push_back(t.clone().requires_grad_());
  }
  Tensor le, lg;
  for (const Tensor& t : program(a)) le = le.defined() ? le + t.sum() : t.sum();
  for (const Tensor& t : g.forward(b)) lg = lg.defined() ? lg + t.sum() : t.sum();
  le.backward();
  lg.backward();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(all_close(b[i].grad().cpu(), a[i].grad().cpu(), 1e-10, 1e-10)) << i;
}

TEST(CudaFused, HalfPrecisionGroupsOnCudaStayUnfused) {
  REQUIRE_CUDA();
  const std::vector<Tensor> dev = {random_cpu({3, 8}, kFloat16).to(kCuda), random_cpu({3, 8}, kFloat16).to(kCuda)};
  auto fn = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{(in[0] * in[1] + 1).relu()}; };
  jit::GraphModule g = jit::trace(fn, dev, static_batch());
  jit::optimize(g);
  EXPECT_EQ(count_op(g, "_fused_elementwise"), 0u) << g.graph_text();
  EXPECT_EQ(g.forward(dev)[0].cpu().dtype(), kFloat16);
}

}  // namespace
}  // namespace ember
