// Dispatched ops of one neural-network family: convolutions (conv1d, conv2d, conv_transpose2d) and their backward.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// One op serves every convolution, as in PyTorch: `convolution` takes a 3-D
// (N, C, L) or 4-D (N, C, H, W) input, int[] arguments with one entry per
// spatial dim, and `transposed` for conv_transpose. Its backward is a kernel
// too: `convolution_backward` returns (grad_input, grad_weight, grad_bias) for
// the results `output_mask` asks for; a result not asked for is an empty
// tensor of shape [0] (the autograd layer needs every result defined).
// `convolution_backward` has its own derivative formula (written with these two
// ops), so second derivatives of conv2d work.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_CONV_OPS(X) \
  X(convolution, "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef, bool, IntArrayRef, int64_t)) \
  X(convolution_backward, "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, int[] output_mask) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)", \
    TensorTriple(const Tensor&, const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, IntArrayRef, int64_t, IntArrayRef))
// clang-format on

namespace ember::op {
EMBER_CONV_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
