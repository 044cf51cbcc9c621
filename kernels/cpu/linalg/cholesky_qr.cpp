// linalg_cholesky and linalg_qr on CPU (Note [Linear algebra on CPU] in
// decompositions.h).
//
// cholesky reads one triangle of A (the lower one, or the upper one when
// `upper`), as LAPACK's potrf does, and returns L with A = L L^T (or
// U = L^T). A matrix that is not positive-definite is an error naming the
// batch element and the order of the first leading minor that is not
// positive. Eigen's LLT reports only that it failed; the order is found by
// bisection over the leading blocks (a block fails exactly when its minor is
// not positive, and every larger block then fails too), which costs a few
// more factorisations, on the error path only.
//
// qr is Householder QR (Eigen::HouseholderQR) with R's diagonal made
// non-negative (Note [Signs of the factors]). Modes as PyTorch's:
//   reduced   Q (m, k), R (k, n), k = min(m, n);
//   complete  Q (m, m), R (m, n);
//   r         R (k, n) only; Q is an empty tensor of shape [0].
#include "kernels/cpu/linalg/decompositions.h"

namespace ember::cpu::linalg {
namespace {

template <class T, int UpLo>
bool positive_definite(const Matrix<T>& a, int64_t order) {
  return Eigen::LLT<Matrix<T>, UpLo>(a.topLeftCorner(order, order)).info() == Eigen::Success;
}

// The order of the first leading minor of `a` that is not positive (the
// whole matrix is known to fail).
template <class T, int UpLo>
int64_t failing_minor(const Matrix<T>& a) {
  int64_t lo = 1, hi = a.rows();
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (positive_definite<T, UpLo>(a, mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

template <class T, int UpLo>
void cholesky_batch(const MatrixBatch& as, const Tensor& out, int64_t count, Failures& failures) {
  const int64_t n = as.rows();
  for_each_matrix(count, n * n * n / 3, [&](int64_t b) {
    const Matrix<T> a = as.load<T>(b);
    const Eigen::LLT<Matrix<T>, UpLo> llt(a);
    if (llt.info() != Eigen::Success) return failures.set(b, failing_minor<T, UpLo>(a));
    if constexpr (UpLo == Eigen::Lower) store<T>(out, b, llt.matrixL());
    else store<T>(out, b, llt.matrixU());
  });
}

struct QrMode {
  bool compute_q = true, complete = false;
};

QrMode parse_mode(std::string_view mode) {
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r",
              "linalg.qr: mode must be 'reduced', 'complete' or 'r', but got '", mode, "'");
  return {mode != "r", mode == "complete"};
}

}  // namespace

Tensor cholesky_kernel(const Tensor& A, bool upper) {
  check_matrices("linalg.cholesky", A, true);
  const int64_t n = A.size(-1);
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor out = make_result(batch, {n, n}, A);
  const int64_t count = n == 0 ? 0 : batch_count(batch);
  Failures failures(count);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    if (upper) cholesky_batch<T, Eigen::Upper>(as, out, count, failures);
    else cholesky_batch<T, Eigen::Lower>(as, out, count, failures);
  });
  failures.raise_first([&](int64_t b, int64_t order) {
    EMBER_FAIL("linalg.cholesky: the input is not positive-definite (", batch_element(batch, b),
               "the leading minor of order ", order, " is not positive)");
  });
  return out;
}

std::tuple<Tensor, Tensor> qr_kernel(const Tensor& A, std::string_view mode_name) {
  check_matrices("linalg.qr", A, false);
  const QrMode mode = parse_mode(mode_name);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  const int64_t q_cols = mode.complete ? m : k, r_rows = mode.complete ? m : k;
  const DimVector batch = batch_shape(A);
  const MatrixBatch as(A, batch);
  Tensor Q = mode.compute_q ? make_result(batch, {m, q_cols}, A) : make_empty({0}, A.dtype(), A.device());
  Tensor R = make_result(batch, {r_rows, n}, A);
  dispatch_linalg(A.dtype(), [&]<class T>() {
    for_each_matrix(batch_count(batch), 2 * m * n * std::max<int64_t>(k, 1), [&](int64_t b) {
      if (k == 0) {  // nothing to factorise: R is empty or zero, a complete Q is the identity
        if (mode.compute_q) store<T>(Q, b, Matrix<T>::Identity(m, q_cols));
        return store<T>(R, b, Matrix<T>::Zero(r_rows, n));
      }
      const Eigen::HouseholderQR<Matrix<T>> qr(as.load<T>(b));
      Matrix<T> r = qr.matrixQR().topRows(r_rows).template triangularView<Eigen::Upper>();
      Matrix<T> q;
      if (mode.compute_q) q = qr.householderQ() * Matrix<T>::Identity(m, q_cols);
      for (int64_t i = 0; i < k; ++i) {
        if (r(i, i) >= 0) continue;
        r.row(i).rightCols(n - i) *= T(-1);  // the zeros left of the diagonal stay +0
        if (mode.compute_q) q.col(i) *= T(-1);
      }
      if (mode.compute_q) store<T>(Q, b, q);
      store<T>(R, b, r);
    });
  });
  return {Q, R};
}

}  // namespace ember::cpu::linalg
