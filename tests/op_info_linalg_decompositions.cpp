// Op-info rows of the linear-algebra family (Note [The op-info table] in
// tests/op_info.h): linalg_solve, inv, det, slogdet, cholesky and pinv; qr,
// svd and eigh are in tests/op_info_linalg_factorizations.cpp.
//
// References are the textbook algorithms of tests/linalg_reference.h, in
// double, on the raw input values. These ops have unique results, compared
// element by element; a singular or non-positive-definite input must raise
// the error the reference's own factorisation predicts (batch element,
// pivot, order of the minor).
//
// Inputs are built in double from a Generator seeded by the op, dtype and
// sample size, then stored in the sample's dtype: the dtypes other than
// float32 and float64 must be refused. Matrices are made well-conditioned
// on purpose (a dominant diagonal, eigenvalues near 1, 2, 3, ...), so the
// float32 results agree with the double references and gradcheck sees
// well-separated singular values and eigenvalues (tests/op_info_linalg_samples.h).
#include <sstream>

#include "tests/op_info_linalg_samples.h"

namespace ember::testing {
namespace {

using namespace linalg_rows;

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

}  // namespace

void add_linalg_decomposition_rows(std::vector<OpInfo>& rows) {
  add_row(rows, "linalg_solve", solve_samples, solve_ref);
  for (const std::string op : {"linalg_inv", "linalg_det", "linalg_slogdet"}) {
    add_row(rows, op, [op](DType t, SampleSize s) { return square_samples(op, t, s); },
            op == "linalg_inv" ? std::function<Expected(const RefArgs&)>(inv_ref)
                               : [log = op == "linalg_slogdet"](const RefArgs& a) { return det_ref(a, log); });
  }
  add_row(rows, "linalg_cholesky", cholesky_samples, cholesky_ref);
  rows.back().gradcheck_wrapper = [](Stack& args) { symmetrize(args, !std::get<bool>(args[1].payload())); };
  add_row(rows, "linalg_pinv", pinv_samples, pinv_ref);
  rows.back().gradcheck_wrapper = [](Stack& args) {
    if (std::get<bool>(args[3].payload())) symmetrize(args, true);
  };
}

}  // namespace ember::testing
