// The reference of the convolution op (conv.cpp): conv1d, conv2d, conv3d
// and transposed convolutions as direct loops over the definition, sums in
// long double. Inputs are CPU float32/float64 tensors of any layout,
// (N, C_in, *spatial) with 1 to 3 spatial dims; the result is a new
// contiguous tensor. Listed in kernels/reference_kernels.h.
#pragma once

#include <vector>

#include "ember/tensor.h"

namespace ember::cpu {

// The convolution op's arguments after the tensors; each int[] has 1 value
// or one per spatial dim.
struct ConvParams {
  std::vector<int64_t> stride, padding, dilation;
  bool transposed = false;
  std::vector<int64_t> output_padding;
  int64_t groups = 1;
};

// Ordinary (weight (C_out, C_in / groups, *kernel)):
//   y[n, o, p] = bias[o] + sum_{c, t} x[n, g * C_in/groups + c, p * stride - padding + t * dilation] w[o, c, t]
// with g = o / (C_out / groups), x = 0 outside the input.
// Transposed (weight (C_in, C_out / groups, *kernel)): each input element
// scatters into the output,
//   y[n, g * C_out/groups + o, i * stride - padding + t * dilation] += x[n, c, i] w[c, o, t]
// (g = c / (C_in / groups)), output size (in - 1) * stride - 2 padding + dilation (kernel - 1) + output_padding + 1.
Tensor convolution_reference(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p);

}  // namespace ember::cpu
