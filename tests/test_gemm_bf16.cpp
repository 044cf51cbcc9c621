// The bf16 GEMM (gemm_bf16, with every kernel this machine runs) against a
// float64 reference computed from the same bf16 inputs, and the bf16 matrix
// products (mm, bmm, addmm) built on it (or, without AVX-512 BF16, on the
// float32 GEMM).
//
// Tolerance: a product of two bf16 numbers is exact in float32, so a kernel's
// float32 result differs from the exact sum only by its additions, at most
// about k * eps/2 * sum_p |A(i,p) B(p,j)|. On gemm_bf16's float32 C we allow
// (k + 4) * eps * (|alpha| sum_p |A(i,p) B(p,j)| + |beta C(i,j)|); on the bf16
// outputs of mm/bmm/addmm that plus one rounding to bf16 (2^-8 relative).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm_bf16.h"
#include "test_util.h"
#include "tests/gemm_test_matrix.h"

namespace ember {
namespace {

using cpu::GemmBf16Kernel;
using ::ember::testing::ThreadCount;
using ::ember::testing::values;

constexpr double kFloatEps = 0x1p-23;
constexpr double kBf16Eps = 0x1p-8;

// ---- gemm_bf16 itself ----

std::vector<GemmBf16Kernel> kernels_here() {
  std::vector<GemmBf16Kernel> kernels;
  for (GemmBf16Kernel k : {GemmBf16Kernel::kAvx512Dot, GemmBf16Kernel::kAmxTiles}) {
    if (cpu::gemm_bf16_supports(k)) kernels.push_back(k);
  }
  return kernels;
}

#define SKIP_WITHOUT_BF16_KERNELS(kernels)                                                                      \
  if ((kernels).empty()) {                                                                                    \
    GTEST_SKIP() << "this CPU (or build) has no AVX-512 BF16: bf16 products widen to float32 instead, which " \
                    "the Bf16Products tests below cover";                                                     \
  }

std::string kernel_name(GemmBf16Kernel kernel) {
  return kernel == GemmBf16Kernel::kAmxTiles ? "AMX" : "AVX-512 dot";
}

using ::ember::testing::describe;
using ::ember::testing::fill_random;
using ::ember::testing::Layout;
using ::ember::testing::Matrix;
using Case = ::ember::testing::GemmCase<float>;

// Runs `kernel` on random inputs and checks every element of C against the
// float64 reference, and that storage between C's elements is left alone.
// With beta == 0, C starts as NaN, which must not leak into the result.
void expect_matches_reference(GemmBf16Kernel kernel, const Case& tc, uint32_t seed = 1) {
  SCOPED_TRACE(kernel_name(kernel) + ": " + describe(tc));
  std::mt19937 rng(seed);
  Matrix<BFloat16> a(tc.m, tc.k, tc.a_layout), b(tc.k, tc.n, tc.b_layout);
  Matrix<float> c(tc.m, tc.n, tc.c_layout);
  fill_random(a, rng);
  fill_random(b, rng);
  if (tc.beta == 0) {
    std::fill(c.storage.begin(), c.storage.end(), std::numeric_limits<float>::quiet_NaN());
  } else {
    fill_random(c, rng);
  }
  Matrix<float> before = c;
  cpu::gemm_bf16_using(kernel, tc.m, tc.n, tc.k, tc.alpha, a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, tc.beta,
                       c.data(), c.rs, c.cs);

  int64_t reported = 0;
  for (int64_t i = 0; i < tc.m; ++i) {
    for (int64_t j = 0; j < tc.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < tc.k; ++p) {
        const double product = static_cast<double>(float(a.at(i, p))) * static_cast<double>(float(b.at(p, j)));
        sum += product;
        magnitude += std::fabs(product);
      }
      const double c0 = tc.beta == 0 ? 0.0 : static_cast<double>(tc.beta) * before.at(i, j);
      const double want = static_cast<double>(tc.alpha) * sum + c0;
      const double tolerance =
          static_cast<double>(tc.k + 4) * kFloatEps * (std::fabs(tc.alpha) * magnitude + std::fabs(c0));
      const double got = c.at(i, j);
      if (!(std::fabs(got - want) <= tolerance) && reported++ < 5) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", reference " << want << ", tolerance "
                      << tolerance;
      }
    }
  }
  EXPECT_EQ(reported, 0) << "elements outside tolerance";

  std::vector<bool> is_element(c.storage.size(), false);
  for (int64_t i = 0; i < tc.m; ++i) {
    for (int64_t j = 0; j < tc.n; ++j) is_element[c.origin + i * c.rs + j * c.cs] = true;
  }
  for (size_t e = 0; e < c.storage.size(); ++e) {
    if (!is_element[e]) {
      ASSERT_EQ(std::memcmp(&c.storage[e], &before.storage[e], sizeof(float)), 0) << "storage index " << e;
    }
  }
}

TEST(GemmBf16, MatchesReferenceOnRaggedShapesAndOddDepths) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  for (GemmBf16Kernel kernel : kernels) {
    for (int64_t m : {1, 7, 33, 100, 257}) {
      for (int64_t n : {1, 7, 33, 100, 257}) {
        for (int64_t k : {1, 7, 33, 100, 257}) {
          for (Layout a_layout : {Layout::kRowMajor, Layout::kColMajor}) {
            for (Layout b_layout : {Layout::kRowMajor, Layout::kColMajor}) {
              expect_matches_reference(kernel, {m, n, k, a_layout, b_layout});
            }
          }
        }
      }
    }
  }
}

TEST(GemmBf16, StridedTransposedAndNegativeStrideOperands) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  const Layout layouts[] = {Layout::kRowMajor, Layout::kColMajor, Layout::kStrided, Layout::kReversed};
  for (GemmBf16Kernel kernel : kernels) {
    for (Layout a_layout : layouts) {
      for (Layout b_layout : layouts) {
        for (Layout c_layout : layouts) {
          expect_matches_reference(kernel, {37, 53, 71, a_layout, b_layout, c_layout, 1, 0.5f});
        }
      }
    }
  }
}

TEST(GemmBf16, AlphaAndBeta) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  for (GemmBf16Kernel kernel : kernels) {
    for (float alpha : {1.f, -2.5f, 0.f}) {
      for (float beta : {0.f, 1.f, -0.75f}) {
        expect_matches_reference(kernel, {37, 53, 71, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor,
                                          alpha, beta});
        expect_matches_reference(kernel, {150, 90, 300, Layout::kColMajor, Layout::kRowMajor, Layout::kStrided,
                                          alpha, beta});
      }
    }
  }
}

TEST(GemmBf16, MatchesReferenceAcrossCacheBlocks) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  for (GemmBf16Kernel kernel : kernels) {
    // More than one depth block (k > 512), row block (m > 512) and column block (n > 4096), ragged.
    expect_matches_reference(kernel, {1030, 70, 1100});
    expect_matches_reference(kernel, {1030, 70, 1100, Layout::kColMajor, Layout::kColMajor, Layout::kRowMajor,
                                      1, 0.5f});
    expect_matches_reference(kernel, {40, 4200, 45});
    expect_matches_reference(kernel, {128, 512, 784});
  }
}

TEST(GemmBf16, EmptyShapesLeaveOrScaleC) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  for (GemmBf16Kernel kernel : kernels) {
    expect_matches_reference(kernel, {0, 5, 3});
    expect_matches_reference(kernel, {5, 0, 3});
    // k == 0: C = beta * C, and C = 0 when beta == 0 even if it held NaN.
    expect_matches_reference(kernel, {5, 7, 0, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor, 1, 0});
    expect_matches_reference(kernel, {5, 7, 0, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor, 1, 0.5f});
  }
}

TEST(GemmBf16, AlphaZeroDoesNotReadAOrB) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  const BFloat16 nan(std::numeric_limits<float>::quiet_NaN());
  for (GemmBf16Kernel kernel : kernels) {
    std::vector<BFloat16> a(6, nan), b(6, nan);
    std::vector<float> c = {1, 2, 3, 4};
    cpu::gemm_bf16_using(kernel, 2, 2, 3, 0.f, a.data(), 3, 1, b.data(), 2, 1, 2.f, c.data(), 2, 1);
    EXPECT_EQ(c, (std::vector<float>{2, 4, 6, 8})) << kernel_name(kernel);
  }
}

// The bf16 instructions count subnormal inputs and results as zero.
TEST(GemmBf16, SubnormalInputsAndResultsCountAsZero) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  const BFloat16 a[2] = {BFloat16(1e-30f), BFloat16::from_bits(0x0001)};  // normal; the smallest subnormal
  const BFloat16 b[2] = {BFloat16(1e-10f), BFloat16(0x1p100f)};
  for (GemmBf16Kernel kernel : kernels) {
    float tiny_result = -1, tiny_input = -1;
    cpu::gemm_bf16_using(kernel, 1, 1, 1, 1.f, a, 1, 1, b, 1, 1, 0.f, &tiny_result, 1, 1);  // ~1e-40
    cpu::gemm_bf16_using(kernel, 1, 1, 1, 1.f, a + 1, 1, 1, b + 1, 1, 1, 0.f, &tiny_input, 1, 1);  // ~1e-10
    EXPECT_EQ(tiny_result, 0.f) << kernel_name(kernel);
    EXPECT_EQ(tiny_input, 0.f) << kernel_name(kernel);
  }
}

// Each C element is summed over the same depth blocks in the same order by
// whichever thread owns it.
TEST(GemmBf16, BitwiseIdenticalForOneTwoAndThreeThreads) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  ThreadCount restore;
  for (GemmBf16Kernel kernel : kernels) {
    // Big enough for every kernel to use the threads, cut by rows and by columns.
    for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{517, 263, 611}, {128, 512, 784}, {2000, 40, 600},
                           {40, 2000, 600}, {300, 300, 500}}) {
      for (Layout a_layout : {Layout::kRowMajor, Layout::kColMajor}) {
        SCOPED_TRACE(kernel_name(kernel) + ": " + describe(Case{m, n, k, a_layout}));
        std::mt19937 rng(7);
        Matrix<BFloat16> a(m, k, a_layout), b(k, n, Layout::kRowMajor);
        Matrix<float> c(m, n, Layout::kRowMajor);
        fill_random(a, rng);
        fill_random(b, rng);
        fill_random(c, rng);
        std::vector<std::vector<float>> results;
        for (int threads : {1, 2, 3}) {
          set_num_threads(threads);
          Matrix<float> out = c;
          cpu::gemm_bf16_using(kernel, m, n, k, 1.5f, a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, 0.5f,
                               out.data(), out.rs, out.cs);
          results.push_back(out.storage);
        }
        for (size_t t = 1; t < results.size(); ++t) {
          EXPECT_EQ(std::memcmp(results[0].data(), results[t].data(), results[0].size() * sizeof(float)), 0)
              << "1 vs " << t + 1 << " threads";
        }
      }
    }
  }
}

// A GEMM called from inside a parallel loop runs on its caller's thread (for
// AMX: one that may never have used the tiles before) and gives the same bits.
TEST(GemmBf16, NestedInParallelForGivesSameBits) {
  const auto kernels = kernels_here();
  SKIP_WITHOUT_BF16_KERNELS(kernels);
  ThreadCount two(2);
  const int64_t m = 150, n = 90, k = 300;
  for (GemmBf16Kernel kernel : kernels) {
    std::mt19937 rng(11);
    Matrix<BFloat16> a(m, k, Layout::kRowMajor), b(k, n, Layout::kRowMajor);
    fill_random(a, rng);
    fill_random(b, rng);
    Matrix<float> outside(m, n, Layout::kRowMajor);
    cpu::gemm_bf16_using(kernel, m, n, k, 1.f, a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, 0.f, outside.data(), n, 1);
    std::vector<Matrix<float>> inside(4, Matrix<float>(m, n, Layout::kRowMajor));
    parallel_for(0, 4, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        cpu::gemm_bf16_using(kernel, m, n, k, 1.f, a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, 0.f,
                             inside[i].data(), n, 1);
      }
    });
    for (const auto& result : inside) EXPECT_EQ(result.storage, outside.storage) << kernel_name(kernel);
  }
}

// ---- mm, bmm, addmm in bf16 ----

// A (shape) tensor of bf16 values drawn uniformly from [-1, 1].
Tensor random_bf16(IntArrayRef shape, uint32_t seed) {
  Tensor t = empty(shape, kFloat32);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t.to(kBFloat16);
}

// C (batch, m, n) = alpha * A B + beta * self (self broadcast to C; beta == 0 ignores it)
// in float64 from the bf16 values, and per element the scale of its rounding error.
struct Reference {
  std::vector<double> value, magnitude;
  int64_t k = 0;
};

Reference reference_product(const Tensor& a, const Tensor& b, const Tensor& self, double alpha, double beta) {
  const Tensor a3 = a.dim() == 2 ? a.unsqueeze(0) : a, b3 = b.dim() == 2 ? b.unsqueeze(0) : b;
  const int64_t batch = a3.size(0), m = a3.size(1), k = a3.size(2), n = b3.size(2);
  const std::vector<double> va = values(a3), vb = values(b3);
  const std::vector<double> vs = self.defined() ? values(self.expand({m, n})) : std::vector<double>();
  Reference r;
  r.k = k;
  for (int64_t t = 0; t < batch; ++t) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double product = va[(t * m + i) * k + p] * vb[(t * k + p) * n + j];
          sum += product;
          magnitude += std::fabs(product);
        }
        const double s = beta == 0 || vs.empty() ? 0.0 : beta * vs[i * n + j];
        r.value.push_back(alpha * sum + s);
        r.magnitude.push_back(std::fabs(alpha) * magnitude + std::fabs(s));
      }
    }
  }
  return r;
}

void expect_close(const Tensor& got, const Reference& r) {
  ASSERT_EQ(got.dtype(), kBFloat16);
  const std::vector<double> g = values(got);
  ASSERT_EQ(g.size(), r.value.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const double acc_err = static_cast<double>(r.k + 4) * kFloatEps * r.magnitude[i];
    const double tolerance = acc_err + kBf16Eps * (std::fabs(r.value[i]) + acc_err);
    ASSERT_LE(std::fabs(g[i] - r.value[i]), tolerance) << "element " << i << ": " << g[i] << " vs " << r.value[i];
  }
}

TEST(Bf16Products, MmMatchesReferenceOnRaggedShapesAndLayouts) {
  uint32_t seed = 1;
  for (int64_t m : {1, 7, 33, 100, 257}) {
    for (int64_t n : {1, 7, 33, 257}) {
      for (int64_t k : {1, 33, 100}) {
        SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k);
        const Tensor a = random_bf16({m, k}, seed++), b = random_bf16({k, n}, seed++);
        const Tensor at = random_bf16({k, m}, seed++).t(), bt = random_bf16({n, k}, seed++).t();
        expect_close(mm(a, b), reference_product(a, b, Tensor(), 1, 0));
        expect_close(mm(at, bt), reference_product(at, bt, Tensor(), 1, 0));
        expect_close(mm(a, bt), reference_product(a, bt, Tensor(), 1, 0));
      }
    }
  }
  // Sliced operands: a column stride of 2, rows every other row.
  const Tensor as = random_bf16({33, 202}, seed++).slice(1, 0, 202, 2);
  const Tensor bs = random_bf16({202, 40}, seed++).slice(0, 0, 202, 2);
  expect_close(mm(as, bs), reference_product(as, bs, Tensor(), 1, 0));
}

TEST(Bf16Products, BmmMatchesReferenceWithTransposedBatches) {
  const Tensor a = random_bf16({3, 33, 100}, 1), b = random_bf16({3, 100, 57}, 2);
  const Tensor at = random_bf16({3, 100, 33}, 3).transpose(1, 2), bt = random_bf16({57, 3, 100}, 4).permute({1, 2, 0});
  expect_close(bmm(a, b), reference_product(a, b, Tensor(), 1, 0));
  expect_close(bmm(at, bt), reference_product(at, bt, Tensor(), 1, 0));
  // Many small matrices (split over threads by matrix) and an odd depth.
  const Tensor sa = random_bf16({64, 7, 33}, 5), sb = random_bf16({64, 33, 9}, 6);
  expect_close(bmm(sa, sb), reference_product(sa, sb, Tensor(), 1, 0));
}

TEST(Bf16Products, AddmmWithAlphaBetaAndBroadcastSelf) {
  const Tensor m1 = random_bf16({100, 257}, 1), m2 = random_bf16({257, 33}, 2);
  for (const Tensor& self : {random_bf16({100, 33}, 3), random_bf16({33}, 4), random_bf16({100, 1}, 5)}) {
    SCOPED_TRACE(::testing::Message() << "self " << self.sizes());
    expect_close(addmm(self, m1, m2), reference_product(m1, m2, self, 1, 1));
    expect_close(addmm(self, m1, m2, 0.5, -2.0), reference_product(m1, m2, self, -2.0, 0.5));
    expect_close(addmm(self, m1.t().contiguous().t(), m2, 0, 1.5), reference_product(m1, m2, self, 1.5, 0));
  }
  // k == 0: beta * self.
  const Tensor self = random_bf16({4, 5}, 6);
  expect_close(addmm(self, empty({4, 0}, kBFloat16), empty({0, 5}, kBFloat16), 0.5, 3),
               reference_product(empty({4, 0}, kBFloat16), empty({0, 5}, kBFloat16), self, 3, 0.5));
}

// mm rounds the float32 accumulator to bf16 once, at the end.
TEST(Bf16Products, MmIsTheGemmAccumulatorRoundedOnce) {
  if (!cpu::gemm_bf16_available()) GTEST_SKIP() << "no bf16 kernel here: mm widens to float32";
  const int64_t m = 100, n = 257, k = 33;
  const Tensor a = random_bf16({m, k}, 1), b = random_bf16({k, n}, 2);
  std::vector<float> acc(m * n);
  cpu::gemm_bf16(m, n, k, 1.f, a.data_ptr<BFloat16>(), k, 1, b.data_ptr<BFloat16>(), n, 1, 0.f, acc.data(), n, 1);
  const Tensor out = mm(a, b);
  const BFloat16* got = out.data_ptr<BFloat16>();
  for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(got[i].bits, BFloat16(acc[i]).bits) << "element " << i;
}

TEST(Bf16Products, OneAndTwoThreadsGiveTheSameBits) {
  ThreadCount restore;
  const Tensor a = random_bf16({517, 611}, 1), b = random_bf16({611, 263}, 2), self = random_bf16({263}, 3);
  const Tensor ba = random_bf16({4, 100, 120}, 4), bb = random_bf16({4, 120, 90}, 5);
  std::vector<Tensor> one, two;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    std::vector<Tensor>& out = threads == 1 ? one : two;
    out = {mm(a, b), mm(b.t(), a.t()), addmm(self, a, b, 0.5, 2), bmm(ba, bb)};
  }
  for (size_t i = 0; i < one.size(); ++i) {
    ASSERT_EQ(one[i].sizes(), two[i].sizes());
    EXPECT_EQ(std::memcmp(one[i].data_ptr(), two[i].data_ptr(), one[i].nbytes()), 0) << "product " << i;
  }
}

}  // namespace
}  // namespace ember
