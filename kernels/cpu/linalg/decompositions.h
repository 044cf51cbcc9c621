// What the linear-algebra kernels (solve.cpp, cholesky_qr.cpp, spectral.cpp)
// share: argument checks, batches of strided matrices read into Eigen
// matrices, results written back, the parallel loop over a batch, and errors
// that name the failing batch element.
//
// Note [Linear algebra on CPU]
// Each kernel runs one Eigen factorisation per matrix of the batch, in the
// input's dtype (float32 or float64), on one thread per matrix: Eigen is
// built without OpenMP, so a batch is split over ember's pool by matrix and
// every result is computed by the same operations whatever the thread
// count. A matrix is copied out of its tensor (any strides, broadcast batch
// dims included) into a column-major Eigen matrix, and its results are
// written to new contiguous tensors.
//
// A failure (a singular matrix, one that is not positive-definite) is
// recorded per matrix and raised after the loop for the lowest failing
// batch element, so the message does not depend on which thread saw it first.
//
// Note [Signs of the factors]
// Q of a QR factorisation, the singular vectors and the eigenvectors are
// unique only up to the sign of each column (of each pair of columns u_i,
// v_i for the SVD) when the factorisation is unique at all. LAPACK, and so
// PyTorch, returns whatever signs its algorithm produced. ember fixes them:
//   qr    each diagonal element of R is >= 0 (then Q and R are unique for a
//         matrix of full column rank);
//   svd   the entry of largest magnitude in each column u_i of U is > 0 (the
//         first such entry on a tie), and v_i follows;
//   eigh  the entry of largest magnitude in each eigenvector is > 0.
// So a decomposition is a continuous function of the input wherever it is
// unique, the outputs do not depend on how Eigen reached them, and
// finite differences (gradcheck) see the same branch as backward. Columns
// beyond min(m, n) (complete QR, svd with full_matrices) are any orthonormal
// completion, as in PyTorch.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "ember/parallel.h"
#include "ember/tensor.h"

namespace ember::cpu::linalg {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// ---- argument checks ----

// A float32 or float64 CPU tensor of at least 2 dims (square when asked).
// `what` names the argument in messages ("A", "B").
void check_matrices(const char* op, const Tensor& t, bool square, const char* what = "A");

// The batch dims of a (*, rows, cols) tensor.
DimVector batch_shape(const Tensor& t);

// The number of matrices in a batch of shape `batch`.
int64_t batch_count(IntArrayRef batch);

// "batch element 3: " for a batched input, "" for a single matrix.
std::string batch_element(IntArrayRef batch, int64_t b);

// ---- batches of matrices ----

// The matrices of a tensor (*, rows, cols) seen with the batch shape
// `batch` (which the tensor's batch dims broadcast to).
class MatrixBatch {
 public:
  MatrixBatch(const Tensor& t, IntArrayRef batch);
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }

  // A copy of matrix b.
  template <class T>
  Matrix<T> load(int64_t b) const {
    const T* p = static_cast<const T*>(data_) + offset(b);
    Matrix<T> m(rows_, cols_);
    for (int64_t j = 0; j < cols_; ++j)
      for (int64_t i = 0; i < rows_; ++i) m(i, j) = p[i * row_stride_ + j * col_stride_];
    return m;
  }

 private:
  int64_t offset(int64_t b) const;  // in elements

  const void* data_;
  DimVector sizes_, strides_;  // batch dims, broadcast ones with stride 0
  int64_t rows_, cols_, row_stride_, col_stride_;
};

// A new contiguous tensor of shape batch + tail.
Tensor make_result(IntArrayRef batch, std::initializer_list<int64_t> tail, const Tensor& like);

// Writes m as matrix b of a contiguous result whose matrices are m-sized
// (an Eigen expression is evaluated first).
template <class T>
void store(const Tensor& out, int64_t b, const Matrix<T>& m) {
  const int64_t rows = m.rows(), cols = m.cols();
  T* p = out.data_ptr<T>() + b * rows * cols;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) p[i * cols + j] = m(i, j);
}

// Writes the vector v as row b of a contiguous result of shape batch + [n].
template <class T>
void store_vector(const Tensor& out, int64_t b, const Vector<T>& v) {
  T* p = out.data_ptr<T>() + b * v.size();
  for (int64_t i = 0; i < v.size(); ++i) p[i] = v(i);
}

// ---- the loop over a batch ----

// Calls fn(b) for every matrix of the batch, several matrices per task when
// they are small (flops: the rough cost of one), in a fixed chunking.
template <class F>
void for_each_matrix(int64_t count, int64_t flops, F fn) {
  constexpr int64_t kFlopsPerTask = int64_t{1} << 17;
  const int64_t grain = std::max<int64_t>(1, kFlopsPerTask / std::max<int64_t>(1, flops));
  parallel_for(0, count, grain, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) fn(b);
  });
}

// One entry per matrix: -1, or a detail of why the matrix failed (a pivot,
// the order of a minor), filled by the loop and checked after it.
class Failures {
 public:
  explicit Failures(int64_t count) : detail_(static_cast<size_t>(count), -1) {}
  void set(int64_t b, int64_t detail) { detail_[static_cast<size_t>(b)] = detail; }
  // Calls raise(b, detail) for the lowest failing matrix, if any.
  template <class F>
  void raise_first(F raise) const {
    for (size_t b = 0; b < detail_.size(); ++b) {
      if (detail_[b] >= 0) return raise(static_cast<int64_t>(b), detail_[b]);
    }
  }

 private:
  std::vector<int64_t> detail_;
};

// Runs f.template operator()<T>() for the float32 or float64 dtype t.
template <class F>
decltype(auto) dispatch_linalg(DType t, F&& f) {
  if (t == DType::Float64) return f.template operator()<double>();
  return f.template operator()<float>();
}

// The position (row-major flat index) of the first non-finite entry of m, or -1.
template <class T>
int64_t first_non_finite(const Matrix<T>& m) {
  for (int64_t i = 0; i < m.rows(); ++i)
    for (int64_t j = 0; j < m.cols(); ++j)
      if (!std::isfinite(m(i, j))) return i * m.cols() + j;
  return -1;
}

// Flips the sign of column i of `vectors` (and of `partner`, when given) for
// each i < count where the column's entry of largest magnitude is negative
// (Note [Signs of the factors]).
template <class T>
void make_largest_entries_positive(Matrix<T>& vectors, Matrix<T>* partner, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = 0;
    for (int64_t r = 1; r < vectors.rows(); ++r) {
      if (std::abs(vectors(r, i)) > std::abs(vectors(at, i))) at = r;
    }
    if (vectors.rows() == 0 || vectors(at, i) >= 0) continue;
    vectors.col(i) *= T(-1);
    if (partner) partner->col(i) *= T(-1);
  }
}

// ---- the kernels, registered by decompositions.cpp ----

Tensor solve_kernel(const Tensor& A, const Tensor& B);  // solve.cpp
Tensor inv_kernel(const Tensor& A);
Tensor det_kernel(const Tensor& A);
std::tuple<Tensor, Tensor> slogdet_kernel(const Tensor& A);
Tensor cholesky_kernel(const Tensor& A, bool upper);  // cholesky_qr.cpp
std::tuple<Tensor, Tensor> qr_kernel(const Tensor& A, std::string_view mode);
std::tuple<Tensor, Tensor, Tensor> svd_kernel(const Tensor& A, bool full_matrices);  // spectral.cpp
std::tuple<Tensor, Tensor> eigh_kernel(const Tensor& A, std::string_view uplo);
Tensor pinv_kernel(const Tensor& A, const std::optional<Scalar>& atol, const std::optional<Scalar>& rtol,
                   bool hermitian);

}  // namespace ember::cpu::linalg
