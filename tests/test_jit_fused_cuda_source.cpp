// The CUDA source of fused programs (core/fused_cuda_source.h) compiles with
// NVRTC: every fused group of the demo models (none today) and of the fusion
// tests' programs, and a program of every op. NVRTC needs no GPU; it is loaded at run time from the CUDA
// toolkit (libnvrtc.so on the library path, or under $CUDA_HOME or
// /usr/local/cuda), and the compile tests skip where it is not installed.
#include <gtest/gtest.h>
#include <dlfcn.h>

#include <cstdlib>
#include <memory>

#include "core/fused_program.h"
#include "ember/jit.h"
#include "core/fused_cuda_source.h"
#include "jit/graph.h"
#include "test_jit_models.h"
#include "test_util.h"

namespace ember {
namespace {

// The five NVRTC entry points the test uses (nvrtc.h's C API).
class Nvrtc {
 public:
  Nvrtc() {
    std::vector<std::string> paths = {"libnvrtc.so"};
    if (const char* home = std::getenv("CUDA_HOME")) paths.push_back(std::string(home) + "/lib64/libnvrtc.so");
    paths.push_back("/usr/local/cuda/lib64/libnvrtc.so");
    for (const std::string& p : paths)
      if ((lib_ = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    if (lib_ == nullptr) return;
    create_ = reinterpret_cast<Create>(dlsym(lib_, "nvrtcCreateProgram"));
    compile_ = reinterpret_cast<Compile>(dlsym(lib_, "nvrtcCompileProgram"));
    log_size_ = reinterpret_cast<LogSize>(dlsym(lib_, "nvrtcGetProgramLogSize"));
    log_ = reinterpret_cast<Log>(dlsym(lib_, "nvrtcGetProgramLog"));
    destroy_ = reinterpret_cast<Destroy>(dlsym(lib_, "nvrtcDestroyProgram"));
  }
  // NVRTC stays loaded until the process exits: unloading it strands the
  // memory its own C++ runtime allocated at load, which LeakSanitizer then
  // reports as a leak from an unknown module.
  bool available() const { return create_ && compile_ && log_size_ && log_ && destroy_; }

  // "" when `source` compiles for sm_80, else NVRTC's log.
  std::string compile(const std::string& source) const {
    void* prog = nullptr;
    if (create_(&prog, source.c_str(), "fused.cu", 0, nullptr, nullptr) != 0) return "nvrtcCreateProgram failed";
    const char* options[] = {"--gpu-architecture=compute_80"};
    const int rc = compile_(prog, 1, options);
    size_t size = 0;
    log_size_(prog, &size);
    std::string log(size, '\0');
    if (size > 0) log_(prog, log.data());
    destroy_(&prog);
    return rc == 0 ? "" : "nvrtc error " + std::to_string(rc) + ":\n" + log;
  }

 private:
  using Create = int (*)(void**, const char*, const char*, int, const char* const*, const char* const*);
  using Compile = int (*)(void*, int, const char* const*);
  using LogSize = int (*)(void*, size_t*);
  using Log = int (*)(void*, char*);
  using Destroy = int (*)(void**);
  void* lib_ = nullptr;
  Create create_ = nullptr;
  Compile compile_ = nullptr;
  LogSize log_size_ = nullptr;
  Log log_ = nullptr;
  Destroy destroy_ = nullptr;
};

struct FusedGroup {
  std::string where;
  fused::FusedProgram program;
  DType dtype;
};

void collect(const jit::GraphModule& g, const std::string& where, std::vector<FusedGroup>& out) {
  for (const auto& n : g.graph().nodes()) {
    if (n->name() != "_fused_elementwise") continue;
    const auto& expr = std::get<std::string>(n->args.at(1).constant.payload());
    out.push_back({where + ": " + expr, fused::FusedProgram::parse(expr, n->args.at(0).values.size(), "test"),
                   n->outputs[0]->dtype});
  }
}

std::vector<Tensor> test_program(const std::vector<Tensor>& in) {  // as in test_jit_fusion.cpp
  const Tensor& x = in[0];
  const Tensor& y = in[1];
  const Tensor& b = in[2];
  Tensor h = (x * 0.5 + b).gelu() * y.sigmoid();
  Tensor k = where(x > 0, h, (y - b).clamp(-1.0, 1.0)).tanh() + 1;
  return {k, (h * h).exp() - x.abs()};
}

std::vector<FusedGroup> every_group() {
  std::vector<FusedGroup> groups;
  manual_seed(3);
  testing::TinyTransformer transformer;
  transformer->eval();
  nn::Sequential mlp = testing::demo_mlp(), cnn = testing::demo_cnn();
  mlp->eval();
  cnn->eval();
  for (int which = 0; which < 3; ++which) {
    const Tensor x = randn({2, 1, 28, 28});
    jit::GraphModule g = which == 0 ? jit::trace(mlp, x) : which == 1 ? jit::trace(cnn, x) : jit::trace(transformer, x);
    jit::optimize(g);
    collect(g, which == 0 ? "mlp" : which == 1 ? "cnn" : "transformer", groups);
  }
  jit::TraceOptions static_batch;  // the bias input has no batch dim
  static_batch.dynamic_batch = false;
  for (DType dtype : {kFloat32, kFloat64}) {
    jit::GraphModule g =
        jit::trace(test_program, {randn({3, 4}, dtype), randn({3, 4}, dtype), randn({4}, dtype)}, static_batch);
    jit::optimize(g);
    collect(g, "test program", groups);
    jit::GraphModule chain = jit::trace(
        [](const std::vector<Tensor>& in) { return std::vector<Tensor>{(((in[0] * 2 + 1).relu()) * in[1]).exp()}; },
        {randn({8}, dtype), randn({8}, dtype)});
    jit::optimize(chain);
    collect(chain, "bench chain", groups);
  }
  // Every op of the fused table, and numbers that are not finite.
  const char* all_ops =
      "t0=add(i0, i1, alpha=2); t1=sub(t0, 1); t2=mul(t1, t0); t3=div(t2, 3); t4=maximum(t3, t0); "
      "t5=minimum(t4, inf); t6=where(i2, t5, -inf); t7=neg(t6); t8=abs(t7); t9=exp(t8); t10=exp2(t9); "
      "t11=log(t10); t12=log2(t11); t13=log1p(t12); t14=expm1(t13); t15=sqrt(t14); t16=rsqrt(t15); "
      "t17=reciprocal(t16); t18=sin(t17); t19=cos(t18); t20=tan(t19); t21=tanh(t20); t22=sigmoid(t21); "
      "t23=erf(t22); t24=relu(t23); t25=silu(t24); t26=floor(t25); t27=ceil(t26); t28=trunc(t27); "
      "t29=round(t28); t30=gelu(t29); t31=gelu(t30, approximate=tanh); t32=leaky_relu(t31, slope=0.2); "
      "t33=clamp(t32, min=-1, max=inf); t34=clamp(t33, max=6)";
  for (DType dtype : {kFloat32, kFloat64}) {
    groups.push_back({"every op", fused::FusedProgram::parse(all_ops, 3, "test"), dtype});
    groups.push_back({"sum", fused::FusedProgram::parse("t0=mul(i0, i1); t1=sum(t0)", 2, "test"), dtype});
    groups.push_back({"mean", fused::FusedProgram::parse("t0=exp(i0); t1=mean(t0, keepdim=1)", 1, "test"), dtype});
    groups.push_back({"last-dim sum", fused::FusedProgram::parse("t0=mul(i0, i1); t1=sum(t0, dim=-1)", 2, "test"), dtype});
    groups.push_back(
        {"last-dim mean", fused::FusedProgram::parse("t0=exp(i0); t1=mean(t0, dim=-1, keepdim=1)", 1, "test"), dtype});
  }
  return groups;
}

TEST(FusedCudaSource, NamesTheKernelAndEveryInput) {
  const auto p = fused::FusedProgram::parse("t0=mul(i0, 2); t1=where(i1, t0, i2)", 3, "test");
  const std::string src = fused::cuda_source(p, kFloat32, "ember_fused_7");
  EXPECT_NE(src.find("extern \"C\" __global__ void ember_fused_7("), std::string::npos) << src;
  EXPECT_NE(src.find("const bool* __restrict__ i1"), std::string::npos) << src;
  EXPECT_NE(src.find("typedef float T;"), std::string::npos) << src;
  EXPECT_NE(src.find("const T t1 = v1 ? t0 : v2;"), std::string::npos) << src;
  EXPECT_NE(src.find("out[idx] = t1;"), std::string::npos) << src;
  EXPECT_NE(fused::cuda_source(p, kFloat64, "k").find("typedef double T;"), std::string::npos);
  EXPECT_EMBER_ERROR(fused::cuda_source(p, kFloat16, "k"), "fused::cuda_source", "float16");
  const auto mean = fused::FusedProgram::parse("t0=exp(i0); t1=mean(t0)", 1, "test");
  EXPECT_NE(fused::cuda_source(mean, kFloat32, "k").find("atomicAdd(out, t1 / (T)n);"), std::string::npos);
  // A last-dim reduction: one block per row, a fixed tree, no atomics.
  const auto rows = fused::FusedProgram::parse("t0=exp(i0); t1=mean(t0, dim=-1)", 1, "test");
  const std::string row_src = fused::cuda_source(rows, kFloat32, "k");
  EXPECT_NE(row_src.find("__shared__ double part[256];"), std::string::npos) << row_src;
  EXPECT_NE(row_src.find("out[r] = (T)(part[0] / (double)row);"), std::string::npos) << row_src;
  EXPECT_EQ(row_src.find("atomicAdd"), std::string::npos) << row_src;
}

TEST(FusedCudaSource, EveryFusedGroupCompilesWithNvrtc) {
  const std::vector<FusedGroup> groups = every_group();
  // 2 x (2 groups of the test program, 1 of the bench chain, every op, sum,
  // mean, last-dim sum and mean); the demo models have none today
  // (tests/test_jit_fusion.cpp says why).
  EXPECT_GE(groups.size(), 16u);
  Nvrtc nvrtc;
  if (!nvrtc.available()) GTEST_SKIP() << "NVRTC (libnvrtc.so) is not installed";
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string src = fused::cuda_source(groups[i].program, groups[i].dtype, "ember_fused_" + std::to_string(i));
    const std::string error = nvrtc.compile(src);
    EXPECT_TRUE(error.empty()) << groups[i].where << " (" << groups[i].dtype << ")\n" << error << "\n" << src;
  }
}

}  // namespace
}  // namespace ember
