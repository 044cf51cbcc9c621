// Matrix products on CUDA against the CPU kernels (mm, addmm, bmm, dot, mv and
// the composites matmul and linear, forward and backward), over the floating
// dtypes and every operand layout the op wrappers distinguish, and the GEMM
// wrapper itself (Note [GEMM on CUDA] in kernels/cuda/blas.h): transposes,
// leading dimensions, batch strides and epilogues against a host loop in
// double. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "ember/cuda.h"
#include "ember/ember.h"
#include "test_util.h"
#ifdef EMBER_WITH_CUDA
#include "kernels/cuda/blas.h"
#endif

namespace ember {
namespace {

using namespace cuda_testing;
using testing::all_close;

const std::vector<DType> kFloating = {kFloat32, kFloat64, kFloat16, kBFloat16};

// CUDA and CPU sum k products in different orders: the tolerance grows with k
// (inputs are in [-4, 4), so each product is below 16 in magnitude).
::testing::AssertionResult product_matches(const Tensor& cuda_result, const Tensor& cpu_result, int64_t k) {
  if (!cuda_result.is_cuda()) return ::testing::AssertionFailure() << "result is on " << cuda_result.device();
  if (cuda_result.dtype() != cpu_result.dtype())
    return ::testing::AssertionFailure() << "dtype " << cuda_result.dtype() << " vs CPU " << cpu_result.dtype();
  const Tol tol = tolerance(cpu_result.dtype());
  const double eps = cpu_result.dtype() == kFloat64 ? 1e-16 : 1.2e-7;  // the accumulator's
  return all_close(cuda_result, cpu_result, tol.rtol, tol.atol + 16.0 * 4 * eps * static_cast<double>(k));
}

// A (rows, cols) matrix of `dtype` on the device in a named layout.
struct Layout {
  std::string name;
  Tensor (*make)(int64_t rows, int64_t cols, DType dtype);
};
const std::vector<Layout> kLayouts = {
    {"contiguous", [](int64_t r, int64_t c, DType t) { return random_cpu({r, c}, t).cuda(); }},
    {"transposed", [](int64_t r, int64_t c, DType t) { return random_cpu({c, r}, t).cuda().t(); }},
    {"row slice (ld > cols)", [](int64_t r, int64_t c, DType t) { return random_cpu({r, c + 5}, t).cuda().narrow(1, 2, c); }},
    {"column slice of a transpose",
     [](int64_t r, int64_t c, DType t) { return random_cpu({c, r + 3}, t).cuda().t().narrow(0, 1, r); }},
    {"both strides > 1", [](int64_t r, int64_t c, DType t) {
       return random_cpu({2 * r, 2 * c}, t).cuda().slice(0, 0, 2 * r, 2).slice(1, 0, 2 * c, 2);
     }}};

TEST(CudaMatmul, MmEveryDTypeAndLayoutMatchesTheCpu) {
  REQUIRE_CUDA();
  for (DType t : kFloating) {
    for (const Layout& la : kLayouts) {
      for (const Layout& lb : kLayouts) {
        SCOPED_TRACE(str(t) + " " + la.name + " @ " + lb.name);
        const Tensor a = la.make(13, 37, t), b = lb.make(37, 9, t);
        EXPECT_TRUE(product_matches(mm(a, b), mm(a.cpu(), b.cpu()), 37));
      }
    }
  }
}

TEST(CudaMatmul, EdgeSizes) {
  REQUIRE_CUDA();
  for (auto [n, k, m] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {1, 40, 1}, {7, 0, 5}, {0, 3, 4}, {5, 3, 0}, {300, 2, 3}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(k) + "x" + std::to_string(m));
    const Tensor a = random_cpu({n, k}, kFloat32), b = random_cpu({k, m}, kFloat32);
    EXPECT_TRUE(product_matches(mm(a.cuda(), b.cuda()), mm(a, b), k));
  }
}

TEST(CudaMatmul, BmmWithStridedAndBroadcastBatches) {
  REQUIRE_CUDA();
  for (DType t : kFloating) {
    SCOPED_TRACE(str(t));
    const Tensor a = random_cpu({4, 6, 11}, t).cuda(), b = random_cpu({4, 11, 8}, t).cuda();
    EXPECT_TRUE(product_matches(bmm(a, b), bmm(a.cpu(), b.cpu()), 11));
    const Tensor at = random_cpu({4, 11, 6}, t).cuda().transpose(1, 2);
    const Tensor bt = random_cpu({8, 4, 11}, t).cuda().permute({1, 2, 0});  // batch stride 11, row stride 1
    EXPECT_TRUE(product_matches(bmm(at, bt), bmm(at.cpu(), bt.cpu()), 11));
    const Tensor shared = random_cpu({1, 11, 8}, t).cuda().expand({4, 11, 8});  // batch stride 0
    EXPECT_TRUE(product_matches(bmm(a, shared), bmm(a.cpu(), shared.cpu()), 11));
    const Tensor padded = random_cpu({4, 7, 12}, t).cuda().narrow(1, 0, 6).narrow(2, 1, 11);
    EXPECT_TRUE(product_matches(bmm(padded, b), bmm(padded.cpu(), b.cpu()), 11));
  }
}

TEST(CudaMatmul, AddmmBetaAlphaAndSelfShapes) {
  REQUIRE_CUDA();
  for (DType t : kFloating) {
    const Tensor m1 = random_cpu({10, 20}, t).cuda(), m2 = random_cpu({20, 7}, t).cuda();
    const std::vector<std::pair<std::string, Tensor>> selves = {
        {"bias row", random_cpu({7}, t).cuda()},
        {"misaligned bias row", random_cpu({8}, t).cuda().narrow(0, 1, 7)},
        {"(1, m)", random_cpu({1, 7}, t).cuda()},
        {"column (n, 1)", random_cpu({10, 1}, t).cuda()},
        {"full", random_cpu({10, 7}, t).cuda()},
        {"transposed full", random_cpu({7, 10}, t).cuda().t()},
        {"0-d", random_cpu({}, t).cuda()}};
    for (const auto& [name, self] : selves) {
      for (auto [beta, alpha] : std::vector<std::pair<double, double>>{{1, 1}, {0.5, 2}, {0, 1}, {1, -0.25}}) {
        SCOPED_TRACE(str(t) + " self " + name + " beta " + std::to_string(beta) + " alpha " + std::to_string(alpha));
        EXPECT_TRUE(product_matches(addmm(self, m1, m2, beta, alpha), addmm(self.cpu(), m1.cpu(), m2.cpu(), beta, alpha), 20));
      }
    }
  }
  // A bias with a single output row or column (the library's edge cases).
  for (DType t : kFloating) {
    for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{1, 6}, {6, 1}, {1, 1}}) {
      SCOPED_TRACE(str(t) + " n=" + std::to_string(n) + " m=" + std::to_string(m));
      const Tensor bias = random_cpu({m}, t).cuda(), a = random_cpu({n, 9}, t).cuda(), b = random_cpu({9, m}, t).cuda();
      EXPECT_TRUE(product_matches(addmm(bias, a, b), addmm(bias.cpu(), a.cpu(), b.cpu()), 9));
    }
  }
  // beta = 0 ignores self entirely, NaN included.
  const Tensor nan_self = full({7}, NAN, TensorOptions(kFloat32).device(kCuda));
  const Tensor m1 = ones({2, 3}, kCuda), m2 = ones({3, 7}, kCuda);
  EXPECT_TRUE(all_close(addmm(nan_self, m1, m2, 0, 1).cpu(), full({2, 7}, 3.f), 0, 0));
}

TEST(CudaMatmul, DotMvMatmulAndLinear) {
  REQUIRE_CUDA();
  for (DType t : kFloating) {
    SCOPED_TRACE(str(t));
    const Tensor x = random_cpu({50}, t).cuda(), y = random_cpu({100}, t).cuda().slice(0, 0, 100, 2);
    EXPECT_TRUE(product_matches(dot(x, y), dot(x.cpu(), y.cpu()), 50));
    const Tensor big = random_cpu({1}, t).cuda().expand({50});  // stride 0: copied first
    EXPECT_TRUE(product_matches(dot(x, big), dot(x.cpu(), big.cpu()), 50));
    const Tensor mat = random_cpu({50, 30}, t).cuda().t();
    EXPECT_TRUE(product_matches(mv(mat, x), mv(mat.cpu(), x.cpu()), 50));
    EXPECT_TRUE(product_matches(mv(mat, big), mv(mat.cpu(), big.cpu()), 50));
    const Tensor a4 = random_cpu({2, 3, 5, 6}, t).cuda(), b3 = random_cpu({3, 6, 4}, t).cuda();
    EXPECT_TRUE(product_matches(matmul(a4, b3), matmul(a4.cpu(), b3.cpu()), 6));
    const Tensor in = random_cpu({4, 3, 16}, t).cuda(), w = random_cpu({8, 16}, t).cuda(), bias = random_cpu({8}, t).cuda();
    EXPECT_TRUE(product_matches(linear(in, w, bias), linear(in.cpu(), w.cpu(), bias.cpu()), 16));
    EXPECT_TRUE(product_matches(linear(in, w), linear(in.cpu(), w.cpu()), 16));
  }
}

TEST(CudaMatmul, GradientsOfLinearAndBmmMatchTheCpu) {
  REQUIRE_CUDA();
  const Tensor x = random_cpu({6, 12}, kFloat64), w = random_cpu({5, 12}, kFloat64), b = random_cpu({5}, kFloat64);
  const Tensor p = random_cpu({3, 4, 7}, kFloat64), q = random_cpu({3, 7, 2}, kFloat64);
  std::vector<Tensor> grads[2];
  for (int on_cuda = 0; on_cuda < 2; ++on_cuda) {
    std::vector<Tensor> leaves;
    for (const Tensor& t : {x, w, b, p, q}) leaves.push_back((on_cuda ? t.cuda() : t.clone()).requires_grad_(true));
    const Tensor loss = linear(leaves[0], leaves[1], leaves[2]).tanh().sum() + bmm(leaves[3], leaves[4]).pow(2).sum();
    loss.backward();
    for (const Tensor& l : leaves) grads[on_cuda].push_back(l.grad());
  }
  for (size_t i = 0; i < grads[0].size(); ++i) {
    SCOPED_TRACE("leaf " + std::to_string(i));
    EXPECT_TRUE(product_matches(grads[1][i], grads[0][i], 12));
  }
}

TEST(CudaMatmul, BadInputsAreClearErrors) {
  REQUIRE_CUDA();
  const Tensor a = ones({2, 3}, kCuda), b = ones({3, 4}, kCuda);
  EXPECT_EMBER_ERROR(mm(a.to(kInt64), b.to(kInt64)), "mm", "int64");
  EXPECT_EMBER_ERROR(mm(a, b.cpu()), "mm", "same device", "cuda:0", "cpu");
  EXPECT_EMBER_ERROR(mm(a, b.to(kFloat64)), "mm", "same dtype", "float32", "float64");
  EXPECT_EMBER_ERROR(mm(a, a), "mm", "cannot be multiplied", "2x3");
  EXPECT_EMBER_ERROR(bmm(a.unsqueeze(0), ones({2, 3, 4}, kCuda)), "bmm", "batch sizes differ");
  EXPECT_EMBER_ERROR(addmm(ones({3, 3}, kCuda), a, b), "addmm", "cannot be broadcast", "[2, 4]");
  EXPECT_EMBER_ERROR(dot(ones({3}, kCuda), ones({4}, kCuda)), "dot", "different lengths");
  EXPECT_EMBER_ERROR(mv(a, ones({2}, kCuda)), "mv", "cannot be multiplied");
}

#ifdef EMBER_WITH_CUDA
// ---- the GEMM wrapper directly ----

namespace blas = cuda::blas;

// Column-major (rows, cols) with leading dimension ld, per batch at stride: the host copy as doubles.
std::vector<double> host(const Tensor& t) {
  const Tensor d = t.cpu().to(kFloat64).contiguous();
  return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
}

double activation(blas::Epilogue e, double x) {
  using E = blas::Epilogue;
  if (e == E::Relu || e == E::BiasRelu) return x > 0 ? x : 0;
  if (e == E::GeluTanh || e == E::BiasGeluTanh)
    return 0.5 * x * (1 + std::tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
  return x;
}

struct Case {
  blas::Transpose ta, tb;
  int64_t m, n, k, batch, pad;  // pad: extra rows in every leading dimension and elements between batch matrices
  double alpha, beta;
  blas::Epilogue epilogue;
};

void run_case(const Case& cs, DType dtype, bool reference) {
  using blas::Transpose;
  const int64_t rows_a = cs.ta == Transpose::No ? cs.m : cs.k, cols_a = cs.ta == Transpose::No ? cs.k : cs.m;
  const int64_t rows_b = cs.tb == Transpose::No ? cs.k : cs.n, cols_b = cs.tb == Transpose::No ? cs.n : cs.k;
  const int64_t lda = rows_a + cs.pad, ldb = rows_b + cs.pad, ldc = cs.m + cs.pad;
  const int64_t sa = lda * cols_a + cs.pad, sb = ldb * cols_b + cs.pad, sc = ldc * cs.n + cs.pad;
  const Tensor a = random_cpu({cs.batch * sa}, dtype).cuda(), b = random_cpu({cs.batch * sb}, dtype).cuda();
  const Tensor c = random_cpu({cs.batch * sc}, dtype).cuda(), bias = random_cpu({cs.m}, dtype).cuda();
  const std::vector<double> ha = host(a), hb = host(b), hc = host(c), hbias = host(bias);

  blas::Gemm g;
  g.dtype = dtype;
  g.trans_a = cs.ta;
  g.trans_b = cs.tb;
  g.m = cs.m;
  g.n = cs.n;
  g.k = cs.k;
  g.batch = cs.batch;
  g.a = a.data_ptr();
  g.lda = lda;
  g.stride_a = sa;
  g.b = b.data_ptr();
  g.ldb = ldb;
  g.stride_b = sb;
  g.c = c.data_ptr();
  g.ldc = ldc;
  g.stride_c = sc;
  g.alpha = cs.alpha;
  g.beta = cs.beta;
  g.epilogue = cs.epilogue;
  g.bias = blas::has_bias(cs.epilogue) ? bias.data_ptr() : nullptr;
  (reference ? blas::gemm_reference : blas::gemm)("test", g, 0);

  std::vector<double> expected = hc;
  for (int64_t q = 0; q < cs.batch; ++q) {
    for (int64_t j = 0; j < cs.n; ++j) {
      for (int64_t i = 0; i < cs.m; ++i) {
        double sum = 0;
        for (int64_t p = 0; p < cs.k; ++p) {
          const double x = ha[q * sa + (cs.ta == Transpose::No ? i + p * lda : p + i * lda)];
          const double y = hb[q * sb + (cs.tb == Transpose::No ? p + j * ldb : j + p * ldb)];
          sum += x * y;
        }
        double& out = expected[q * sc + i + j * ldc];
        double r = cs.alpha * sum + (cs.beta != 0 ? cs.beta * out : 0);
        if (blas::has_bias(cs.epilogue)) r += hbias[i];
        out = activation(cs.epilogue, r);
      }
    }
  }
  // Elements outside the matrices (the padding) must be untouched: compared exactly through `expected`.
  const Tensor want = from_blob(expected.data(), {static_cast<int64_t>(expected.size())}, kFloat64).to(dtype);
  EXPECT_TRUE(product_matches(c, want, cs.k));
}

TEST(CudaGemm, TransposesLeadingDimsBatchStridesAndEpilogues) {
  REQUIRE_CUDA();
  using blas::Epilogue;
  using blas::Transpose;
  const Transpose N = Transpose::No, T = Transpose::Yes;
  const std::vector<Case> cases = {
      {N, N, 5, 7, 3, 1, 0, 1, 0, Epilogue::None},      {T, N, 5, 7, 3, 1, 2, 1, 0, Epilogue::None},
      {N, T, 6, 4, 9, 3, 1, 0.5, 0, Epilogue::None},     {T, T, 6, 4, 9, 3, 3, 2, 0.75, Epilogue::None},
      {N, N, 8, 3, 5, 1, 1, 1, 0, Epilogue::Bias},       {T, N, 8, 3, 5, 1, 0, 1, 0, Epilogue::BiasRelu},
      {N, T, 8, 3, 5, 1, 2, 1, 0, Epilogue::BiasGeluTanh}, {N, N, 8, 3, 5, 2, 1, 1, 0, Epilogue::Relu},
      {T, T, 8, 3, 5, 2, 1, 1, 0, Epilogue::GeluTanh},  {N, N, 4, 4, 0, 2, 1, 1, 0.5, Epilogue::Bias},
      {N, N, 8, 3, 5, 3, 1, 1, 0, Epilogue::Bias},       {T, N, 1, 6, 7, 1, 0, 1, 0, Epilogue::BiasRelu},
      {N, T, 6, 1, 7, 1, 0, 1, 0, Epilogue::BiasGeluTanh}};
  for (DType dtype : kFloating) {
    for (bool reference : {false, true}) {
      for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(str(dtype) + (reference ? " reference" : " gemm") + " case " + std::to_string(i));
        run_case(cases[i], dtype, reference);
      }
    }
  }
}

TEST(CudaGemm, InvalidCallsAreClearErrors) {
  REQUIRE_CUDA();
  const Tensor buf = zeros({64}, kCuda);
  blas::Gemm g;
  g.m = 4;
  g.n = 4;
  g.k = 4;
  g.a = g.b = g.c = buf.data_ptr();
  g.lda = 3;
  g.ldb = g.ldc = 4;
  EXPECT_EMBER_ERROR(blas::gemm("mm", g, 0), "mm", "leading dimensions", "lda=3");
  g.lda = 4;
  g.epilogue = blas::Epilogue::Bias;
  EXPECT_EMBER_ERROR(blas::gemm("linear", g, 0), "linear", "no bias");
  g.epilogue = blas::Epilogue::None;
  g.dtype = kInt32;
  EXPECT_EMBER_ERROR(blas::gemm("mm", g, 0), "mm", "float32", "int32");
  g.dtype = kFloat32;
  g.batch = 2;
  g.stride_c = 8;
  EXPECT_EMBER_ERROR(blas::gemm("bmm", g, 0), "bmm", "overlap");
}
#endif

}  // namespace
}  // namespace ember
