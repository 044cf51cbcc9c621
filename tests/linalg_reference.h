// Host linear algebra in double for the linalg tests: textbook algorithms,
// written independently of ember and of Eigen, that the kernels are checked
// against (tests/op_info_linalg_decompositions.cpp, tests/test_linalg.cpp).
//   lu            Gaussian elimination with partial pivoting: solve, inverse, det
//   cholesky      the Cholesky-Banachiewicz loop over one triangle
//   qr            modified Gram-Schmidt, run twice (accurate for the
//                 well-conditioned test matrices), R's diagonal >= 0
//   symmetric_eigen  cyclic Jacobi rotations: eigenvalues ascending
//   svd           one-sided Jacobi (Hestenes): accurate small singular values
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

namespace ember::testing::ref {

// A dense row-major matrix of doubles.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<double> v;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0) {}
  double& operator()(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
  double operator()(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
  static Mat identity(int64_t n) {
    Mat m(n, n);
    for (int64_t i = 0; i < n; ++i) m(i, i) = 1;
    return m;
  }
};

inline Mat transpose(const Mat& a) {
  Mat t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = a(i, j);
  return t;
}

inline Mat matmul(const Mat& a, const Mat& b) {
  Mat c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t p = 0; p < a.cols; ++p)
      for (int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, p) * b(p, j);
  return c;
}

// max |a - b| over all entries (the shapes must agree).
inline double max_abs_diff(const Mat& a, const Mat& b) {
  double d = 0;
  for (size_t k = 0; k < a.v.size(); ++k) d = std::max(d, std::fabs(a.v[k] - b.v[k]));
  return d;
}

inline double max_abs(const Mat& a) {
  double d = 0;
  for (double x : a.v) d = std::max(d, std::fabs(x));
  return d;
}

// The symmetric matrix whose lower (or upper) triangle is a's.
inline Mat symmetric_from(const Mat& a, bool lower) {
  Mat s = a;
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < i; ++j) {
      const double x = lower ? a(i, j) : a(j, i);
      s(i, j) = x;
      s(j, i) = x;
    }
  return s;
}

// ---- LU with partial pivoting ----

struct LU {
  Mat lu;                    // L below the diagonal (unit diagonal implied), U on and above
  std::vector<int64_t> perm;  // row i of P A is row perm[i] of A
  double perm_sign = 1;
  int64_t zero_pivot = -1;   // the first k with U[k, k] == 0
};

inline LU lu(const Mat& a) {
  LU f{a, std::vector<int64_t>(static_cast<size_t>(a.rows)), 1, -1};
  std::iota(f.perm.begin(), f.perm.end(), 0);
  const int64_t n = a.rows;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i)
      if (std::fabs(f.lu(i, k)) > std::fabs(f.lu(p, k))) p = i;
    if (p != k) {
      for (int64_t j = 0; j < n; ++j) std::swap(f.lu(k, j), f.lu(p, j));
      std::swap(f.perm[static_cast<size_t>(k)], f.perm[static_cast<size_t>(p)]);
      f.perm_sign = -f.perm_sign;
    }
    if (f.lu(k, k) == 0) {
      if (f.zero_pivot < 0) f.zero_pivot = k;
      continue;
    }
    for (int64_t i = k + 1; i < n; ++i) {
      f.lu(i, k) /= f.lu(k, k);
      for (int64_t j = k + 1; j < n; ++j) f.lu(i, j) -= f.lu(i, k) * f.lu(k, j);
    }
  }
  return f;
}

// X with A X = B, from A's factors (A not singular).
inline Mat lu_solve(const LU& f, const Mat& b) {
  const int64_t n = f.lu.rows;
  Mat x(n, b.cols);
  for (int64_t c = 0; c < b.cols; ++c) {
    std::vector<double> y(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      double s = b(f.perm[static_cast<size_t>(i)], c);
      for (int64_t j = 0; j < i; ++j) s -= f.lu(i, j) * y[static_cast<size_t>(j)];
      y[static_cast<size_t>(i)] = s;
    }
    for (int64_t i = n - 1; i >= 0; --i) {
      double s = y[static_cast<size_t>(i)];
      for (int64_t j = i + 1; j < n; ++j) s -= f.lu(i, j) * x(j, c);
      x(i, c) = s / f.lu(i, i);
    }
  }
  return x;
}

// (sign, log|det|); a singular matrix gives (0, -inf).
inline std::pair<double, double> slogdet(const Mat& a) {
  const LU f = lu(a);
  if (f.zero_pivot >= 0) return {0.0, -INFINITY};
  double sign = f.perm_sign, log_abs = 0;
  for (int64_t k = 0; k < a.rows; ++k) {
    if (f.lu(k, k) < 0) sign = -sign;
    log_abs += std::log(std::fabs(f.lu(k, k)));
  }
  return {sign, log_abs};
}

inline double det(const Mat& a) {
  const LU f = lu(a);
  double d = f.perm_sign;
  for (int64_t k = 0; k < a.rows; ++k) d *= f.lu(k, k);
  return d;
}

// ---- Cholesky ----

// L with A = L L^T from A's lower triangle; nullopt (with the order of the
// first leading minor that is not positive) when A is not positive-definite.
struct CholeskyResult {
  std::optional<Mat> L;
  int64_t failing_order = 0;
};

inline CholeskyResult cholesky_lower(const Mat& a) {
  const int64_t n = a.rows;
  Mat l(n, n);
  for (int64_t j = 0; j < n; ++j) {
    double d = a(j, j);
    for (int64_t p = 0; p < j; ++p) d -= l(j, p) * l(j, p);
    if (!(d > 0)) return {std::nullopt, j + 1};
    l(j, j) = std::sqrt(d);
    for (int64_t i = j + 1; i < n; ++i) {
      double s = a(i, j);
      for (int64_t p = 0; p < j; ++p) s -= l(i, p) * l(j, p);
      l(i, j) = s / l(j, j);
    }
  }
  return {l, 0};
}

// ---- QR ----

// Q (m, k) with orthonormal columns and R (k, n) upper triangular with
// R[i, i] >= 0, k = min(m, n); A's first k columns must be independent.
inline std::pair<Mat, Mat> qr(const Mat& a) {
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  Mat q(m, k), r(k, n);
  for (int64_t j = 0; j < k; ++j) {
    std::vector<double> v(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) v[static_cast<size_t>(i)] = a(i, j);
    for (int pass = 0; pass < 2; ++pass) {  // twice: orthogonal to working precision
      for (int64_t p = 0; p < j; ++p) {
        double dot = 0;
        for (int64_t i = 0; i < m; ++i) dot += q(i, p) * v[static_cast<size_t>(i)];
        r(p, j) += dot;
        for (int64_t i = 0; i < m; ++i) v[static_cast<size_t>(i)] -= dot * q(i, p);
      }
    }
    double norm = 0;
    for (double x : v) norm += x * x;
    r(j, j) = std::sqrt(norm);
    for (int64_t i = 0; i < m; ++i) q(i, j) = v[static_cast<size_t>(i)] / r(j, j);
  }
  for (int64_t j = k; j < n; ++j)  // the columns beyond k: R = Q^T A
    for (int64_t p = 0; p < k; ++p)
      for (int64_t i = 0; i < m; ++i) r(p, j) += q(i, p) * a(i, j);
  return {q, r};
}

// ---- symmetric eigenvalues (cyclic Jacobi) ----

// Eigenvalues ascending and eigenvectors (columns) of the symmetric matrix s.
inline std::pair<std::vector<double>, Mat> symmetric_eigen(Mat s) {
  const int64_t n = s.rows;
  Mat v = Mat::identity(n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0, total = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) (j > i ? off : total) += s(i, j) * s(i, j);
    if (off <= 1e-32 * (off + total)) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (s(p, q) == 0) continue;
        const double theta = (s(q, q) - s(p, p)) / (2 * s(p, q));
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), sn = t * c;
        for (int64_t k = 0; k < n; ++k) {  // s = J^T s J, v = v J
          const double skp = s(k, p), skq = s(k, q);
          s(k, p) = c * skp - sn * skq;
          s(k, q) = sn * skp + c * skq;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double spk = s(p, k), sqk = s(q, k);
          s(p, k) = c * spk - sn * sqk;
          s(q, k) = sn * spk + c * sqk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double vkp = v(k, p), vkq = v(k, q);
          v(k, p) = c * vkp - sn * vkq;
          v(k, q) = sn * vkp + c * vkq;
        }
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s(a, a) < s(b, b); });
  std::vector<double> values;
  Mat vectors(n, n);
  for (int64_t j = 0; j < n; ++j) {
    values.push_back(s(order[static_cast<size_t>(j)], order[static_cast<size_t>(j)]));
    for (int64_t i = 0; i < n; ++i) vectors(i, j) = v(i, order[static_cast<size_t>(j)]);
  }
  return {values, vectors};
}

// ---- SVD (one-sided Jacobi) ----

struct SVD {
  Mat U;                  // (m, k)
  std::vector<double> S;  // k, descending
  Mat V;                  // (n, k)
};

inline SVD svd(const Mat& a) {
  if (a.rows < a.cols) {  // A^T = V S U^T
    SVD t = svd(transpose(a));
    return {t.V, t.S, t.U};
  }
  const int64_t m = a.rows, n = a.cols;
  Mat w = a, v = Mat::identity(n);
  for (int sweep = 0; sweep < 100; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double alpha = 0, beta = 0, gamma = 0;
        for (int64_t i = 0; i < m; ++i) {
          alpha += w(i, p) * w(i, p);
          beta += w(i, q) * w(i, q);
          gamma += w(i, p) * w(i, q);
        }
        if (gamma == 0 || std::fabs(gamma) <= 1e-15 * std::sqrt(alpha * beta)) continue;
        rotated = true;
        const double zeta = (beta - alpha) / (2 * gamma);
        const double t = (zeta >= 0 ? 1.0 : -1.0) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
        const double c = 1 / std::sqrt(1 + t * t), s = c * t;
        for (int64_t i = 0; i < m; ++i) {
          const double wp = w(i, p), wq = w(i, q);
          w(i, p) = c * wp - s * wq;
          w(i, q) = s * wp + c * wq;
        }
        for (int64_t i = 0; i < n; ++i) {
          const double vp = v(i, p), vq = v(i, q);
          v(i, p) = c * vp - s * vq;
          v(i, q) = s * vp + c * vq;
        }
      }
    if (!rotated) break;
  }
  std::vector<double> norms(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double s = 0;
    for (int64_t i = 0; i < m; ++i) s += w(i, j) * w(i, j);
    norms[static_cast<size_t>(j)] = std::sqrt(s);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return norms[static_cast<size_t>(a)] > norms[static_cast<size_t>(b)]; });
  SVD r{Mat(m, n), {}, Mat(n, n)};
  for (int64_t j = 0; j < n; ++j) {
    const int64_t src = order[static_cast<size_t>(j)];
    const double s = norms[static_cast<size_t>(src)];
    r.S.push_back(s);
    for (int64_t i = 0; i < m; ++i) r.U(i, j) = s > 0 ? w(i, src) / s : 0;
    for (int64_t i = 0; i < n; ++i) r.V(i, j) = v(i, src);
  }
  return r;
}

}  // namespace ember::testing::ref
