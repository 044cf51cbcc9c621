// Linear algebra, as torch.linalg: factorisations, solvers, determinants,
// pseudo-inverse, norms.
//
//   using namespace ember;
//   Tensor A = randn({4, 3, 3}, kFloat64);                  // a batch of 4 matrices
//   Tensor X = linalg::solve(A, randn({4, 3, 2}, kFloat64));   // A X = B
//   auto [U, S, Vh] = linalg::svd(A, /*full_matrices=*/false);
//   auto [L, Q] = linalg::eigh(A + A.transpose(-2, -1));     // eigenvalues ascending
//
// Every function works on the last two dims and treats the dims before them
// as a batch; inputs are float32 or float64 (other dtypes are an error, as in
// PyTorch). Arguments, defaults and results follow torch.linalg, and so do
// the gradients; docs/linalg.md says what ember does where PyTorch leaves
// the result open (the signs of singular vectors and eigenvectors) or the
// gradient is ill-defined (repeated singular values or eigenvalues,
// singular matrices). A singular matrix (solve, inv) or one that is not
// positive-definite (cholesky) is an ember::Error naming the batch element.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "ember/tensor.h"

namespace ember::linalg {

// X with A X = B (left) or X A = B (left = false). A (*, n, n); B (*, n, k),
// or a vector (n) / a batch of vectors (*, n) when B.dim() == 1 or B's shape
// is A's without the last dim. Batch dims broadcast.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);
Tensor inv(const Tensor& A);
Tensor det(const Tensor& A);
// (sign, logabsdet): det = sign * exp(logabsdet); a singular matrix gives (0, -inf).
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);

// L lower triangular with A = L L^T (upper: U = L^T, A = U^T U). Reads only
// the lower (upper) triangle of A.
Tensor cholesky(const Tensor& A, bool upper = false);
// (Q, R) with A = Q R and diag(R) >= 0; mode "reduced", "complete" or "r"
// (R only; Q is empty).
std::tuple<Tensor, Tensor> qr(const Tensor& A, std::string_view mode = "reduced");
// (U, S, Vh) with A = U diag(S) Vh, S descending.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);
// (eigenvalues ascending, eigenvectors as columns) of the symmetric matrix
// whose lower (UPLO "L") or upper ("U") triangle is A's.
std::tuple<Tensor, Tensor> eigh(const Tensor& A, std::string_view UPLO = "L");

// The Moore-Penrose pseudo-inverse (*, n, m). Singular values at or below
// max(atol, rtol * largest) are dropped; rtol defaults to eps * max(m, n)
// when neither is given, to 0 when only atol is. `hermitian` reads the lower
// triangle of a symmetric A and uses eigh instead of the SVD.
Tensor pinv(const Tensor& A, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
            bool hermitian = false);

// Least squares, min ||A X - B|| (the minimum-norm X when A is
// rank-deficient), through the SVD like LAPACK's gelsd driver.
struct LstsqResult {
  Tensor solution;         // (*, n, k), or (*, n) for a vector B
  Tensor residuals;        // squared residuals per column of B when m > n and every A has full rank; else empty
  Tensor rank;             // int64, per matrix
  Tensor singular_values;  // (*, min(m, n)), descending
};
// rcond: singular values at or below rcond * largest count as zero
// (default eps * max(m, n)).
LstsqResult lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt);

// Matrix norms over `dim` (rows dim, columns dim): "fro" (default), "nuc"
// (sum of singular values), or ord = inf / -inf (max / min absolute row
// sum), 1 / -1 (max / min absolute column sum), 2 / -2 (largest / smallest
// singular value).
Tensor matrix_norm(const Tensor& A, std::string_view ord = "fro", IntArrayRef dim = {-2, -1}, bool keepdim = false);
Tensor matrix_norm(const Tensor& A, double ord, IntArrayRef dim = {-2, -1}, bool keepdim = false);
// The vector ord-norm over `dim` (all dims when empty): (sum |x|^ord)^(1/ord),
// ord = inf / -inf the max / min of |x|, ord = 0 the number of non-zeros.
// `dtype` converts x first.
Tensor vector_norm(const Tensor& x, double ord = 2, IntArrayRef dim = {}, bool keepdim = false,
                   std::optional<DType> dtype = std::nullopt);

}  // namespace ember::linalg
