// isclose and allclose, composed of elementwise ops (as torch.isclose).
#include "ember/error.h"
#include "ember/ops.h"

namespace ember {

Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(a.defined() && b.defined(), "isclose: an input is undefined");
  EMBER_CHECK(a.dtype() == b.dtype(), "isclose: expected inputs of one dtype, got ", a.dtype(), " ", a.sizes(),
              " and ", b.dtype(), " ", b.sizes());
  EMBER_CHECK(rtol >= 0 && atol >= 0, "isclose: expected non-negative rtol and atol, got ", rtol, " and ", atol);
  const Tensor x = a.detach(), y = b.detach();
  Tensor close = x.eq(y);  // equal values, infinities of one sign included
  if (x.dtype() == kBool) return close;
  if (equal_nan && x.is_floating_point()) close = close.logical_or(x.isnan().logical_and(y.isnan()));
  // A finite difference within the tolerance; an infinite one (an infinity
  // against a finite value) never is, however large rtol * |b| is.
  const Tensor error = (x - y).abs();
  const Tensor within = error.le(y.abs() * rtol + atol);
  return close.logical_or(x.is_floating_point() ? within.logical_and(error.isinf().logical_not()) : within);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return isclose(a, b, rtol, atol, equal_nan).all().item<bool>();
}

}  // namespace ember
