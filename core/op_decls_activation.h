// Dispatched ops of one neural-network family: activations: leaky_relu, elu, hardswish, hardsigmoid, mish, log_sigmoid,
// and threshold_backward (relu's backward, as PyTorch names it).
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// Each has a fused backward kernel `<name>_backward(grad_output, self, ...)`
// (one pass over memory instead of a chain of elementwise ops); its own
// derivative formula is written with ember ops, so double backward works.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_ACTIVATION_OPS(X) \
  X(leaky_relu, "leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", Tensor(const Tensor&, const Scalar&)) \
  X(leaky_relu_backward, "leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope) -> Tensor", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(elu, "elu(Tensor self, Scalar alpha=1) -> Tensor", Tensor(const Tensor&, const Scalar&)) \
  X(elu_backward, "elu_backward(Tensor grad_output, Tensor self, Scalar alpha) -> Tensor", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(hardswish, "hardswish(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(hardswish_backward, "hardswish_backward(Tensor grad_output, Tensor self) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(hardsigmoid, "hardsigmoid(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(hardsigmoid_backward, "hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(mish, "mish(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(mish_backward, "mish_backward(Tensor grad_output, Tensor self) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(log_sigmoid, "log_sigmoid(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(log_sigmoid_backward, "log_sigmoid_backward(Tensor grad_output, Tensor self) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(threshold_backward, "threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor", Tensor(const Tensor&, const Tensor&, const Scalar&))
// clang-format on

namespace ember::op {
EMBER_ACTIVATION_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
