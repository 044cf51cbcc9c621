// Dispatched ops of one neural-network family: batch_norm, layer_norm, group_norm, rms_norm, softmax, log_softmax.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// The normalisations return their statistics next to the output (mean and
// rstd = 1/sqrt(var + eps), float32 for f16/bf16 inputs, shaped to broadcast
// against the input where that is natural), so the backward reads them instead
// of recomputing. batch_norm writes running_mean/running_var in place when
// training; in eval mode its statistics results are copies of running_mean and
// 1/sqrt(running_var + eps). Each `*_backward` is a kernel of its own (a CUDA
// backend implements the same list) and returns every gradient it can give.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_NORM_OPS(X) \
  X(softmax, "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", Tensor(const Tensor&, int64_t, std::optional<DType>)) \
  X(log_softmax, "log_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", Tensor(const Tensor&, int64_t, std::optional<DType>)) \
  X(softmax_backward, "softmax_backward(Tensor grad_output, Tensor output, int dim) -> Tensor", Tensor(const Tensor&, const Tensor&, int64_t)) \
  X(log_softmax_backward, "log_softmax_backward(Tensor grad_output, Tensor output, int dim) -> Tensor", Tensor(const Tensor&, const Tensor&, int64_t)) \
  X(layer_norm, "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> (Tensor output, Tensor mean, Tensor rstd)", \
    TensorTriple(const Tensor&, IntArrayRef, const std::optional<Tensor>&, const std::optional<Tensor>&, double)) \
  X(layer_norm_backward, "layer_norm_backward(Tensor grad_output, Tensor input, int[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)", \
    TensorTriple(const Tensor&, const Tensor&, IntArrayRef, const Tensor&, const Tensor&, const std::optional<Tensor>&)) \
  X(rms_norm, "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Scalar? eps=None) -> (Tensor output, Tensor rstd)", \
    TensorPair(const Tensor&, IntArrayRef, const std::optional<Tensor>&, const std::optional<Scalar>&)) \
  X(rms_norm_backward, "rms_norm_backward(Tensor grad_output, Tensor input, int[] normalized_shape, Tensor rstd, Tensor? weight) -> (Tensor grad_input, Tensor grad_weight)", \
    TensorPair(const Tensor&, const Tensor&, IntArrayRef, const Tensor&, const std::optional<Tensor>&)) \
  X(group_norm, "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> (Tensor output, Tensor mean, Tensor rstd)", \
    TensorTriple(const Tensor&, int64_t, const std::optional<Tensor>&, const std::optional<Tensor>&, double)) \
  X(group_norm_backward, "group_norm_backward(Tensor grad_output, Tensor input, int num_groups, Tensor mean, Tensor rstd, Tensor? weight) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)", \
    TensorTriple(const Tensor&, const Tensor&, int64_t, const Tensor&, const Tensor&, const std::optional<Tensor>&)) \
  X(batch_norm, "batch_norm(Tensor input, Tensor? weight=None, Tensor? bias=None, Tensor(a!)? running_mean=None, Tensor(b!)? running_var=None, bool training=False, float momentum=0.1, float eps=1e-05) -> (Tensor output, Tensor mean, Tensor rstd)", \
    TensorTriple(const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&, const std::optional<Tensor>&, const std::optional<Tensor>&, bool, double, double)) \
  X(batch_norm_backward, "batch_norm_backward(Tensor grad_output, Tensor input, Tensor? weight, Tensor mean, Tensor rstd, bool training) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)", \
    TensorTriple(const Tensor&, const Tensor&, const std::optional<Tensor>&, const Tensor&, const Tensor&, bool))
// clang-format on

namespace ember::op {
EMBER_NORM_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op

namespace ember {
// rms_norm's eps: the given value, or (None, as torch >= 2.4) the machine
// epsilon of the input's dtype. Shared by the kernels and the derivative formula.
inline double rms_norm_eps(const std::optional<Scalar>& eps, DType t) {
  if (eps) return eps->to_double();
  switch (t) {
    case DType::Float64: return 0x1p-52;
    case DType::Float16: return 0x1p-10;
    case DType::BFloat16: return 0x1p-7;
    default: return 0x1p-23;
  }
}
}  // namespace ember
