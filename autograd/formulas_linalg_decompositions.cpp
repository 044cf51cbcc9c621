// Derivative formulas of the linear-algebra family (Note [Writing a
// derivative formula] in autograd/formula.h): linalg_solve, inv, det,
// slogdet, cholesky, qr, svd, eigh, pinv. They are PyTorch's gradients,
// derived below in the form they are computed, and written with ember ops
// (linalg_solve included), so second derivatives work.
//
// Notation: A^T is the transpose of the last two dims, <X, Y> = sum(X * Y),
// and for a loss L, gX = dL/dX. A formula gets gX for every output; an
// output nobody used arrives as zeros.
//
// Note [Gradients of the spectral factorisations]
// The gradients of svd and eigh through the singular vectors (eigenvectors)
// divide by s_j^2 - s_i^2 (lambda_j - lambda_i): with repeated singular
// values (eigenvalues) the vectors are not determined by A and the gradient
// is infinite or NaN, as in PyTorch. A loss that reads only S (eigenvalues)
// is always well-defined: when the gradients of U and Vh (eigenvectors) are
// all zero, ember takes the short path gA = U diag(gS) Vh (V diag(gL) V^T),
// which never divides: matrix_norm(A, "nuc") or (A, 2) of the identity has a
// finite gradient, as in PyTorch (whose norms call svdvals, and whose
// unused outputs get no gradient rather than zeros).
// The rectangular svd also divides by s_i in the terms that project gU
// (gVh) off the span of U (V): a zero singular value with a used U or Vh
// gives inf/NaN, as in PyTorch.
//
// cholesky and eigh read one triangle of A, but, as PyTorch, return the
// symmetric gradient: the one for a symmetric perturbation of a symmetric A.
// (gradcheck therefore calls them on A + A^T.)
#include "autograd/formula.h"
#include "core/op_decls_linalg.h"
#include "ember/ops.h"

namespace ember::autograd {
namespace {

Tensor mT(const Tensor& t) { return t.transpose(-2, -1); }

// True when a gradient carries information (an unused output's is zeros).
bool used(const Tensor& grad) { return grad.defined() && grad.ne(0).any().item<bool>(); }

Tensor identity_like(const Tensor& t, int64_t n) { return eye(n, std::nullopt, t.options()); }

// (*, n) -> (*, n, n) with v on the diagonal.
Tensor diag_embed(const Tensor& v) { return v.unsqueeze(-1) * identity_like(v, v.size(-1)); }

// A scalar per matrix (*,) -> (*, 1, 1), to scale whole matrices.
Tensor per_matrix(const Tensor& t) { return t.unsqueeze(-1).unsqueeze(-1); }

// X M^{-1} for a square M, as (M^{-T} X^T)^T.
Tensor solve_right(const Tensor& X, const Tensor& M) { return mT(op::linalg_solve.call(mT(M), mT(X))); }

// ---- the LU family ----

// X = A^{-1} B: dX = A^{-1} (dB - dA X), so gB = A^{-T} gX and gA = -gB X^T.
TensorList solve_backward(const GradContext& c, const TensorList& grads) {
  const Tensor gB = op::linalg_solve.call(mT(c.saved(0)), grads[0]);
  TensorList out(2);
  if (c.needs_grad(0)) out[0] = reduce_to(-gB.matmul(mT(c.result())), c.meta(0));
  if (c.needs_grad(1)) out[1] = reduce_to(gB, c.meta(1));
  return out;
}

// d(A^{-1}) = -A^{-1} dA A^{-1}: gA = -A^{-T} g A^{-T}.
TensorList inv_backward(const GradContext& c, const TensorList& grads) {
  const Tensor inv_t = mT(c.result());
  return {-inv_t.matmul(grads[0]).matmul(inv_t)};
}

// The cofactor matrix det(A) A^{-T}, continued to singular A through the
// SVD A = U diag(s) Vh: det(U) det(Vh) U diag(prod_{j != i} s_j) Vh.
Tensor cofactors_by_svd(const Tensor& A) {
  const auto [U, S, Vh] = op::linalg_svd.call(A, false);
  const Tensor sign = op::linalg_det.call(U.detach()) * op::linalg_det.call(Vh.detach());
  // Row i of `others` is s with s_i replaced by 1.
  const Tensor I = identity_like(S, S.size(-1));
  const Tensor others = S.unsqueeze(-2) * (1 - I) + I;
  return per_matrix(sign) * (U * others.prod({-1}).unsqueeze(-2)).matmul(Vh);
}

// d det(A) = <det(A) A^{-T}, dA> (Jacobi's formula). At a singular matrix
// the cofactors come from the SVD, so the gradient is the adjugate's
// transpose there too, not NaN (torch 1.13 returns zeros).
TensorList det_backward(const GradContext& c, const TensorList& grads) {
  const Tensor A = c.saved(0), det = c.result();
  const bool singular = det.eq(0).any().item<bool>();
  const Tensor cof = singular ? cofactors_by_svd(A) : per_matrix(det) * mT(op::linalg_inv.call(A));
  return {per_matrix(grads[0]) * cof};
}

// d log|det A| = <A^{-T}, dA>; the sign has no gradient. At a singular
// matrix logabsdet is -inf and has no gradient: an error says so.
TensorList slogdet_backward(const GradContext& c, const TensorList& grads) {
  if (!used(grads[1])) return {Tensor()};
  const Tensor singular = c.result(0).eq(0).flatten();
  if (singular.any().item<bool>()) {
    const int64_t b = singular.to(kInt64).argmax().item<int64_t>();
    const IntArrayRef shape = c.meta(0).sizes.ref();
    EMBER_FAIL("linalg.slogdet: logabsdet has no gradient at a singular matrix (input of shape ", shape,
               shape.size() > 2 ? ", batch element " + std::to_string(b) : std::string(), ": logabsdet is -inf)");
  }
  return {per_matrix(grads[1]) * mT(op::linalg_inv.call(c.saved(0)))};
}

// ---- cholesky, qr ----

// A = L L^T. With S = L^{-1} dA L^{-T} (symmetric), dL = L Phi(S), Phi taking
// the lower triangle with the diagonal halved. So <gL, dL> = <P, S> with
// P = Phi(L^T gL), and for symmetric dA: gA = L^{-T} sym(P) L^{-1},
// sym(P) = (P + P^T) / 2. upper: U = L^T, gL = gU^T.
TensorList cholesky_backward(const GradContext& c, const TensorList& grads) {
  const bool upper = c.flag(1);
  const Tensor L = upper ? mT(c.result()) : c.result(), gL = upper ? mT(grads[0]) : grads[0];
  const Tensor X = mT(L).matmul(gL);
  const Tensor P = X.tril() - 0.5 * diag_embed(X.diagonal(0, -2, -1));
  const Tensor left = op::linalg_solve.call(mT(L), 0.5 * (P + mT(P)));  // L^{-T} sym(P)
  return {solve_right(left, L)};
}

// A = Q R with Q (m, n) orthonormal, R (n, n) upper triangular, m >= n.
// With X = Q^T dA R^{-1}, C = Q^T dQ is skew and C = tril(X, -1) - tril(X, -1)^T,
// dR = (X - C) R and dQ = dA R^{-1} - Q (X - C). Collecting <gQ, dQ> + <gR, dR>:
//   gA = (gQ + Q N) R^{-T},  N = triu(M) + triu(M, 1)^T,  M = gR R^T - Q^T gQ.
Tensor qr_tall_backward(const Tensor& Q, const Tensor& R, const Tensor& gQ, const Tensor& gR) {
  const Tensor M = gR.matmul(mT(R)) - mT(Q).matmul(gQ);
  const Tensor N = M.triu() + mT(M.triu(1));
  return solve_right(gQ + Q.matmul(N), mT(R));
}

// m < n: A = [A1 A2] with A1 = Q R1 square and R2 = Q^T A2. R2 adds
// A2 gR2^T to Q's gradient and gives gA2 = Q gR2.
TensorList qr_backward(const GradContext& c, const TensorList& grads) {
  const std::string_view mode = c.str(1);
  EMBER_CHECK(mode != "r", "linalg.qr: the derivative needs Q, which mode='r' does not compute; call linalg.qr with ",
              "mode='reduced' to differentiate through it");
  const Tensor Q = c.result(0), R = c.result(1);
  const int64_t m = Q.size(-2), n = R.size(-1);
  EMBER_CHECK(mode == "reduced" || m <= n, "linalg.qr: not differentiable with mode='complete' when A has more rows ",
              "than columns (", m, " x ", n, "): the last ", m - n, " columns of Q are not determined by A");
  if (m >= n) return {qr_tall_backward(Q, R, grads[0], grads[1])};
  const Tensor R2 = R.narrow(-1, m, n - m), gR2 = grads[1].narrow(-1, m, n - m);
  const Tensor gQ = grads[0] + Q.matmul(R2).matmul(mT(gR2));
  const Tensor gA1 = qr_tall_backward(Q, R.narrow(-1, 0, m), gQ, grads[1].narrow(-1, 0, m));
  return {cat({gA1, Q.matmul(gR2)}, -1)};
}

// ---- svd, eigh (Note [Gradients of the spectral factorisations]) ----

// A = U diag(S) Vh, k = min(m, n), with U (m, k), Vh (k, n). With
// E_ij = s_j^2 - s_i^2 (1 on the diagonal) and skew(X) = X - X^T:
//   J  = (skew(U^T gU) S + S skew(Vh gVh^T)) / E + diag(gS)
//   gA = U J Vh
//        + (I - U U^T) gU S^{-1} Vh        (m > n)
//        + U S^{-1} gVh (I - Vh^T Vh)      (m < n)
// full_matrices: the columns beyond k are any completion; their gradients
// are ignored, as in PyTorch.
TensorList svd_backward(const GradContext& c, const TensorList& grads) {
  Tensor U = c.result(0), Vh = c.result(2), gU = grads[0], gVh = grads[2];
  const Tensor S = c.result(1), &gS = grads[1];
  const int64_t m = U.size(-2), n = Vh.size(-1), k = S.size(-1);
  if (c.flag(1)) {
    U = U.narrow(-1, 0, k);
    gU = gU.narrow(-1, 0, k);
    Vh = Vh.narrow(-2, 0, k);
    gVh = gVh.narrow(-2, 0, k);
  }
  const bool use_u = used(gU), use_v = used(gVh);
  if (!use_u && !use_v) return {(U * gS.unsqueeze(-2)).matmul(Vh)};

  const Tensor I = identity_like(S, k);
  const Tensor S2 = S * S;
  const Tensor E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + I;
  Tensor J = zeros_like(E);
  if (use_u) {
    const Tensor UtgU = mT(U).matmul(gU);
    J = J + (UtgU - mT(UtgU)) * S.unsqueeze(-2);
  }
  if (use_v) {
    const Tensor VtgV = Vh.matmul(mT(gVh));
    J = J + S.unsqueeze(-1) * (VtgV - mT(VtgV));
  }
  J = J / E + diag_embed(gS);
  if (m > n && use_u) {
    const Tensor gU_over_S = gU / S.unsqueeze(-2);
    return {(U.matmul(J) + gU_over_S - U.matmul(mT(U).matmul(gU_over_S))).matmul(Vh)};
  }
  if (m < n && use_v) {
    const Tensor gVh_over_S = gVh / S.unsqueeze(-1);
    return {U.matmul(J.matmul(Vh) + gVh_over_S - gVh_over_S.matmul(mT(Vh)).matmul(Vh))};
  }
  return {U.matmul(J).matmul(Vh)};
}

// A = V diag(L) V^T: gA = V (skew(V^T gV) / 2E + diag(gL)) V^T with
// E_ij = L_j - L_i (1 on the diagonal); the result is symmetric.
TensorList eigh_backward(const GradContext& c, const TensorList& grads) {
  const Tensor L = c.result(0), V = c.result(1), &gL = grads[0], &gV = grads[1];
  if (!used(gV)) return {(V * gL.unsqueeze(-2)).matmul(mT(V))};
  const Tensor VtgV = mT(V).matmul(gV);
  const Tensor E = L.unsqueeze(-2) - L.unsqueeze(-1) + identity_like(L, L.size(-1));
  const Tensor J = 0.5 * (VtgV - mT(VtgV)) / E + diag_embed(gL);
  return {V.matmul(J).matmul(mT(V))};
}

// ---- pinv ----

// For A (m, n) of locally constant rank, P = pinv(A) (n, m) moves as
//   dP = -P dA P + P P^T dA^T (I - A P) + (I - P A) dA^T P^T P
// (Golub and Pereyra), so with G = gP:
//   gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A).
// With `hermitian`, A is the symmetric matrix of its lower triangle (what the
// kernel factorised; the other triangle may hold anything).
TensorList pinv_backward(const GradContext& c, const TensorList& grads) {
  const Tensor saved = c.saved(0);
  const Tensor A = c.flag(3) ? saved.tril() + mT(saved.tril(-1)) : saved;
  const Tensor P = c.result(), Pt = mT(c.result()), &G = grads[0], Gt = mT(grads[0]);
  const Tensor first = -Pt.matmul(G).matmul(Pt);
  const Tensor second = (Gt - A.matmul(P.matmul(Gt))).matmul(P.matmul(Pt));
  const Tensor third = Pt.matmul(P).matmul(Gt - Gt.matmul(P).matmul(A));
  return {first + second + third};
}

}  // namespace

void register_linalg_decomposition_formulas() {
  register_formula(op::linalg_solve.entry(), Formula{{0}, true, &solve_backward});
  register_formula(op::linalg_inv.entry(), Formula{{}, true, &inv_backward});
  register_formula(op::linalg_det.entry(), Formula{{0}, true, &det_backward});
  register_formula(op::linalg_slogdet.entry(), Formula{{0}, true, &slogdet_backward});
  register_formula(op::linalg_cholesky.entry(), Formula{{}, true, &cholesky_backward});
  register_formula(op::linalg_qr.entry(), Formula{{}, true, &qr_backward});
  register_formula(op::linalg_svd.entry(), Formula{{}, true, &svd_backward});
  register_formula(op::linalg_eigh.entry(), Formula{{}, true, &eigh_backward});
  register_formula(op::linalg_pinv.entry(), Formula{{0}, true, &pinv_backward});
}

}  // namespace ember::autograd
