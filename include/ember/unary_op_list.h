// The unary elementwise ops, listed once. Each `X(name)` becomes
//   - the dispatched ops `name` and `name_` (core/op_decls.h),
//   - the free function `ember::name(t)` (ember/ops.h),
//   - the methods `t.name()` and `t.name_()` (ember/tensor.h).
// Adding one is the first step of docs/adding_an_op.md; the CPU kernel, the
// derivative formula and the op-info row follow.
//
// The floating ones (exp, sin, asinh, ...) promote integer inputs to
// float32, as in PyTorch; neg, abs, sign, relu and the rounding ops keep the
// dtype.
#pragma once

// clang-format off
#define EMBER_FORALL_UNARY_OPS(X) \
  X(neg) X(abs) X(sign) X(exp) X(exp2) X(log) X(log2) X(log1p) X(expm1) X(sqrt) X(rsqrt) X(reciprocal) \
  X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) X(tanh) X(asinh) X(acosh) X(atanh) \
  X(sigmoid) X(relu) X(silu) X(erf) X(floor) X(ceil) X(round) X(trunc)
// clang-format on
