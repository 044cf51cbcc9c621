// Matrix composites: baddbmm, kron, diag, trace and cdist, built from bmm,
// mul, views, sum and norm, so each is differentiable without a formula of
// its own.
#include <cstdlib>

#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

// beta * self + alpha * (batch1 @ batch2): one bmm, then one add (or a
// scale when beta is 0, which ignores self, NaN and inf included).
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  EMBER_CHECK(batch1.dim() == 3 && batch2.dim() == 3 && batch1.size(0) == batch2.size(0) &&
                  batch1.size(2) == batch2.size(1),
              "baddbmm: expected batch1 (b, n, k) and batch2 (b, k, m), got shapes ", batch1.sizes(), " and ",
              batch2.sizes());
  const Tensor product = bmm(batch1, batch2);
  EMBER_CHECK(broadcast_shapes(self.sizes(), product.sizes(), "baddbmm").ref() == product.sizes(), "baddbmm: self of shape ",
              self.sizes(), " does not broadcast to the product's shape ", product.sizes());
  if (beta.to_double() == 0) return alpha.to_double() == 1 ? product : product * alpha;
  return op::add.call(beta.to_double() == 1 ? self : self * beta, product, alpha);
}

// a (a0, a1, ...) and b (b0, b1, ...) as (a0, 1, a1, 1, ...) * (1, b0, 1, b1, ...),
// then merged pairwise: element (i0 b0 + j0, ...) is a[i] * b[j].
Tensor kron(const Tensor& a, const Tensor& b) {
  const int64_t nd = std::max(a.dim(), b.dim());
  DimVector a_shape, b_shape, out_shape;
  for (int64_t d = 0; d < nd; ++d) {
    const int64_t sa = d < nd - a.dim() ? 1 : a.size(d - (nd - a.dim()));
    const int64_t sb = d < nd - b.dim() ? 1 : b.size(d - (nd - b.dim()));
    a_shape.push_back(sa);
    a_shape.push_back(1);
    b_shape.push_back(1);
    b_shape.push_back(sb);
    out_shape.push_back(sa * sb);
  }
  return op::mul.call(a.reshape(a_shape), b.reshape(b_shape)).reshape(out_shape);
}

Tensor diag(const Tensor& t, int64_t diagonal) {
  EMBER_CHECK(t.dim() == 1 || t.dim() == 2, "diag: expected a vector or a matrix, got shape ", t.sizes());
  if (t.dim() == 2) return t.diagonal(diagonal, 0, 1).clone();
  const int64_t n = t.size(0) + std::abs(diagonal);
  Tensor out = zeros({n, n}, t.options());
  out.diagonal(diagonal, 0, 1).copy_(t);
  return out;
}

Tensor trace(const Tensor& t) {
  EMBER_CHECK(t.dim() == 2, "trace: expected a matrix, got shape ", t.sizes());
  EMBER_CHECK(t.dtype() != DType::Bool, "trace: bool tensors are not supported");
  return t.diagonal().sum();
}

// (*, P, 1, M) - (*, 1, R, M), then the p-norm over M.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  EMBER_CHECK(x1.dim() >= 2 && x2.dim() >= 2, "cdist: expected x1 and x2 of at least 2 dims, got shapes ",
              x1.sizes(), " and ", x2.sizes());
  EMBER_CHECK(x1.size(-1) == x2.size(-1), "cdist: x1 and x2 must have the same number of columns, got shapes ",
              x1.sizes(), " and ", x2.sizes());
  EMBER_CHECK(x1.is_floating_point() && x1.dtype() == x2.dtype(),
              "cdist: expected two floating-point tensors of one dtype, got ", x1.dtype(), " and ", x2.dtype());
  EMBER_CHECK(p >= 0, "cdist: p must be non-negative, got ", p);
  return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, {-1});
}

Tensor Tensor::baddbmm(const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) const {
  return ember::baddbmm(*this, batch1, batch2, beta, alpha);
}
Tensor Tensor::kron(const Tensor& other) const { return ember::kron(*this, other); }
Tensor Tensor::diag(int64_t diagonal) const { return ember::diag(*this, diagonal); }
Tensor Tensor::trace() const { return ember::trace(*this); }

}  // namespace ember
