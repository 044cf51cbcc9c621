// What the GEMM tests (test_gemm.cpp, test_gemm_bf16.cpp) share: matrices in
// every memory layout a GEMM operand can have, random fills, and the test
// case with its description.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace ember::testing {

// How a matrix is laid out in memory.
enum class Layout { kRowMajor, kColMajor, kPaddedRows, kStrided, kReversed };

inline std::string layout_name(Layout layout) {
  switch (layout) {
    case Layout::kRowMajor: return "row-major";
    case Layout::kColMajor: return "col-major";
    case Layout::kPaddedRows: return "padded-rows";
    case Layout::kStrided: return "strided";
    case Layout::kReversed: return "reversed";
  }
  return "?";
}

// A rows x cols matrix inside a buffer: element (i, j) at origin + i * rs + j * cs.
template <class T>
struct Matrix {
  int64_t rows, cols, rs = 0, cs = 0, origin = 0;
  std::vector<T> storage;

  Matrix(int64_t r, int64_t c, Layout layout) : rows(r), cols(c) {
    switch (layout) {
      case Layout::kRowMajor: rs = c, cs = 1; break;
      case Layout::kColMajor: rs = 1, cs = r; break;
      case Layout::kPaddedRows: rs = c + 3, cs = 1; break;
      case Layout::kStrided: rs = 2 * c + 1, cs = 2; break;  // gaps between elements and between rows
      case Layout::kReversed: rs = -c, cs = -1; break;       // negative strides: (0, 0) is the last element
    }
    const int64_t row_span = std::max<int64_t>(r - 1, 0) * std::abs(rs);
    const int64_t col_span = std::max<int64_t>(c - 1, 0) * std::abs(cs);
    origin = (rs < 0 ? row_span : 0) + (cs < 0 ? col_span : 0);
    storage.assign(row_span + col_span + 2, T());  // one spare, so empty shapes still get a valid pointer
  }
  T& at(int64_t i, int64_t j) { return storage[origin + i * rs + j * cs]; }
  T* data() { return storage.data() + origin; }
};

// Uniform values in [-1, 1), drawn in double for double matrices and in float
// otherwise (then converted, e.g. rounded to bfloat16).
template <class T>
void fill_random(Matrix<T>& x, std::mt19937& rng) {
  using Draw = std::conditional_t<std::is_same_v<T, double>, double, float>;
  std::uniform_real_distribution<Draw> dist(-1, 1);
  for (int64_t i = 0; i < x.rows; ++i) {
    for (int64_t j = 0; j < x.cols; ++j) x.at(i, j) = T(dist(rng));
  }
}

// C (m, n) = alpha * A (m, k) * B (k, n) + beta * C with the given layouts;
// alpha and beta in the GEMM's scalar type.
template <class Scalar>
struct GemmCase {
  int64_t m, n, k;
  Layout a_layout = Layout::kRowMajor, b_layout = Layout::kRowMajor, c_layout = Layout::kRowMajor;
  Scalar alpha = 1, beta = 0;
};

template <class Scalar>
std::string describe(const GemmCase<Scalar>& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " A " +
         layout_name(c.a_layout) + ", B " + layout_name(c.b_layout) + ", C " + layout_name(c.c_layout) +
         ", alpha " + std::to_string(c.alpha) + ", beta " + std::to_string(c.beta);
}

}  // namespace ember::testing
