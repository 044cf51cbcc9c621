// The LU family on CPU: linalg_solve, linalg_inv, linalg_det, linalg_slogdet.
// Each matrix is factorised as P A = L U with partial pivoting
// (Eigen::PartialPivLU); see Note [Linear algebra on CPU] in decompositions.h.
//
// A matrix is singular when a pivot U[k, k] is exactly zero, as LAPACK
// decides (a nearly singular matrix solves, with a large error, as in
// PyTorch). solve and inv refuse it with an error naming the batch element
// and the pivot; det gives 0 and slogdet gives sign 0, logabsdet -inf.
#include <limits>

#include "kernels/cpu/linalg/decompositions.h"

namespace ember::cpu::linalg {
namespace {

template <class T>
using LU = Eigen::PartialPivLU<Matrix<T>>;

// The index of the first zero pivot of an LU factorisation, or -1.
template <class T>
int64_t zero_pivot(const LU<T>& lu) {
  for (int64_t k = 0; k < lu.matrixLU().rows(); ++k) {
    if (lu.matrixLU()(k, k) == T(0)) return k;
  }
  return -1;
}

// `batch` is the batch the element index counts in (solve's broadcast one).
[[noreturn]] void raise_singular(const char* op, const char* what, const Tensor& A, IntArrayRef batch, int64_t b,
                                 int64_t pivot) {
  EMBER_FAIL(op, ": ", what, " (shape ", A.sizes(), ") is singular (", batch_element(batch, b), "U[", pivot, ", ",
             pivot, "] of its LU factorisation is zero); expected invertible matrices");
}

// log|det| and the sign of det from the LU factors: det = det(P) * prod(U[k, k]).
template <class T>
std::pair<T, T> sign_and_log(const LU<T>& lu) {
  T sign = static_cast<T>(lu.permutationP().determinant());
  T log_abs = 0;
  for (int64_t k = 0; k < lu.matrixLU().rows(); ++k) {
    const T u = lu.matrixLU()(k, k);
    if (u == T(0)) return {T(0), -std::numeric_limits<T>::infinity()};
    if (u < 0) sign = -sign;
    log_abs += std::log(std::abs(u));
  }
  return {sign, log_abs};
}

}  // namespace

// A (*, n, n), B (*, n, k) -> X (*, n, k) with A X = B; the batch dims broadcast.
Tensor solve_kernel(const Tensor& A, const Tensor& B) {
  check_matrices("linalg.solve", A, true, "A");
  check_matrices("linalg.solve", B, false, "B");
  EMBER_CHECK(A.dtype() == B.dtype(), "linalg.solve: expected A and B to have the same dtype, but got ", A.dtype(),
              " and ", B.dtype());
  const int64_t n = A.size(-1), k = B.size(-1);
  EMBER_CHECK(B.size(-2) == n, "linalg.solve: A of shape ", A.sizes(), " and B of shape ", B.sizes(),
              " are incompatible: A has ", n, " rows, B has ", B.size(-2));
  const DimVector batch = broadcast_shapes(batch_shape(A), batch_shape(B), "linalg.solve");
  const MatrixBatch as(A, batch), bs(B, batch);
  Tensor X = make_result(batch, {n, k}, A);
  const int64_t count = X.numel() == 0 ? 0 : batch_count(batch);
  Failures failures(count);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    for_each_matrix(count, n * n * (n + k), [&](int64_t b) {
      const LU<T> lu(as.load<T>(b));
      const int64_t pivot = zero_pivot(lu);
      if (pivot >= 0) return failures.set(b, pivot);
      store<T>(X, b, lu.solve(bs.load<T>(b)));
    });
  });
  failures.raise_first([&](int64_t b, int64_t p) { raise_singular("linalg.solve", "A", A, batch, b, p); });
  return X;
}

Tensor inv_kernel(const Tensor& A) {
  check_matrices("linalg.inv", A, true);
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor out = make_result(batch, {n, n}, A);
  const int64_t count = n == 0 ? 0 : batch_count(batch);
  Failures failures(count);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    for_each_matrix(count, 2 * n * n * n, [&](int64_t b) {
      const LU<T> lu(as.load<T>(b));
      const int64_t pivot = zero_pivot(lu);
      if (pivot >= 0) return failures.set(b, pivot);
      store<T>(out, b, lu.inverse());
    });
  });
  failures.raise_first([&](int64_t b, int64_t p) { raise_singular("linalg.inv", "the input", A, batch, b, p); });
  return out;
}

// det and slogdet of each matrix; a 0x0 matrix has det 1, as the empty product.
Tensor det_kernel(const Tensor& A) {
  check_matrices("linalg.det", A, true);
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor out = make_result(batch, {}, A);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    T* o = out.data_ptr<T>();
    for_each_matrix(out.numel(), n * n * n,
                    [&](int64_t b) { o[b] = n == 0 ? T(1) : LU<T>(as.load<T>(b)).determinant(); });
  });
  return out;
}

std::tuple<Tensor, Tensor> slogdet_kernel(const Tensor& A) {
  check_matrices("linalg.slogdet", A, true);
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor sign = make_result(batch, {}, A), log_abs = make_result(batch, {}, A);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    T* s = sign.data_ptr<T>();
    T* l = log_abs.data_ptr<T>();
    for_each_matrix(sign.numel(), n * n * n, [&](int64_t b) {
      std::tie(s[b], l[b]) = n == 0 ? std::pair<T, T>(1, 0) : sign_and_log(LU<T>(as.load<T>(b)));
    });
  });
  return {sign, log_abs};
}

}  // namespace ember::cpu::linalg
