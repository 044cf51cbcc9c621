// Elementwise ops of three tensors, as the user calls them. lerp is
// dispatched (one pass, exact at both ends; kernels/cpu/elementwise/binary.cpp);
// addcmul, addcdiv and clamp with tensor bounds are composites of
// differentiable ops, so autograd needs nothing of its own for them.
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) {
  return op::lerp.call(self, end, wrap_scalar(weight));
}
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) { return op::lerp.call(self, end, weight); }

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return op::add.call(self, op::mul.call(tensor1, tensor2), value);
}

namespace {
void check_addcdiv_operands(const char* op, const Tensor& tensor1, const Tensor& tensor2) {
  EMBER_CHECK(!(is_integral(tensor1.dtype(), true) && is_integral(tensor2.dtype(), true)), op,
              ": integer division is not supported (tensor1 ", tensor1.dtype(), ", tensor2 ", tensor2.dtype(),
              "); convert one of them to a floating dtype");
}
}  // namespace

Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_addcdiv_operands("addcdiv", tensor1, tensor2);
  return op::add.call(self, op::div.call(tensor1, tensor2), value);
}

namespace {
// `bound` where `beyond` holds or the bound is NaN, else x (NaN x stays NaN).
Tensor clamp_to(const Tensor& x, const Tensor& bound, const Tensor& beyond) {
  const Tensor take = bound.is_floating_point() ? beyond.logical_or(bound.isnan()) : beyond;
  return op::where.call(take, bound, x);
}
}  // namespace

// where(x < min, min, x), then where(y > max, max, y): the gradient goes to x
// where min <= x <= max, to min below it and to max above it (min > max: to
// max), as PyTorch's clamp.
Tensor clamp(const Tensor& t, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  const bool has_min = min.has_value() && min->defined(), has_max = max.has_value() && max->defined();
  EMBER_CHECK(has_min || has_max, "clamp: at least one of min and max must be given");
  Tensor out = t;
  if (has_min) out = clamp_to(out, *min, out.lt(*min));
  if (has_max) out = clamp_to(out, *max, out.gt(*max));
  return out;
}

// ---- Tensor methods ----

Tensor Tensor::lerp(const Tensor& end, const Scalar& weight) const { return ember::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return ember::lerp(*this, end, weight); }
Tensor& Tensor::lerp_(const Tensor& end, const Scalar& weight) {
  op::lerp_.call(*this, end, wrap_scalar(weight));
  return *this;
}
Tensor& Tensor::lerp_(const Tensor& end, const Tensor& weight) {
  op::lerp_.call(*this, end, weight);
  return *this;
}

Tensor Tensor::addcmul(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return ember::addcmul(*this, tensor1, tensor2, value);
}
Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  op::add_.call(*this, op::mul.call(tensor1, tensor2), value);
  return *this;
}
Tensor Tensor::addcdiv(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) const {
  return ember::addcdiv(*this, tensor1, tensor2, value);
}
Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  check_addcdiv_operands("addcdiv_", tensor1, tensor2);
  op::add_.call(*this, op::div.call(tensor1, tensor2), value);
  return *this;
}

Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return ember::clamp(*this, min, max);
}
Tensor& Tensor::clamp_(const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  const Tensor clamped = ember::clamp(*this, min, max);
  EMBER_CHECK(clamped.sizes() == sizes(), "clamp_: the bounds broadcast self of shape ", sizes(), " to ",
              clamped.sizes());
  copy_(clamped);
  return *this;
}

}  // namespace ember
