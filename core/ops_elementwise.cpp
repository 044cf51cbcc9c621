// Public elementwise functions: Scalars become wrapped 0-d tensors (they take
// part in type promotion as PyTorch's Python numbers do), then the op is
// dispatched.
#include "core/op_decls.h"
#include "core/scalar_convert.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember {

namespace {
// An integer (or bool) tensor to a negative integer power: 2 ** -1 is 0.5,
// which no integer holds, so PyTorch refuses instead of answering 0. Only
// for a Scalar exponent, as in PyTorch: a tensor exponent is elementwise.
const Tensor& check_int_pow(const Tensor& self, const Scalar& e, const char* op) {
  EMBER_CHECK(!(e.is_integral() && e.to_int() < 0 && is_integral(self.dtype(), true)), op,
              ": integers to negative integer powers are not allowed (", self.dtype(), " tensor, exponent ", e,
              "); use a floating tensor or exponent");
  return self;
}
}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  ResultTypeState s;
  s.update(a);
  s.update(b);
  return s.result();
}

DType result_type(const Tensor& a, const Scalar& b) {
  ResultTypeState s;
  s.update(a);
  s.update(b);
  return s.result();
}

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return op::add.call(a, b, alpha); }
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return op::sub.call(a, b, alpha); }
Tensor mul(const Tensor& a, const Tensor& b) { return op::mul.call(a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return op::div.call(a, b); }
Tensor div(const Tensor& a, const Tensor& b, std::string_view mode) { return op::div_mode.call(a, b, mode); }
Tensor pow(const Tensor& a, const Tensor& b) { return op::pow.call(a, b); }
Tensor pow(const Tensor& a, const Scalar& b) { return op::pow.call(check_int_pow(a, b, "pow"), wrap_scalar(b)); }
Tensor pow(const Scalar& a, const Tensor& b) { return op::pow.call(wrap_scalar(a), b); }
Tensor maximum(const Tensor& a, const Tensor& b) { return op::maximum.call(a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return op::minimum.call(a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return op::remainder.call(a, b); }
Tensor eq(const Tensor& a, const Tensor& b) { return op::eq.call(a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return op::ne.call(a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return op::lt.call(a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return op::le.call(a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return op::gt.call(a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return op::ge.call(a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return op::logical_and.call(a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return op::logical_or.call(a, b); }
Tensor logical_xor(const Tensor& a, const Tensor& b) { return op::logical_xor.call(a, b); }
Tensor logical_not(const Tensor& a) { return op::logical_not.call(a); }
Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) { return op::where.call(c, a, b); }
// The scalar becomes an element of the result, so it must fit the result's
// dtype (Note [Scalar to dtype conversion]), as PyTorch checks.
Tensor where(const Tensor& c, const Tensor& a, const Scalar& b) {
  if (a.defined()) check_scalar_fits(b, result_type(a, b), "where");
  return op::where.call(c, a, wrap_scalar(b));
}
Tensor where(const Tensor& c, const Scalar& a, const Tensor& b) {
  if (b.defined()) check_scalar_fits(a, result_type(b, a), "where");
  return op::where.call(c, wrap_scalar(a), b);
}
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Scalar& value) {
  return op::masked_fill.call(t, mask, value);
}
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max) {
  return op::clamp.call(t, min, max);
}
Tensor gelu(const Tensor& t, std::string_view approximate) { return op::gelu.call(t, approximate); }
Tensor softplus(const Tensor& t, const Scalar& beta, const Scalar& threshold) {
  return op::softplus.call(t, beta, threshold);
}
Tensor isnan(const Tensor& t) { return op::isnan.call(t); }
Tensor atan2(const Tensor& a, const Tensor& b) { return op::atan2.call(a, b); }
Tensor logaddexp(const Tensor& a, const Tensor& b) { return op::logaddexp.call(a, b); }
Tensor isinf(const Tensor& t) { return op::isinf.call(t); }

#define EMBER_UNARY_FN(name) \
  Tensor name(const Tensor& t) { return op::name.call(t); }
EMBER_UNARY_OPS(EMBER_UNARY_FN)
#undef EMBER_UNARY_FN

// ---- Tensor methods ----

Tensor Tensor::add(const Tensor& o, const Scalar& alpha) const { return op::add.call(*this, o, alpha); }
Tensor Tensor::add(const Scalar& o, const Scalar& alpha) const { return op::add.call(*this, wrap_scalar(o), alpha); }
Tensor Tensor::sub(const Tensor& o, const Scalar& alpha) const { return op::sub.call(*this, o, alpha); }
Tensor Tensor::sub(const Scalar& o, const Scalar& alpha) const { return op::sub.call(*this, wrap_scalar(o), alpha); }
Tensor Tensor::mul(const Tensor& o) const { return op::mul.call(*this, o); }
Tensor Tensor::mul(const Scalar& o) const { return op::mul.call(*this, wrap_scalar(o)); }
Tensor Tensor::div(const Tensor& o) const { return op::div.call(*this, o); }
Tensor Tensor::div(const Scalar& o) const { return op::div.call(*this, wrap_scalar(o)); }
Tensor Tensor::div(const Tensor& o, std::string_view mode) const { return op::div_mode.call(*this, o, mode); }
Tensor Tensor::pow(const Tensor& e) const { return op::pow.call(*this, e); }
Tensor Tensor::pow(const Scalar& e) const { return op::pow.call(check_int_pow(*this, e, "pow"), wrap_scalar(e)); }
Tensor Tensor::maximum(const Tensor& o) const { return op::maximum.call(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return op::minimum.call(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return op::remainder.call(*this, o); }
Tensor Tensor::remainder(const Scalar& o) const { return op::remainder.call(*this, wrap_scalar(o)); }
Tensor& Tensor::add_(const Tensor& o, const Scalar& alpha) {
  op::add_.call(*this, o, alpha);
  return *this;
}
Tensor& Tensor::add_(const Scalar& o, const Scalar& alpha) {
  op::add_.call(*this, wrap_scalar(o), alpha);
  return *this;
}
Tensor& Tensor::sub_(const Tensor& o, const Scalar& alpha) {
  op::sub_.call(*this, o, alpha);
  return *this;
}
Tensor& Tensor::sub_(const Scalar& o, const Scalar& alpha) {
  op::sub_.call(*this, wrap_scalar(o), alpha);
  return *this;
}
Tensor& Tensor::mul_(const Tensor& o) {
  op::mul_.call(*this, o);
  return *this;
}
Tensor& Tensor::mul_(const Scalar& o) {
  op::mul_.call(*this, wrap_scalar(o));
  return *this;
}
Tensor& Tensor::div_(const Tensor& o) {
  op::div_.call(*this, o);
  return *this;
}
Tensor& Tensor::div_(const Scalar& o) {
  op::div_.call(*this, wrap_scalar(o));
  return *this;
}
Tensor& Tensor::pow_(const Scalar& e) {
  op::pow_.call(check_int_pow(*this, e, "pow_"), wrap_scalar(e));
  return *this;
}

#define EMBER_COMPARE_METHODS(name)                                                                \
  Tensor Tensor::name(const Tensor& o) const { return op::name.call(*this, o); }                     \
  Tensor Tensor::name(const Scalar& o) const { return op::name.call(*this, wrap_scalar(o)); }
EMBER_COMPARE_METHODS(eq)
EMBER_COMPARE_METHODS(ne)
EMBER_COMPARE_METHODS(lt)
EMBER_COMPARE_METHODS(le)
EMBER_COMPARE_METHODS(gt)
EMBER_COMPARE_METHODS(ge)
#undef EMBER_COMPARE_METHODS

Tensor Tensor::logical_and(const Tensor& o) const { return op::logical_and.call(*this, o); }
Tensor Tensor::logical_or(const Tensor& o) const { return op::logical_or.call(*this, o); }
Tensor Tensor::logical_xor(const Tensor& o) const { return op::logical_xor.call(*this, o); }
Tensor Tensor::logical_not() const { return op::logical_not.call(*this); }
Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const {
  return op::masked_fill.call(*this, mask, value);
}
Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) {
  op::masked_fill_.call(*this, mask, value);
  return *this;
}
Tensor Tensor::clamp(std::optional<Scalar> min, std::optional<Scalar> max) const {
  return op::clamp.call(*this, min, max);
}
Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  op::clamp_.call(*this, min, max);
  return *this;
}
Tensor Tensor::atan2(const Tensor& o) const { return op::atan2.call(*this, o); }
Tensor& Tensor::atan2_(const Tensor& o) {
  op::atan2_.call(*this, o);
  return *this;
}
Tensor Tensor::logaddexp(const Tensor& o) const { return op::logaddexp.call(*this, o); }
Tensor Tensor::gelu(std::string_view approximate) const { return op::gelu.call(*this, approximate); }
Tensor Tensor::softplus(const Scalar& beta, const Scalar& threshold) const {
  return op::softplus.call(*this, beta, threshold);
}
Tensor Tensor::isnan() const { return op::isnan.call(*this); }
Tensor Tensor::isinf() const { return op::isinf.call(*this); }

#define EMBER_UNARY_METHODS(name)                                 \
  Tensor Tensor::name() const { return op::name.call(*this); }     \
  Tensor& Tensor::name##_() {                                     \
    op::name##_.call(*this);                                      \
    return *this;                                                 \
  }
EMBER_UNARY_OPS(EMBER_UNARY_METHODS)
#undef EMBER_UNARY_METHODS

// ---- operators ----

Tensor operator+(const Tensor& a, const Tensor& b) { return a.add(b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return a.add(b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return b.add(a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return a.sub(b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return a.sub(b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return op::sub.call(wrap_scalar(a), b, 1); }
Tensor operator*(const Tensor& a, const Tensor& b) { return a.mul(b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return a.mul(b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return b.mul(a); }
Tensor operator/(const Tensor& a, const Tensor& b) { return a.div(b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return a.div(b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return op::div.call(wrap_scalar(a), b); }
Tensor operator==(const Tensor& a, const Tensor& b) { return a.eq(b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return a.ne(b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return a.lt(b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return a.le(b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return a.gt(b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return a.ge(b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return a.eq(b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return a.ne(b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return a.lt(b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return a.le(b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return a.gt(b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return a.ge(b); }

}  // namespace ember
