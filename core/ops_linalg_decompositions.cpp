// ember::linalg (ember/linalg.h): the public functions over the dispatched
// linear-algebra ops of core/op_decls_linalg.h, and the composites built
// from them. The kernels check their inputs (kernels/cpu/linalg/); what
// lives here is only what torch.linalg adds on top of a factorisation:
//   solve    vector right-hand sides and left=False (through transposes);
//   lstsq    pinv(A) @ B (the minimum-norm least-squares solution, with
//            the gradient of torch's lstsq, which is pinv's), plus the
//            residuals, rank and singular values gelsd reports;
//   norms    matrix_norm from sums, amax/amin and the singular values;
//            vector_norm is the `norm` reduction.
// Composites need no derivative formula: autograd sees the primitives.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/op_decls_linalg.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/linalg.h"
#include "ember/ops.h"

namespace ember::linalg {
namespace {

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }

std::optional<Scalar> as_scalar(std::optional<double> v) {
  return v ? std::optional<Scalar>(Scalar(*v)) : std::nullopt;
}

// torch.linalg's rule for solve and lstsq: B is a vector (or a batch of
// vectors) when it is 1-D, or when its shape is A's without the last dim.
bool is_vector_rhs(const Tensor& A, const Tensor& B) {
  return B.dim() == 1 || (A.dim() >= 2 && B.dim() == A.dim() - 1 && B.sizes() == A.sizes().slice(0, B.dim()));
}

// A's singular values (no gradient), for what lstsq reports.
Tensor singular_values(const Tensor& A) {
  NoGradGuard no_grad;
  return std::get<1>(op::linalg_svd.call(A, false));
}

// ---- matrix_norm ----

// The two matrix dims, wrapped and checked.
std::pair<int64_t, int64_t> matrix_dims(const Tensor& A, IntArrayRef dim) {
  EMBER_CHECK(A.is_floating_point(), "linalg.matrix_norm: expected a floating-point input, but got ", A.dtype(),
              " (shape ", A.sizes(), ")");
  EMBER_CHECK(A.dim() >= 2, "linalg.matrix_norm: expected A to have at least 2 dims, but got shape ", A.sizes());
  EMBER_CHECK(dim.size() == 2, "linalg.matrix_norm: dim must hold 2 dims (rows, columns), but got ", dim);
  const int64_t rows = wrap_dim(dim[0], A.dim(), "linalg.matrix_norm"),
                cols = wrap_dim(dim[1], A.dim(), "linalg.matrix_norm");
  EMBER_CHECK(rows != cols, "linalg.matrix_norm: dim must name two different dims, but got ", dim);
  return {rows, cols};
}

// Removes the two reduced dims of a keepdim result unless keepdim.
Tensor drop_dims(const Tensor& t, std::pair<int64_t, int64_t> dims, bool keepdim) {
  if (keepdim) return t;
  return t.squeeze(std::max(dims.first, dims.second)).squeeze(std::min(dims.first, dims.second));
}

// The singular values of the matrices over `dims`, reduced by `reduce`, with the dims kept (size 1).
Tensor singular_value_norm(const Tensor& A, std::pair<int64_t, int64_t> dims,
                           Tensor (*reduce)(const Tensor&, IntArrayRef, bool)) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < A.dim(); ++d) {
    if (d != dims.first && d != dims.second) order.push_back(d);
  }
  order.push_back(dims.first);
  order.push_back(dims.second);
  const Tensor s = std::get<1>(op::linalg_svd.call(A.permute(order), false));
  Tensor r = reduce(s, {-1}, false);
  r = r.unsqueeze(std::min(dims.first, dims.second));
  return r.unsqueeze(std::max(dims.first, dims.second));
}

Tensor sum_fn(const Tensor& t, IntArrayRef dims, bool keepdim) { return ember::sum(t, dims, keepdim); }

}  // namespace

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  const bool vector = is_vector_rhs(A, B);
  const int64_t vector_dim = left ? -1 : -2;
  const Tensor b = vector ? B.unsqueeze(vector_dim) : B;
  // X A = B is A^T X^T = B^T.
  const Tensor X = left ? op::linalg_solve.call(A, b) : mT(op::linalg_solve.call(mT(A), mT(b)));
  return vector ? X.squeeze(vector_dim) : X;
}

Tensor inv(const Tensor& A) { return op::linalg_inv.call(A); }
Tensor det(const Tensor& A) { return op::linalg_det.call(A); }
std::tuple<Tensor, Tensor> slogdet(const Tensor& A) { return op::linalg_slogdet.call(A); }
Tensor cholesky(const Tensor& A, bool upper) { return op::linalg_cholesky.call(A, upper); }
std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode) { return op::linalg_qr.call(A, mode); }
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices) {
  return op::linalg_svd.call(A, full_matrices);
}
std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO) { return op::linalg_eigh.call(A, UPLO); }

Tensor pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  return op::linalg_pinv.call(A, as_scalar(atol), as_scalar(rtol), hermitian);
}

LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond) {
  EMBER_CHECK(A.dim() >= 2, "linalg.lstsq: expected A to have at least 2 dims, but got shape ", A.sizes());
  const bool vector = is_vector_rhs(A, B);
  const Tensor b = vector ? B.unsqueeze(-1) : B;
  EMBER_CHECK(b.dim() >= 2 && b.size(-2) == A.size(-2), "linalg.lstsq: A of shape ", A.sizes(), " and B of shape ",
              B.sizes(), " are incompatible: A has ", A.size(-2), " rows, B has ", b.dim() >= 2 ? b.size(-2) : 0);
  const int64_t m = A.size(-2), n = A.size(-1);
  const Tensor X = ember::matmul(pinv(A, std::nullopt, rcond), b);

  LstsqResult r;
  r.solution = vector ? X.squeeze(-1) : X;
  r.singular_values = singular_values(A);
  const double eps = A.dtype() == DType::Float64 ? std::numeric_limits<double>::epsilon()
                                                 : std::numeric_limits<float>::epsilon();
  const double rtol = rcond.value_or(eps * static_cast<double>(std::max(m, n)));
  const Tensor& s = r.singular_values;
  r.rank = std::min(m, n) == 0 ? zeros(s.sizes().slice(0, s.dim() - 1), kInt64)
                               : s.gt(s.narrow(-1, 0, 1) * rtol).sum({-1});
  const bool full_rank = m > n && r.rank.eq(n).all().item<bool>();
  if (full_rank) {
    const Tensor res = (ember::matmul(A, X) - b).pow(2).sum({-2});
    r.residuals = vector ? res.squeeze(-1) : res;
  } else {
    r.residuals = empty({0}, A.options());
  }
  return r;
}

Tensor matrix_norm(const Tensor& A, std::string_view ord, IntArrayRef dim, bool keepdim) {
  const auto dims = matrix_dims(A, dim);
  if (ord == "fro") return ember::norm(A, 2, {dims.first, dims.second}, keepdim);
  EMBER_CHECK(ord == "nuc", "linalg.matrix_norm: ord must be 'fro', 'nuc' or one of inf, -inf, 1, -1, 2, -2, but got '",
              ord, "'");
  return drop_dims(singular_value_norm(A, dims, &sum_fn), dims, keepdim);
}

Tensor matrix_norm(const Tensor& A, double ord, IntArrayRef dim, bool keepdim) {
  const auto dims = matrix_dims(A, dim);
  const double p = std::fabs(ord);
  EMBER_CHECK(p == 1 || p == 2 || std::isinf(p),
              "linalg.matrix_norm: ord must be 'fro', 'nuc' or one of inf, -inf, 1, -1, 2, -2, but got ", ord);
  const bool largest = ord > 0;
  if (p == 2) return drop_dims(singular_value_norm(A, dims, largest ? &ember::amax : &ember::amin), dims, keepdim);
  // inf: the absolute row sums (over the columns dim), 1: the absolute column sums.
  const auto [summed, extreme] = std::isinf(p) ? std::pair(dims.second, dims.first) : dims;
  const Tensor sums = ember::sum(A.abs(), {summed}, true);
  return drop_dims(largest ? sums.amax({extreme}, true) : sums.amin({extreme}, true), dims, keepdim);
}

Tensor vector_norm(const Tensor& x, double ord, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  EMBER_CHECK(x.is_floating_point() || (dtype && is_floating_point(*dtype)),
              "linalg.vector_norm: expected a floating-point input, but got ", x.dtype(), " (shape ", x.sizes(), ")");
  return ember::norm(dtype ? x.to(*dtype) : x, ord, dim, keepdim);
}

}  // namespace ember::linalg
