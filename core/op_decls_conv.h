// Dispatched ops of one neural-network family: convolutions (conv1d, conv2d,
// conv3d, conv_transpose2d) and their backward; unfold and fold (im2col, col2im).
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// One op serves every convolution, as in PyTorch: `convolution` takes a 3-D
// (N, C, L), 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, int[] arguments with one entry per
// spatial dim, and `transposed` for conv_transpose. Its backward is a kernel
// too: `convolution_backward` returns (grad_input, grad_weight, grad_bias) for
// the results `output_mask` asks for; a result not asked for is an empty
// tensor of shape [0] (the autograd layer needs every result defined).
// `convolution_backward` has its own derivative formula (written with these two
// ops), so second derivatives of conv2d work.
//
// im2col and col2im are F::unfold and F::fold: the sliding blocks of a 3-D
// (C, H, W) or 4-D (N, C, H, W) input as columns (C kH kW, L) or (N, C kH kW,
// L), and the sum of such columns back into an image of output_size. Each is
// the other's adjoint (and so its derivative). int[] arguments have two values
// (h, w), as F::unfold passes them.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_CONV_OPS(X) \
  X(convolution, "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor", \
    Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef, IntArrayRef, IntArrayRef, bool, IntArrayRef, int64_t)) \
  X(convolution_backward, "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, int[] output_mask) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)", \
    TensorTriple(const Tensor&, const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, IntArrayRef, int64_t, IntArrayRef)) \
  X(im2col, "im2col(Tensor self, int[] kernel_size, int[] dilation, int[] padding, int[] stride) -> Tensor", \
    Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef)) \
  X(col2im, "col2im(Tensor self, int[] output_size, int[] kernel_size, int[] dilation, int[] padding, int[] stride) -> Tensor", \
    Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef))
// clang-format on

namespace ember::op {
EMBER_CONV_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
