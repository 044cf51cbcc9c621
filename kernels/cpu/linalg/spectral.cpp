// linalg_svd, linalg_eigh and linalg_pinv on CPU (Note [Linear algebra on
// CPU] in decompositions.h).
//
//   svd   Eigen::BDCSVD (divide and conquer; it runs one-sided Jacobi on
//         matrices under 16 columns): A = U diag(S) Vh, S descending. With
//         full_matrices U is (m, m) and Vh (n, n), else (m, k) and (k, n).
//   eigh  Eigen::SelfAdjointEigenSolver (tridiagonalisation, then implicit
//         symmetric QR steps) on the triangle UPLO names, the other one
//         ignored as in LAPACK: eigenvalues ascending, eigenvectors as columns.
//   pinv  from the SVD (or, when `hermitian`, from eigh of the lower
//         triangle): the singular values (|eigenvalues|) above
//         max(atol, rtol * largest) are inverted, the others dropped. As in
//         PyTorch, rtol defaults to eps * max(m, n) when neither tolerance is
//         given, and to 0 when only atol is.
// Signs of singular vectors and eigenvectors: Note [Signs of the factors].
// A matrix with a NaN or an infinity is refused (the iterations would not
// converge), naming the batch element and the entry.
#include <limits>

#include "kernels/cpu/linalg/decompositions.h"

namespace ember::cpu::linalg {
namespace {

template <class T>
using SVD = Eigen::BDCSVD<Matrix<T>>;
template <class T>
using EigenSolver = Eigen::SelfAdjointEigenSolver<Matrix<T>>;

// Raises the non-finite entry recorded for the lowest failing matrix.
void raise_non_finite(const Failures& failures, const char* op, IntArrayRef batch, int64_t cols) {
  failures.raise_first([&](int64_t b, int64_t at) {
    EMBER_FAIL(op, ": the input has a non-finite entry (", batch_element(batch, b), "A[", at / cols, ", ", at % cols,
               "]), so the iterations cannot converge");
  });
}

// The symmetric matrix whose `lower` (or upper) triangle is a's.
template <class T>
Matrix<T> symmetric_from(const Matrix<T>& a, bool lower) {
  if (lower) return a.template selfadjointView<Eigen::Lower>();
  return a.template selfadjointView<Eigen::Upper>();
}

// The position (row-major flat index) of the first non-finite entry of the
// triangle of a that is read, or -1.
template <class T>
int64_t first_non_finite_in(const Matrix<T>& a, bool lower) {
  for (int64_t i = 0; i < a.rows(); ++i)
    for (int64_t j = lower ? 0 : i; j <= (lower ? i : a.cols() - 1); ++j)
      if (!std::isfinite(a(i, j))) return i * a.cols() + j;
  return -1;
}

bool parse_uplo(std::string_view uplo) {
  EMBER_CHECK(uplo == "L" || uplo == "U", "linalg.eigh: UPLO must be 'L' or 'U', but got '", uplo, "'");
  return uplo == "L";
}

// The cut-off below which pinv drops a singular value (see the header comment).
template <class T>
T pinv_tolerance(T largest, const std::optional<Scalar>& atol, const std::optional<Scalar>& rtol, int64_t m,
                 int64_t n) {
  const T a = atol ? static_cast<T>(atol->to_double()) : T(0);
  const T r = rtol ? static_cast<T>(rtol->to_double())
                   : (atol && a > 0 ? T(0) : std::numeric_limits<T>::epsilon() * static_cast<T>(std::max(m, n)));
  return std::max(a, r * largest);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd_kernel(const Tensor& A, bool full_matrices) {
  check_matrices("linalg.svd", A, false);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t u_cols = full_matrices ? m : k, vh_rows = full_matrices ? n : k;
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor U = make_result(batch, {m, u_cols}, A), S = make_result(batch, {k}, A);
  Tensor Vh = make_result(batch, {vh_rows, n}, A);
  Failures failures(batch_count(batch));
  dispatch_linalg(A.dtype(), [&]<class T>() {
    const int options =
        full_matrices ? Eigen::ComputeFullU | Eigen::ComputeFullV : Eigen::ComputeThinU | Eigen::ComputeThinV;
    for_each_matrix(batch_count(batch), 4 * m * n * std::max<int64_t>(k, 1), [&](int64_t b) {
      if (k == 0) {  // no singular values; a full U or Vh is the identity
        store<T>(U, b, Matrix<T>::Identity(m, u_cols));
        return store<T>(Vh, b, Matrix<T>::Identity(vh_rows, n));
      }
      const Matrix<T> a = as.load<T>(b);
      const int64_t bad = first_non_finite(a);
      if (bad >= 0) return failures.set(b, bad);
      const SVD<T> svd(a, options);
      Matrix<T> u = svd.matrixU(), v = svd.matrixV();
      make_largest_entries_positive(u, &v, k);
      store<T>(U, b, u);
      store_vector<T>(S, b, svd.singularValues());
      store<T>(Vh, b, v.transpose());
    });
  });
  raise_non_finite(failures, "linalg.svd", batch, n);
  return {U, S, Vh};
}

std::tuple<Tensor, Tensor> eigh_kernel(const Tensor& A, std::string_view uplo) {
  check_matrices("linalg.eigh", A, true);
  const bool lower = parse_uplo(uplo);
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor values = make_result(batch, {n}, A), vectors = make_result(batch, {n, n}, A);
  const int64_t count = n == 0 ? 0 : batch_count(batch);
  Failures failures(count), unconverged(count);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    for_each_matrix(count, 9 * n * n * n, [&](int64_t b) {
      const Matrix<T> stored = as.load<T>(b);
      const int64_t bad = first_non_finite_in(stored, lower);
      if (bad >= 0) return failures.set(b, bad);
      const EigenSolver<T> solver(symmetric_from(stored, lower));
      if (solver.info() != Eigen::Success) return unconverged.set(b, 0);
      Matrix<T> v = solver.eigenvectors();
      make_largest_entries_positive<T>(v, nullptr, n);
      store_vector<T>(values, b, solver.eigenvalues());
      store<T>(vectors, b, v);
    });
  });
  raise_non_finite(failures, "linalg.eigh", batch, n);
  unconverged.raise_first([&](int64_t b, int64_t) {
    EMBER_FAIL("linalg.eigh: the QR iterations did not converge (", batch_element(batch, b),
               "the matrix is too ill-conditioned)");
  });
  return {values, vectors};
}

Tensor pinv_kernel(const Tensor& A, const std::optional<Scalar>& atol, const std::optional<Scalar>& rtol,
                   bool hermitian) {
  check_matrices("linalg.pinv", A, hermitian);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor out = make_result(batch, {n, m}, A);
  const int64_t count = out.numel() == 0 ? 0 : batch_count(batch);
  Failures failures(count);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    for_each_matrix(count, 4 * m * n * std::max<int64_t>(k, 1), [&](int64_t b) {
      Matrix<T> a = as.load<T>(b);
      const int64_t bad = hermitian ? first_non_finite_in(a, true) : first_non_finite(a);
      if (bad >= 0) return failures.set(b, bad);
      if (hermitian) a = symmetric_from(a, true);
      if (k == 0) return store<T>(out, b, Matrix<T>::Zero(n, m));
      if (hermitian) {  // A = Q diag(w) Q^T, pinv = Q diag(1 / w) Q^T over the kept w
        const EigenSolver<T> solver(a);
        const Vector<T>& w = solver.eigenvalues();
        const T tol = pinv_tolerance(w.cwiseAbs().maxCoeff(), atol, rtol, m, n);
        const Vector<T> inv = w.unaryExpr([tol](T x) { return std::abs(x) > tol ? T(1) / x : T(0); });
        return store<T>(out, b, solver.eigenvectors() * inv.asDiagonal() * solver.eigenvectors().transpose());
      }
      const SVD<T> svd(a, Eigen::ComputeThinU | Eigen::ComputeThinV);  // pinv = V diag(1 / s) U^T over the kept s
      const Vector<T>& s = svd.singularValues();
      const T tol = pinv_tolerance(s(0), atol, rtol, m, n);
      const Vector<T> inv = s.unaryExpr([tol](T x) { return x > tol ? T(1) / x : T(0); });
      store<T>(out, b, svd.matrixV() * inv.asDiagonal() * svd.matrixU().transpose());
    });
  });
  raise_non_finite(failures, "linalg.pinv", batch, n);
  return out;
}

}  // namespace ember::cpu::linalg
