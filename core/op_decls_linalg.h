// Dispatched ops of the linear-algebra family (torch.linalg): solve, inv,
// det, slogdet, cholesky, qr, svd, eigh, pinv. Entry format as in
// core/op_decls.h: X(name, schema, C++ signature); the op takes its dtype
// from its first tensor argument.
//
// Every op works on the last two dims and treats the dims before them as a
// batch (linalg_solve broadcasts the batch dims of A and B). The CPU kernels
// (kernels/cpu/linalg/) take float32 and float64 and refuse the other dtypes
// with an error, as PyTorch does. The public functions (ember/linalg.h)
// add what is only a view or a composition: solve's `left` and vector
// right-hand sides, lstsq, matrix_norm and vector_norm.
//
// Results that are unique only up to signs are normalised (Note [Signs of
// the factors] in kernels/cpu/linalg/decompositions.h), so every op is a
// continuous function of its input wherever the factorisation is unique.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_LINALG_OPS(X) \
  X(linalg_solve, "linalg_solve(Tensor A, Tensor B) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(linalg_inv, "linalg_inv(Tensor A) -> Tensor", Tensor(const Tensor&)) \
  X(linalg_det, "linalg_det(Tensor A) -> Tensor", Tensor(const Tensor&)) \
  X(linalg_slogdet, "linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", TensorPair(const Tensor&)) \
  X(linalg_cholesky, "linalg_cholesky(Tensor A, bool upper=False) -> Tensor", Tensor(const Tensor&, bool)) \
  X(linalg_qr, "linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)", TensorPair(const Tensor&, std::string_view)) \
  X(linalg_svd, "linalg_svd(Tensor A, bool full_matrices=True) -> (Tensor U, Tensor S, Tensor Vh)", TensorTriple(const Tensor&, bool)) \
  X(linalg_eigh, "linalg_eigh(Tensor A, str UPLO='L') -> (Tensor eigenvalues, Tensor eigenvectors)", TensorPair(const Tensor&, std::string_view)) \
  X(linalg_pinv, "linalg_pinv(Tensor A, Scalar? atol=None, Scalar? rtol=None, bool hermitian=False) -> Tensor", \
    Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&, bool))
// clang-format on

namespace ember::op {
EMBER_LINALG_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
