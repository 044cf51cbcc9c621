// Op-info rows of the linear-algebra family (Note [The op-info table] in
// tests/op_info.h): linalg_solve, inv, det, slogdet, cholesky, qr, svd,
// eigh, pinv.
//
// References are the textbook algorithms of tests/linalg_reference.h, in
// double, on the raw input values. solve, inv, det, slogdet, cholesky and
// pinv have unique results, compared element by element; a singular or
// non-positive-definite input must raise the error the reference's own
// factorisation predicts (batch element, pivot, order of the minor). qr,
// svd and eigh are Factorization rows, checked by properties: the factors
// reconstruct A, Q, U, V are orthonormal, R is upper triangular with
// diag(R) >= 0, S and the eigenvalues match the reference and are sorted,
// the unique parts (Q's and R's first min(m, n) columns/rows) match the
// reference, and the signs follow Note [Signs of the factors]
// (kernels/cpu/linalg/decompositions.h).
//
// Inputs are built in double from a Generator seeded by the op, dtype and
// sample size, then stored in the sample's dtype: the dtypes other than
// float32 and float64 must be refused. Matrices are made well-conditioned
// on purpose (a dominant diagonal, eigenvalues near 1, 2, 3, ...), so the
// float32 results agree with the double references and gradcheck sees
// well-separated singular values and eigenvalues.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ember/generator.h"
#include "tests/linalg_reference.h"
#include "tests/op_info.h"

namespace ember::testing {
namespace {

using ref::Mat;

const std::vector<DType> kAll = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                 DType::Int32,   DType::Int64,   DType::UInt8,   DType::Bool};
const std::vector<DType> kRefused = {DType::Float16, DType::BFloat16, DType::Int32,
                                     DType::Int64,   DType::UInt8,    DType::Bool};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- inputs ----

class Inputs {
 public:
  Inputs(const std::string& op, DType t, SampleSize size) : t_(t) {
    uint64_t h = 1469598103934665603ull;
    for (char c : op) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    gen_.manual_seed(h + 131 * static_cast<uint64_t>(t) + (size == SampleSize::Large ? 7 : 0));
  }
  DType dtype() const { return t_; }

  // Uniform in [-1, 1), in double.
  Tensor raw(Shape shape) { return ember::rand(shape, TensorOptions(kFloat64), &gen_) * 2 - 1; }

  // A double tensor stored in the sample's dtype; `transposed` stores its
  // transpose and returns a transposed (strided) view with the same values.
  Tensor store(const Tensor& d, bool transposed = false) const {
    if (!transposed) return d.to(t_);
    return d.transpose(-2, -1).contiguous().to(t_).transpose(-2, -1);
  }

  Tensor uniform(Shape shape, bool transposed = false) { return store(raw(std::move(shape)), transposed); }

  // Square matrices with a strictly dominant diagonal: invertible, condition number below ~3.
  Tensor invertible(Shape shape, bool transposed = false) {
    const int64_t n = shape.back();
    return store(raw(shape) + ember::eye(n, std::nullopt, kFloat64) * static_cast<double>(n), transposed);
  }

  // Symmetric matrices with eigenvalues within 0.2 of 1, 2, ..., n (the
  // perturbation's entries are below 0.2 / n, so its norm is below 0.2).
  Tensor symmetric_d(Shape shape) {
    const int64_t n = shape.back();
    const Tensor m = raw(shape) * (0.1 / static_cast<double>(n));
    const Tensor ramp = ember::arange(1, n + 1, 1, TensorOptions(kFloat64));
    return m + m.transpose(-2, -1) + ramp.unsqueeze(-1) * ember::eye(n, std::nullopt, kFloat64);
  }
  Tensor symmetric(Shape shape, bool transposed = false) { return store(symmetric_d(std::move(shape)), transposed); }

  // A symmetric matrix whose triangle that is not read (upper for `lower`)
  // holds `junk`.
  Tensor one_triangle(Shape shape, bool lower, double junk) {
    const Tensor s = symmetric_d(std::move(shape));
    const Tensor kept = lower ? s.tril() : s.triu();
    const Tensor rest = ember::ones_like(s) * junk;
    return store(kept + (lower ? rest.triu(1) : rest.tril(-1)));
  }

  // A rank-2 (n, n) matrix u v^T + w z^T.
  Tensor rank_two(int64_t n) {
    const Tensor a = raw({n, 2}), b = raw({2, n});
    return store(a.matmul(b));
  }

 private:
  DType t_;
  Generator gen_;
};

IValue arg(const Tensor& t) { return IValue::Payload(t); }
IValue flag(bool v) { return IValue::Payload(v); }
IValue str(const std::string& s) { return IValue::Payload(s); }
IValue opt_scalar(std::optional<double> v) { return v ? IValue::Payload(Scalar(*v)) : IValue(); }

// A batch whose matrix `bad` is replaced by `m` (both in double).
Tensor with_element(const Tensor& batch, int64_t bad, const Tensor& m) {
  Tensor out = batch.clone();
  out.select(0, bad).copy_(m);
  return out;
}

Tensor matrix(std::initializer_list<double> values, int64_t rows, int64_t cols) {
  return ember::tensor(values, TensorOptions(kFloat64)).view({rows, cols});
}

// ---- host matrices ----

Shape batch_of(const Shape& shape) { return Shape(shape.begin(), shape.end() - 2); }

Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
    out[out.size() - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

// Matrix b of a (*, rows, cols) host tensor whose batch dims broadcast to `batch`.
Mat matrix_at(const HostTensor& t, const Shape& batch, int64_t b) {
  const size_t own_dims = t.shape.size() - 2;
  Shape idx(batch.size());
  for (size_t d = batch.size(); d-- > 0;) {
    idx[d] = b % batch[d];
    b /= batch[d];
  }
  int64_t own = 0;
  for (size_t d = 0; d < own_dims; ++d) {
    own = own * t.shape[d] + (t.shape[d] == 1 ? 0 : idx[batch.size() - own_dims + d]);
  }
  const int64_t rows = t.shape[own_dims], cols = t.shape[own_dims + 1];
  Mat m(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m(i, j) = t.f[static_cast<size_t>((own * rows + i) * cols + j)];
  return m;
}

// Writes m as matrix b of a host tensor whose matrices are m-sized (or as
// row b when m is a single row standing for a vector).
void put(HostTensor& out, int64_t b, const Mat& m) {
  const int64_t size = m.rows * m.cols;
  for (int64_t k = 0; k < size; ++k) out.f[static_cast<size_t>(b * size + k)] = m.v[static_cast<size_t>(k)];
}

Shape with_tail(Shape batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

std::string batch_element(const Shape& batch, int64_t b) {
  return batch.empty() ? "" : "batch element " + std::to_string(b) + ": ";
}

double tolerance(DType t, const Mat& a) {
  const double size = static_cast<double>(std::max<int64_t>(1, std::max(a.rows, a.cols)));
  return (t == DType::Float32 ? 1e-4 : 1e-11) * size * std::max(1.0, ref::max_abs(a));
}

// ---- solve, inv, det, slogdet ----

Expected solve_ref(const RefArgs& a) {
  const HostTensor A = a.tensor(0), B = a.tensor(1);
  const Shape batch = broadcast(batch_of(A.shape), batch_of(B.shape));
  const int64_t n = A.shape.back(), k = B.shape.back();
  HostTensor X(with_tail(batch, {n, k}), a.out);
  for (int64_t b = 0; b < numel_of(batch) && n * k > 0; ++b) {
    const ref::LU f = ref::lu(matrix_at(A, batch, b));
    if (f.zero_pivot >= 0)
      return Expected::raises(batch_element(batch, b) + "U[" + std::to_string(f.zero_pivot) + ", " +
                              std::to_string(f.zero_pivot) + "]");
    put(X, b, ref::lu_solve(f, matrix_at(B, batch, b)));
  }
  return {{X}};
}

Expected inv_ref(const RefArgs& a) {
  const HostTensor A = a.tensor(0);
  const Shape batch = batch_of(A.shape);
  const int64_t n = A.shape.back();
  HostTensor out(A.shape, a.out);
  for (int64_t b = 0; b < numel_of(batch) && n > 0; ++b) {
    const ref::LU f = ref::lu(matrix_at(A, batch, b));
    if (f.zero_pivot >= 0)
      return Expected::raises(batch_element(batch, b) + "U[" + std::to_string(f.zero_pivot) + ", " +
                              std::to_string(f.zero_pivot) + "]");
    put(out, b, ref::lu_solve(f, Mat::identity(n)));
  }
  return {{out}};
}

Expected det_ref(const RefArgs& a, bool log) {
  const HostTensor A = a.tensor(0);
  const Shape batch = batch_of(A.shape);
  HostTensor first(batch, a.out), second(batch, a.out);
  for (int64_t b = 0; b < numel_of(batch); ++b) {
    const Mat m = matrix_at(A, batch, b);
    if (log) std::tie(first.f[static_cast<size_t>(b)], second.f[static_cast<size_t>(b)]) = ref::slogdet(m);
    else first.f[static_cast<size_t>(b)] = ref::det(m);
  }
  if (log) return {{first, second}};
  return {{first}};
}

// Samples of the ops taking one square matrix (inv, det, slogdet).
std::vector<Sample> square_samples(const std::string& op, DType t, SampleSize size) {
  Inputs in(op, t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& A, std::string error = "") {
    out.push_back({std::move(name), {arg(A)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.invertible({400, 16, 16}));
    return out;
  }
  add("square", in.invertible({3, 3}));
  add("negated", in.store(-in.raw({3, 3}) - ember::eye(3, std::nullopt, kFloat64) * 3));
  add("batched", in.invertible({2, 3, 4, 4}));
  add("transposed", in.invertible({4, 4}, true));
  add("uniform", in.uniform({4, 4}));
  add("1x1", in.invertible({1, 1}));
  add("0x0", in.uniform({0, 0}));
  add("empty_batch", in.invertible({0, 2, 2}));
  // Matrix 1 has a zero column: exactly singular (the pivot of step 1 is 0).
  add("singular", in.store(with_element(in.raw({3, 3, 3}) + ember::eye(3, std::nullopt, kFloat64) * 3, 1,
                                        matrix({1, 0, 2, 3, 0, 1, -2, 0, 4}, 3, 3))));
  add("not_square", in.uniform({2, 3}), "square");
  add("1d", in.uniform({3}), "at least 2 dims");
  return out;
}

std::vector<Sample> solve_samples(DType t, SampleSize size) {
  Inputs in("linalg_solve", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& A, const Tensor& B, std::string error = "") {
    out.push_back({std::move(name), {arg(A), arg(B)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.invertible({256, 16, 16}), in.uniform({256, 16, 8}));
    return out;
  }
  add("square", in.invertible({3, 3}), in.uniform({3, 2}));
  add("batched", in.invertible({2, 4, 4}), in.uniform({2, 4, 3}));
  add("broadcast", in.invertible({2, 1, 3, 3}), in.uniform({4, 3, 2}));
  add("broadcast_A", in.invertible({3, 3}), in.uniform({2, 3, 1}));
  add("transposed", in.invertible({3, 3}, true), in.uniform({3, 4}, true));
  add("empty_rhs", in.invertible({3, 3}), in.uniform({3, 0}));
  add("empty_batch", in.invertible({0, 3, 3}), in.uniform({0, 3, 2}));
  add("singular", in.store(with_element(in.raw({2, 3, 3}) + ember::eye(3, std::nullopt, kFloat64) * 3, 1,
                                        matrix({2, 1, 0, 1, 3, 0, 0, 1, 0}, 3, 3))),
      in.uniform({2, 3, 1}));
  add("not_square", in.uniform({2, 3}), in.uniform({2, 1}), "square");
  add("rows_mismatch", in.invertible({3, 3}), in.uniform({2, 1}), "incompatible");
  add("b_1d", in.invertible({3, 3}), in.uniform({3}), "at least 2 dims");
  if (t == DType::Float32)
    add("dtype_mismatch", in.invertible({3, 3}), in.uniform({3, 1}).to(kFloat64), "same dtype");
  return out;
}

// ---- cholesky ----

Expected cholesky_ref(const RefArgs& a) {
  const HostTensor A = a.tensor(0);
  const bool upper = a.flag(1);
  const Shape batch = batch_of(A.shape);
  HostTensor out(A.shape, a.out);
  for (int64_t b = 0; b < numel_of(batch) && A.shape.back() > 0; ++b) {
    const Mat m = matrix_at(A, batch, b);
    const ref::CholeskyResult c = ref::cholesky_lower(upper ? ref::transpose(m) : m);
    if (!c.L)
      return Expected::raises("(" + batch_element(batch, b) + "the leading minor of order " +
                              std::to_string(c.failing_order) + " is not positive)");
    put(out, b, upper ? ref::transpose(*c.L) : *c.L);
  }
  return {{out}};
}

std::vector<Sample> cholesky_samples(DType t, SampleSize size) {
  Inputs in("linalg_cholesky", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& A, bool upper, std::string error = "") {
    out.push_back({std::move(name), {arg(A), flag(upper)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.symmetric({400, 16, 16}), false);
    return out;
  }
  add("lower", in.one_triangle({3, 3}, true, 5), false);
  add("upper", in.one_triangle({3, 3}, false, -5), true);
  add("batched", in.symmetric({2, 2, 4, 4}), false);
  add("batched_upper", in.symmetric({3, 2, 2}), true);
  add("transposed", in.symmetric({4, 4}, true), false);
  add("1x1", in.symmetric({1, 1}), false);
  add("0x0", in.uniform({0, 0}), false);
  add("not_positive_definite", in.store(with_element(in.symmetric_d({3, 3, 3}), 2,
                                                     matrix({1, 2, 0, 2, 1, 0, 0, 0, 1}, 3, 3))),
      false);
  add("negative_diagonal", in.store(matrix({-1, 0, 0, 1}, 2, 2)), false);
  add("not_square", in.uniform({2, 3}), false, "square");
  add("1d", in.uniform({3}), false, "at least 2 dims");
  return out;
}

// ---- pinv ----

Expected pinv_ref(const RefArgs& a) {
  const HostTensor A = a.tensor(0);
  const bool hermitian = a.flag(3);
  const Shape batch = batch_of(A.shape);
  const int64_t m = A.shape[A.shape.size() - 2], n = A.shape.back();
  const std::optional<double> atol = a.is_none(1) ? std::nullopt : std::optional<double>(a.number(1)),
                              rtol = a.is_none(2) ? std::nullopt : std::optional<double>(a.number(2));
  const double eps = A.dtype == DType::Float64 ? 0x1p-52 : 0x1p-23;
  HostTensor out(with_tail(batch, {n, m}), a.out);
  for (int64_t b = 0; b < numel_of(batch) && m * n > 0; ++b) {
    const Mat x = matrix_at(A, batch, b);
    // The kept pairs (value, left vector, right vector) of x = sum value * left right^T.
    std::vector<double> values;
    Mat left, right;
    if (hermitian) {
      std::tie(values, left) = ref::symmetric_eigen(ref::symmetric_from(x, true));
      right = left;
    } else {
      const ref::SVD s = ref::svd(x);
      std::tie(values, left, right) = std::tie(s.S, s.U, s.V);
    }
    double largest = 0;
    for (double v : values) largest = std::max(largest, std::fabs(v));
    const double r = rtol ? *rtol : (atol && *atol > 0 ? 0 : eps * static_cast<double>(std::max(m, n)));
    const double tol = std::max(atol.value_or(0), r * largest);
    Mat p(n, m);
    for (size_t k = 0; k < values.size(); ++k) {
      if (std::fabs(values[k]) <= tol) continue;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j)
          p(i, j) += right(i, static_cast<int64_t>(k)) * left(j, static_cast<int64_t>(k)) / values[k];
    }
    put(out, b, p);
  }
  return {{out}};
}

std::vector<Sample> pinv_samples(DType t, SampleSize size) {
  Inputs in("linalg_pinv", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                 bool hermitian, std::string error = "") {
    out.push_back(
        {std::move(name), {arg(A), opt_scalar(atol), opt_scalar(rtol), flag(hermitian)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.uniform({400, 16, 16}), std::nullopt, std::nullopt, false);
    return out;
  }
  add("tall", in.uniform({5, 3}), std::nullopt, std::nullopt, false);
  add("wide", in.uniform({3, 5}), std::nullopt, std::nullopt, false);
  add("square", in.invertible({4, 4}), std::nullopt, std::nullopt, false);
  add("batched", in.uniform({2, 4, 3}), std::nullopt, std::nullopt, false);
  add("transposed", in.uniform({3, 4}, true), std::nullopt, std::nullopt, false);
  add("rank_deficient_rtol", in.rank_two(4), std::nullopt, 1e-3, false);
  add("rank_deficient_atol", in.rank_two(4), 1e-3, std::nullopt, false);
  add("hermitian", in.one_triangle({4, 4}, true, 9), std::nullopt, std::nullopt, true);
  add("hermitian_batched", in.symmetric({2, 3, 3}), std::nullopt, std::nullopt, true);
  add("empty", in.uniform({0, 3}), std::nullopt, std::nullopt, false);
  Tensor bad = in.raw({2, 3, 3});
  bad.select(0, 1).select(0, 0).select(0, 2).fill_(kNaN);
  add("non_finite", in.store(bad), std::nullopt, std::nullopt, false, "(batch element 1: A[0, 2])");
  add("hermitian_not_square", in.uniform({2, 3}), std::nullopt, std::nullopt, true, "square");
  return out;
}

// ---- qr, svd, eigh: properties ----

// Collects what is wrong with one factorisation, and says so once.
class Problems {
 public:
  void expect(bool ok, const std::string& what) {
    if (!ok && text_.empty()) text_ = what;
  }
  // |a - b| <= tol entry by entry, or a problem naming what was compared.
  void near(const Mat& a, const Mat& b, double tol, const std::string& what) {
    if (!text_.empty()) return;
    if (a.rows != b.rows || a.cols != b.cols) {
      text_ = what + ": shapes differ";
      return;
    }
    const double d = ref::max_abs_diff(a, b);
    std::ostringstream os;
    os << what << ": max |difference| " << d << " > " << tol;
    if (!(d <= tol)) text_ = os.str();
  }
  void shape(const HostTensor& t, const Shape& expected, const std::string& what) {
    std::ostringstream os;
    os << what << " has shape " << IntArrayRef(t.shape) << ", expected " << IntArrayRef(expected);
    expect(t.shape == expected, os.str());
  }
  ::testing::AssertionResult result(int64_t b) const {
    if (text_.empty()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "matrix " << b << ": " << text_;
  }
  bool ok() const { return text_.empty(); }

 private:
  std::string text_;
};

Mat columns(const Mat& a, int64_t count) {
  Mat out(a.rows, count);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < count; ++j) out(i, j) = a(i, j);
  return out;
}

Mat rows_of(const Mat& a, int64_t count) { return ref::transpose(columns(ref::transpose(a), count)); }

Mat row_matrix(const std::vector<double>& v) {
  Mat m(1, static_cast<int64_t>(v.size()));
  m.v = v;
  return m;
}

Mat diagonal(const std::vector<double>& d) {
  Mat m(static_cast<int64_t>(d.size()), static_cast<int64_t>(d.size()));
  for (size_t i = 0; i < d.size(); ++i) m(static_cast<int64_t>(i), static_cast<int64_t>(i)) = d[i];
  return m;
}

std::vector<double> vector_at(const HostTensor& t, int64_t b) {
  const int64_t n = t.shape.back();
  return std::vector<double>(t.f.begin() + b * n, t.f.begin() + (b + 1) * n);
}

// Note [Signs of the factors]: in each of the first `count` columns, the entry
// of largest magnitude (the first on a tie) is positive.
bool largest_entries_positive(const Mat& vectors, int64_t count) {
  for (int64_t j = 0; j < count; ++j) {
    int64_t at = 0;
    for (int64_t i = 1; i < vectors.rows; ++i)
      if (std::fabs(vectors(i, j)) > std::fabs(vectors(at, j))) at = i;
    if (vectors.rows > 0 && vectors(at, j) < 0) return false;
  }
  return true;
}

::testing::AssertionResult qr_check(const Sample& s, const TensorList& outs) {
  const HostTensor A = to_host(s.args[0].tensor()), Q = to_host(outs.at(0)), R = to_host(outs.at(1));
  const std::string mode = std::get<std::string>(s.args[1].payload());
  const Shape batch = batch_of(A.shape);
  const int64_t m = A.shape[A.shape.size() - 2], n = A.shape.back(), k = std::min(m, n);
  const bool complete = mode == "complete", compute_q = mode != "r";
  Problems shapes;
  shapes.shape(R, with_tail(batch, {complete ? m : k, n}), "R");
  shapes.shape(Q, compute_q ? with_tail(batch, {m, complete ? m : k}) : Shape{0}, "Q");
  if (!shapes.ok()) return shapes.result(0);
  for (int64_t b = 0; b < numel_of(batch); ++b) {
    const Mat a = matrix_at(A, batch, b), r = matrix_at(R, batch, b);
    const double tol = tolerance(A.dtype, a);
    Problems p;
    for (int64_t i = 0; i < r.rows; ++i)
      for (int64_t j = 0; j < std::min(i, n); ++j) p.expect(r(i, j) == 0, "R is not upper triangular");
    for (int64_t i = 0; i < k; ++i) p.expect(r(i, i) >= 0, "R has a negative diagonal element");
    const auto [q_ref, r_ref] = ref::qr(a);
    p.near(rows_of(r, k), r_ref, tol, "R against the reference");
    if (compute_q) {
      const Mat q = matrix_at(Q, batch, b);
      p.near(columns(q, k), q_ref, tol, "Q's first min(m, n) columns against the reference");
      p.near(ref::matmul(ref::transpose(q), q), Mat::identity(q.cols), tol, "Q^T Q - I");
      p.near(ref::matmul(q, r), a, tol, "Q R - A");
    }
    if (!p.ok()) return p.result(b);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult svd_check(const Sample& s, const TensorList& outs) {
  const HostTensor A = to_host(s.args[0].tensor()), U = to_host(outs.at(0)), S = to_host(outs.at(1)),
                   Vh = to_host(outs.at(2));
  const bool full = std::get<bool>(s.args[1].payload());
  const Shape batch = batch_of(A.shape);
  const int64_t m = A.shape[A.shape.size() - 2], n = A.shape.back(), k = std::min(m, n);
  Problems shapes;
  shapes.shape(U, with_tail(batch, {m, full ? m : k}), "U");
  shapes.shape(S, with_tail(batch, {k}), "S");
  shapes.shape(Vh, with_tail(batch, {full ? n : k, n}), "Vh");
  if (!shapes.ok()) return shapes.result(0);
  for (int64_t b = 0; b < numel_of(batch); ++b) {
    const Mat a = matrix_at(A, batch, b), u = matrix_at(U, batch, b), vh = matrix_at(Vh, batch, b);
    const std::vector<double> sv = vector_at(S, b);
    const double tol = tolerance(A.dtype, a);
    Problems p;
    p.near(ref::matmul(ref::transpose(u), u), Mat::identity(u.cols), tol, "U^T U - I");
    p.near(ref::matmul(vh, ref::transpose(vh)), Mat::identity(vh.rows), tol, "Vh Vh^T - I");
    if (k > 0) {
      p.near(row_matrix(sv), row_matrix(ref::svd(a).S), tol, "S against the reference");
      p.expect(std::is_sorted(sv.rbegin(), sv.rend()), "S is not descending");
      p.near(ref::matmul(ref::matmul(columns(u, k), diagonal(sv)), rows_of(vh, k)), a, tol, "U diag(S) Vh - A");
      p.expect(largest_entries_positive(u, k), "a column of U has a negative entry of largest magnitude");
    }
    if (!p.ok()) return p.result(b);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult eigh_check(const Sample& s, const TensorList& outs) {
  const HostTensor A = to_host(s.args[0].tensor()), L = to_host(outs.at(0)), V = to_host(outs.at(1));
  const bool lower = std::get<std::string>(s.args[1].payload()) == "L";
  const Shape batch = batch_of(A.shape);
  const int64_t n = A.shape.back();
  Problems shapes;
  shapes.shape(L, with_tail(batch, {n}), "eigenvalues");
  shapes.shape(V, A.shape, "eigenvectors");
  if (!shapes.ok()) return shapes.result(0);
  for (int64_t b = 0; b < numel_of(batch) && n > 0; ++b) {
    const Mat a = ref::symmetric_from(matrix_at(A, batch, b), lower), v = matrix_at(V, batch, b);
    const std::vector<double> values = vector_at(L, b);
    const double tol = tolerance(A.dtype, a);
    Problems p;
    p.near(row_matrix(values), row_matrix(ref::symmetric_eigen(a).first), tol, "eigenvalues against the reference");
    p.expect(std::is_sorted(values.begin(), values.end()), "the eigenvalues are not ascending");
    p.near(ref::matmul(ref::transpose(v), v), Mat::identity(n), tol, "V^T V - I");
    p.near(ref::matmul(ref::matmul(v, diagonal(values)), ref::transpose(v)), a, tol, "V diag(L) V^T - A");
    p.expect(largest_entries_positive(v, n), "an eigenvector has a negative entry of largest magnitude");
    if (!p.ok()) return p.result(b);
  }
  return ::testing::AssertionSuccess();
}

// The errors of qr, svd and eigh come with the samples; valid samples have
// no reference values (the check judges them).
Expected factorization_ref(const RefArgs&) { return {}; }

std::vector<Sample> qr_samples(DType t, SampleSize size) {
  Inputs in("linalg_qr", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& A, std::string mode, std::string error = "") {
    out.push_back({std::move(name), {arg(A), str(mode)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.uniform({400, 16, 16}), "reduced");
    return out;
  }
  add("tall", in.uniform({5, 3}), "reduced");
  add("wide", in.uniform({3, 5}), "reduced");
  add("square", in.uniform({4, 4}), "reduced");
  add("tall_complete", in.uniform({5, 3}), "complete");
  add("wide_complete", in.uniform({3, 5}), "complete");
  add("r_mode", in.uniform({5, 3}), "r");
  add("batched", in.uniform({2, 4, 3}), "reduced");
  add("transposed", in.uniform({3, 4}, true), "reduced");
  add("empty_rows", in.uniform({0, 3}), "reduced");
  add("empty_columns_complete", in.uniform({2, 3, 0}), "complete");
  add("bad_mode", in.uniform({3, 3}), "full", "mode must be");
  add("1d", in.uniform({3}), "reduced", "at least 2 dims");
  return out;
}

std::vector<Sample> svd_samples(DType t, SampleSize size) {
  Inputs in("linalg_svd", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& A, bool full, std::string error = "") {
    out.push_back({std::move(name), {arg(A), flag(full)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.uniform({400, 16, 16}), false);
    return out;
  }
  add("square", in.uniform({4, 4}), true);
  add("tall", in.uniform({5, 3}), false);
  add("wide", in.uniform({3, 5}), false);
  add("tall_full", in.uniform({5, 3}), true);
  add("wide_full", in.uniform({3, 5}), true);
  add("batched", in.uniform({2, 3, 4, 3}), false);
  add("transposed", in.uniform({4, 3}, true), false);
  add("rank_deficient", in.rank_two(4), false);
  add("empty_rows", in.uniform({0, 3}), true);
  add("empty_columns", in.uniform({2, 3, 0}), true);
  add("empty_batch", in.uniform({0, 3, 3}), false);
  Tensor bad = in.raw({2, 3, 3});
  bad.select(0, 1).select(0, 0).select(0, 1).fill_(std::numeric_limits<double>::infinity());
  add("non_finite", in.store(bad), false, "(batch element 1: A[0, 1])");
  add("1d", in.uniform({3}), false, "at least 2 dims");
  return out;
}

std::vector<Sample> eigh_samples(DType t, SampleSize size) {
  Inputs in("linalg_eigh", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& A, std::string uplo, std::string error = "") {
    out.push_back({std::move(name), {arg(A), str(uplo)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.symmetric({400, 16, 16}), "L");
    return out;
  }
  add("lower", in.one_triangle({4, 4}, true, 3), "L");
  add("upper", in.one_triangle({4, 4}, false, -3), "U");
  add("batched", in.symmetric({2, 3, 3}), "L");
  add("transposed", in.symmetric({5, 5}, true), "U");
  add("1x1", in.symmetric({1, 1}), "L");
  add("0x0", in.uniform({0, 0}), "L");
  Tensor bad = in.symmetric_d({2, 3, 3});
  bad.select(0, 1).select(0, 2).select(0, 0).fill_(kNaN);
  add("non_finite", in.store(bad), "L", "(batch element 1: A[2, 0])");
  add("bad_uplo", in.symmetric({3, 3}), "X", "UPLO must be");
  add("not_square", in.uniform({2, 3}), "L", "square");
  return out;
}

// gradcheck's arguments for ops reading one triangle of A: A becomes the
// symmetric matrix that triangle defines (with ember ops, so the gradient
// reaches only the triangle that was read).
void symmetrize(Stack& args, bool lower) {
  const Tensor A = args[0].tensor();
  const Tensor S = lower ? A.tril() + A.tril(-1).transpose(-2, -1) : A.triu() + A.triu(1).transpose(-2, -1);
  args[0] = IValue::Payload(S);
}

// K (Note [Tolerances]): an n x n factorisation or solve accumulates n^3
// rounding errors; n^2 covers how the samples' well-conditioned matrices spread them.
int64_t decomposition_length(const Sample& s) {
  const Shape a = arg_sizes(s, 0);
  const int64_t n = a.size() >= 2 ? std::max(a[a.size() - 1], a[a.size() - 2]) : 1;
  return n * n;
}

}  // namespace

void add_linalg_decomposition_rows(std::vector<OpInfo>& rows) {
  auto row = [&](std::string name, std::function<std::vector<Sample>(DType, SampleSize)> samples,
                 std::function<Expected(const RefArgs&)> ref) {
    rows.push_back({.name = std::move(name), .dtypes = kAll, .rejects = kRefused, .out_dtype = same_dtype,
                    .samples = std::move(samples), .reference = std::move(ref),
                    .accumulation = decomposition_length,
                    .differentiable = true});
  };
  auto factorization = [&](std::string name, std::function<std::vector<Sample>(DType, SampleSize)> samples,
                           std::function<::testing::AssertionResult(const Sample&, const TensorList&)> check) {
    row(std::move(name), std::move(samples), factorization_ref);
    rows.back().kind = OpKind::Factorization;
    rows.back().check = std::move(check);
  };
  row("linalg_solve", solve_samples, solve_ref);
  for (const std::string op : {"linalg_inv", "linalg_det", "linalg_slogdet"}) {
    row(op, [op](DType t, SampleSize s) { return square_samples(op, t, s); },
        op == "linalg_inv" ? std::function<Expected(const RefArgs&)>(inv_ref)
                           : [log = op == "linalg_slogdet"](const RefArgs& a) { return det_ref(a, log); });
  }
  row("linalg_cholesky", cholesky_samples, cholesky_ref);
  rows.back().gradcheck_wrapper = [](Stack& args) { symmetrize(args, !std::get<bool>(args[1].payload())); };
  row("linalg_pinv", pinv_samples, pinv_ref);
  rows.back().gradcheck_wrapper = [](Stack& args) {
    if (std::get<bool>(args[3].payload())) symmetrize(args, true);
  };
  factorization("linalg_qr", qr_samples, qr_check);
  factorization("linalg_svd", svd_samples, svd_check);
  factorization("linalg_eigh", eigh_samples, eigh_check);
  rows.back().gradcheck_wrapper = [](Stack& args) {
    symmetrize(args, std::get<std::string>(args[1].payload()) == "L");
  };
}

}  // namespace ember::testing
