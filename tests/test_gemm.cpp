// The CPU GEMM against its reference triple loop: shapes, transposes, strided
// C, alpha/beta, f32 and f64, and bitwise equality across thread counts.
//
// Tolerance: the fast kernel and the reference add the k products in different
// orders, and each order is off from the exact sum by at most about
// k * eps/2 * sum_p |A(i,p) B(p,j)| (plus a few roundings for alpha and beta).
// We allow their difference (k + 4) * eps * (|alpha| sum_p |A(i,p) B(p,j)| + |beta C(i,j)|).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/linalg/gemm_pack.h"
#include "tests/gemm_test_matrix.h"

namespace ember::cpu {
namespace {

using ::ember::testing::describe;
using ::ember::testing::fill_random;
using ::ember::testing::Layout;
using ::ember::testing::layout_name;
using ::ember::testing::Matrix;
using Case = ::ember::testing::GemmCase<double>;

template <class T>
void gemm_fast(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
               int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t c_rs, int64_t c_cs) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_f32(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs);
  } else {
    gemm_f64(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs);
  }
}

template <class T>
void gemm_ref(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
              int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t c_rs, int64_t c_cs) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_reference_f32(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs);
  } else {
    gemm_reference_f64(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs);
  }
}

// Runs gemm_f32/f64 and the reference on the same random inputs and compares.
// With beta == 0, C starts as NaN, which must not leak into the result.
template <class T>
void expect_matches_reference(const Case& tc, uint32_t seed = 1) {
  SCOPED_TRACE(describe(tc));
  std::mt19937 rng(seed);
  Matrix<T> a(tc.m, tc.k, tc.a_layout), b(tc.k, tc.n, tc.b_layout), c(tc.m, tc.n, tc.c_layout);
  fill_random(a, rng);
  fill_random(b, rng);
  if (tc.beta == 0) {
    std::fill(c.storage.begin(), c.storage.end(), std::numeric_limits<T>::quiet_NaN());
  } else {
    fill_random(c, rng);
  }
  Matrix<T> expected = c, bound = c;
  const std::vector<T> c_before = c.storage;
  const T alpha = static_cast<T>(tc.alpha), beta = static_cast<T>(tc.beta);
  gemm_fast<T>(tc.m, tc.n, tc.k, alpha, a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, beta, c.data(), c.rs, c.cs);
  gemm_ref<T>(tc.m, tc.n, tc.k, alpha, a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, beta, expected.data(),
              expected.rs, expected.cs);

  // bound = |alpha| |A| |B| + |beta| |C|, the scale of each element's rounding error.
  Matrix<T> abs_a = a, abs_b = b;
  for (T& x : abs_a.storage) x = std::abs(x);
  for (T& x : abs_b.storage) x = std::abs(x);
  for (T& x : bound.storage) x = std::abs(x);
  gemm_ref<T>(tc.m, tc.n, tc.k, std::abs(alpha), abs_a.data(), a.rs, a.cs, abs_b.data(), b.rs, b.cs, std::abs(beta),
              bound.data(), bound.rs, bound.cs);

  const T eps = std::numeric_limits<T>::epsilon();
  int64_t reported = 0;
  for (int64_t i = 0; i < tc.m; ++i) {
    for (int64_t j = 0; j < tc.n; ++j) {
      const T tolerance = static_cast<T>(tc.k + 4) * eps * bound.at(i, j);
      const T got = c.at(i, j), want = expected.at(i, j);
      if (!(std::abs(got - want) <= tolerance) && reported++ < 5) {
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got << ", reference " << want << ", tolerance "
                      << tolerance;
      }
    }
  }
  EXPECT_EQ(reported, 0) << "elements outside tolerance";

  // Storage between C's elements (padding, strides) is left alone.
  std::vector<bool> is_element(c.storage.size(), false);
  for (int64_t i = 0; i < tc.m; ++i) {
    for (int64_t j = 0; j < tc.n; ++j) is_element[i * c.rs + j * c.cs] = true;
  }
  for (size_t e = 0; e < c.storage.size(); ++e) {
    if (!is_element[e]) {
      ASSERT_EQ(std::memcmp(&c.storage[e], &c_before[e], sizeof(T)), 0) << "storage index " << e << " changed";
    }
  }
}

template <class T>
void expect_matches_reference_all_layouts(int64_t m, int64_t n, int64_t k) {
  for (Layout a_layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Layout b_layout : {Layout::kRowMajor, Layout::kColMajor}) {
      expect_matches_reference<T>({m, n, k, a_layout, b_layout});
    }
  }
}

template <class T>
class GemmTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GemmTest, ElementTypes);

TYPED_TEST(GemmTest, MatchesReferenceForSmallAndPrimeShapes) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {2, 3, 4}, {5, 1, 7}, {1, 9, 3},
                         {37, 53, 71}, {13, 29, 3}, {64, 64, 64}, {97, 101, 103}}) {
    expect_matches_reference_all_layouts<TypeParam>(m, n, k);
  }
}

TYPED_TEST(GemmTest, MatchesReferenceForTallSkinnyAndDeepShapes) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1000, 3, 17}, {3, 1000, 17}, {7, 9, 1000},
                         {700, 1, 300}, {1, 700, 300}, {5, 4500, 9}}) {
    expect_matches_reference_all_layouts<TypeParam>(m, n, k);
  }
}

TYPED_TEST(GemmTest, MatchesReferenceAcrossCacheBlocks) {
  // Larger than one depth block and one row block, with ragged edges; 1025
  // columns span two B blocks wherever L2 is 2 MiB or smaller.
  expect_matches_reference_all_layouts<TypeParam>(517, 263, 611);
  expect_matches_reference<TypeParam>({1023, 1025, 129});
  expect_matches_reference<TypeParam>({128, 512, 784});
}

TYPED_TEST(GemmTest, EmptyShapesLeaveOrScaleC) {
  expect_matches_reference<TypeParam>({0, 5, 3});
  expect_matches_reference<TypeParam>({5, 0, 3});
  // k == 0: C = beta * C, and C = 0 when beta == 0 even if it held NaN.
  expect_matches_reference<TypeParam>({5, 7, 0, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor, 1, 0});
  expect_matches_reference<TypeParam>({5, 7, 0, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor, 1, 0.5});
}

TYPED_TEST(GemmTest, StridedAndTransposedC) {
  for (Layout c_layout : {Layout::kColMajor, Layout::kPaddedRows, Layout::kStrided}) {
    for (Layout a_layout : {Layout::kRowMajor, Layout::kColMajor, Layout::kStrided}) {
      for (Layout b_layout : {Layout::kRowMajor, Layout::kColMajor, Layout::kStrided}) {
        expect_matches_reference<TypeParam>({37, 53, 71, a_layout, b_layout, c_layout, 1, 0.5});
      }
    }
  }
}

TYPED_TEST(GemmTest, AlphaAndBeta) {
  for (double alpha : {1.0, -2.5, 0.0}) {
    for (double beta : {0.0, 1.0, -0.75}) {
      expect_matches_reference<TypeParam>({37, 53, 71, Layout::kRowMajor, Layout::kRowMajor, Layout::kRowMajor,
                                           alpha, beta});
      expect_matches_reference<TypeParam>({150, 90, 300, Layout::kColMajor, Layout::kRowMajor,
                                           Layout::kPaddedRows, alpha, beta});
    }
  }
}

TYPED_TEST(GemmTest, AlphaZeroDoesNotReadAOrB) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(6, nan), b(6, nan), c = {1, 2, 3, 4};
  gemm_fast<T>(2, 2, 3, T(0), a.data(), 3, 1, b.data(), 2, 1, T(2), c.data(), 2, 1);
  EXPECT_EQ(c, (std::vector<T>{2, 4, 6, 8}));
}

// Same bits whatever the thread count: each C element is summed over the same
// depth blocks in the same order by whichever thread owns it.
TYPED_TEST(GemmTest, BitwiseIdenticalForOneTwoAndThreeThreads) {
  using T = TypeParam;
  const int saved_threads = get_num_threads();
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{517, 263, 611}, {128, 512, 784}, {1000, 3, 300},
                         {3, 1000, 300}, {300, 300, 300}}) {
    for (Layout a_layout : {Layout::kRowMajor, Layout::kColMajor}) {
      SCOPED_TRACE(describe(Case{m, n, k, a_layout}));
      std::mt19937 rng(7);
      Matrix<T> a(m, k, a_layout), b(k, n, Layout::kRowMajor), c(m, n, Layout::kRowMajor);
      fill_random(a, rng);
      fill_random(b, rng);
      fill_random(c, rng);
      std::vector<std::vector<T>> results;
      for (int threads : {1, 2, 3}) {
        set_num_threads(threads);
        Matrix<T> out = c;
        gemm_fast<T>(m, n, k, T(1.5), a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, T(0.5), out.data(), out.rs,
                     out.cs);
        results.push_back(out.storage);
      }
      for (size_t t = 1; t < results.size(); ++t) {
        EXPECT_EQ(std::memcmp(results[0].data(), results[t].data(), results[0].size() * sizeof(T)), 0)
            << "1 vs " << t + 1 << " threads";
      }
    }
  }
  set_num_threads(saved_threads);
}

// A GEMM called from inside a parallel loop (say, one per batch element) runs
// on its caller's thread and gives the same bits as a call from outside.
TYPED_TEST(GemmTest, NestedInParallelForGivesSameBits) {
  using T = TypeParam;
  const int64_t m = 150, n = 90, k = 300;
  std::mt19937 rng(11);
  Matrix<T> a(m, k, Layout::kRowMajor), b(k, n, Layout::kRowMajor), outside(m, n, Layout::kRowMajor);
  fill_random(a, rng);
  fill_random(b, rng);
  gemm_fast<T>(m, n, k, T(1), a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, T(0), outside.data(), n, 1);
  std::vector<Matrix<T>> inside(4, Matrix<T>(m, n, Layout::kRowMajor));
  parallel_for(0, 4, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      gemm_fast<T>(m, n, k, T(1), a.data(), a.rs, a.cs, b.data(), b.rs, b.cs, T(0), inside[i].data(), n, 1);
    }
  });
  for (const auto& result : inside) EXPECT_EQ(result.storage, outside.storage);
}

// Packing for every panel width the kernels use on any instruction set
// (AVX2: 6, 8, 16; AVX-512: 12, 16, 32; portable: 4), all layouts, ragged
// widths and depths, against the layout spelled out element by element.
template <int W, class T>
void expect_packs_panels(int64_t depth, int64_t wide, Layout layout) {
  SCOPED_TRACE("W " + std::to_string(W) + ", depth " + std::to_string(depth) + ", wide " + std::to_string(wide) +
               ", " + layout_name(layout));
  std::mt19937 rng(3);
  Matrix<T> src(depth, wide, layout);
  fill_random(src, rng);
  const int64_t panels = (wide + W - 1) / W;
  std::vector<T> packed(panels * depth * W, std::numeric_limits<T>::quiet_NaN());
  gemm_detail::pack_panels<W>(src.data(), src.rs, src.cs, depth, wide, packed.data());
  for (int64_t q = 0; q < panels; ++q) {
    for (int64_t p = 0; p < depth; ++p) {
      for (int64_t w = 0; w < W; ++w) {
        const T want = q * W + w < wide ? src.at(p, q * W + w) : T(0);
        ASSERT_EQ(packed[(q * depth + p) * W + w], want) << "panel " << q << ", row " << p << ", column " << w;
      }
    }
  }
}

TYPED_TEST(GemmTest, PacksPanelsForEveryLayout) {
  using T = TypeParam;
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor, Layout::kStrided}) {
    for (auto [depth, wide] : {std::pair<int64_t, int64_t>{1, 1}, {7, 5}, {8, 12}, {19, 37}, {64, 70}}) {
      expect_packs_panels<4, T>(depth, wide, layout);
      expect_packs_panels<6, T>(depth, wide, layout);
      expect_packs_panels<8, T>(depth, wide, layout);
      expect_packs_panels<12, T>(depth, wide, layout);
      expect_packs_panels<16, T>(depth, wide, layout);
      expect_packs_panels<32, T>(depth, wide, layout);
    }
  }
}

}  // namespace
}  // namespace ember::cpu
