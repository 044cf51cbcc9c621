// Op-info rows of linalg_qr, linalg_svd and linalg_eigh (Note [The op-info
// table] in tests/op_info.h), Factorization rows checked by properties: the
// factors reconstruct A, Q, U, V are orthonormal, R is upper triangular with
// diag(R) >= 0, S and the eigenvalues match the reference
// (tests/linalg_reference.h) and are sorted, the unique parts (Q's and R's
// first min(m, n) columns/rows) match the reference, and the signs follow
// Note [Signs of the factors] (kernels/cpu/linalg/decompositions.h). Inputs
// and helpers are shared with the other linear-algebra rows
// (tests/op_info_linalg_samples.h).
#include <sstream>

#include "tests/op_info_linalg_samples.h"

namespace ember::testing {
namespace {

using namespace linalg_rows;

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
}  // namespace

void add_linalg_factorization_rows(std::vector<OpInfo>& rows) {
  auto factorization = [&](std::string name, std::function<std::vector<Sample>(DType, SampleSize)> samples,
                           std::function<::testing::AssertionResult(const Sample&, const TensorList&)> check) {
    add_row(rows, std::move(name), std::move(samples), factorization_ref);
    rows.back().kind = OpKind::Factorization;
    rows.back().check = std::move(check);
  };
  factorization("linalg_qr", qr_samples, qr_check);
  factorization("linalg_svd", svd_samples, svd_check);
  factorization("linalg_eigh", eigh_samples, eigh_check);
  rows.back().gradcheck_wrapper = [](Stack& args) {
    symmetrize(args, std::get<std::string>(args[1].payload()) == "L");
  };
}

}  // namespace ember::testing
