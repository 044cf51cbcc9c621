// Dispatched ops of one neural-network family: pooling (2-D and 3-D), pad, interpolate.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// Every forward op has a backward op that is linear in its gradient; the
// derivative of a backward op is the forward op applied to the incoming
// gradient (max_pool2d's is a gather through the indices), so every order of
// derivative is available (autograd/formulas_pooling.cpp).
//
// max_pool2d computes the values only (no int64 index tensor to write); the
// functional form calls max_pool2d_with_indices instead when the input needs a
// gradient, and max_pool2d's own formula recomputes the indices.
//
// max_pool3d has no values-only op: F::max_pool3d drops the indices.
//
// Conventions: spatial arguments (kernel_size, stride, padding, dilation,
// output_size) are lists of 1 or 2 values (3 for the 3-D ops; one value
// serves every dim); an
// empty `stride` means "the kernel size". `input_size` of a backward op is the
// forward input's full shape. The upsample `scales_h/scales_w` are torch's
// optional scale factors: a value <= 0 means "none", and the index scale is
// then input size / output size.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_POOLING_OPS(X) \
  X(max_pool2d, "max_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0], int[] dilation=[1], bool ceil_mode=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool)) \
  X(max_pool2d_with_indices, "max_pool2d_with_indices(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0], int[] dilation=[1], bool ceil_mode=False) -> (Tensor values, Tensor indices)", TensorPair(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool)) \
  X(max_pool2d_with_indices_backward, "max_pool2d_with_indices_backward(Tensor grad_output, Tensor indices, int[] input_size) -> Tensor", Tensor(const Tensor&, const Tensor&, IntArrayRef)) \
  X(avg_pool2d, "avg_pool2d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0], bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, std::optional<int64_t>)) \
  X(avg_pool2d_backward, "avg_pool2d_backward(Tensor grad_output, int[] input_size, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, std::optional<int64_t>)) \
  X(adaptive_avg_pool2d, "adaptive_avg_pool2d(Tensor self, int[] output_size) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(adaptive_avg_pool2d_backward, "adaptive_avg_pool2d_backward(Tensor grad_output, int[] input_size) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(max_pool3d_with_indices, "max_pool3d_with_indices(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0], int[] dilation=[1], bool ceil_mode=False) -> (Tensor values, Tensor indices)", TensorPair(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool)) \
  X(max_pool3d_with_indices_backward, "max_pool3d_with_indices_backward(Tensor grad_output, Tensor indices, int[] input_size) -> Tensor", Tensor(const Tensor&, const Tensor&, IntArrayRef)) \
  X(avg_pool3d, "avg_pool3d(Tensor self, int[] kernel_size, int[] stride=[], int[] padding=[0], bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, std::optional<int64_t>)) \
  X(avg_pool3d_backward, "avg_pool3d_backward(Tensor grad_output, int[] input_size, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, std::optional<int64_t>)) \
  X(adaptive_avg_pool3d, "adaptive_avg_pool3d(Tensor self, int[] output_size) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(adaptive_avg_pool3d_backward, "adaptive_avg_pool3d_backward(Tensor grad_output, int[] input_size) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(constant_pad_nd, "constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor", Tensor(const Tensor&, IntArrayRef, const Scalar&)) \
  X(reflection_pad, "reflection_pad(Tensor self, int[] pad) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(reflection_pad_backward, "reflection_pad_backward(Tensor grad_output, int[] input_size, int[] pad) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef)) \
  X(replication_pad, "replication_pad(Tensor self, int[] pad) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(replication_pad_backward, "replication_pad_backward(Tensor grad_output, int[] input_size, int[] pad) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef)) \
  X(circular_pad, "circular_pad(Tensor self, int[] pad) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(circular_pad_backward, "circular_pad_backward(Tensor grad_output, int[] input_size, int[] pad) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef)) \
  X(upsample_nearest2d, "upsample_nearest2d(Tensor self, int[] output_size, float scales_h=0., float scales_w=0.) -> Tensor", Tensor(const Tensor&, IntArrayRef, double, double)) \
  X(upsample_nearest2d_backward, "upsample_nearest2d_backward(Tensor grad_output, int[] input_size, float scales_h=0., float scales_w=0.) -> Tensor", Tensor(const Tensor&, IntArrayRef, double, double)) \
  X(upsample_bilinear2d, "upsample_bilinear2d(Tensor self, int[] output_size, bool align_corners, float scales_h=0., float scales_w=0.) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool, double, double)) \
  X(upsample_bilinear2d_backward, "upsample_bilinear2d_backward(Tensor grad_output, int[] input_size, bool align_corners, float scales_h=0., float scales_w=0.) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool, double, double))
// clang-format on

namespace ember::op {
EMBER_POOLING_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
