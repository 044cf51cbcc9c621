// The three computations behind every CPU convolution (conv1d/conv2d/conv3d,
// their transposes, and all their gradients), on contiguous float, double or
// bfloat16 buffers. How they work is explained in Note [Convolution as GEMM]
// in conv_gemm.cpp.
//
// T is the dtype of the operands; results and bias are in ConvAcc<T>: T itself
// for float and double, float for bfloat16 (multiplied by gemm_bf16, which the
// caller checks is available, into float32; the caller rounds once).
//
// All three speak of one forward convolution, "x conv w = y":
//   x: (batch, in_channels, in_d, in_h, in_w)
//   w: (out_channels, in_channels / groups, kernel_d, kernel_h, kernel_w)
//   y: (batch, out_channels, out_d, out_h, out_w)
// A 2-D convolution has depth 1 (in_d = out_d = kernel_d = 1, no depth
// padding), a 1-D one height 1 as well.
// A transposed convolution is the same geometry read backwards (its input is
// y, its output x), so it reuses these routines with roles swapped.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ember/dtype.h"

namespace ember::cpu {

template <class T>
using ConvAcc = std::conditional_t<std::is_same_v<T, BFloat16>, float, T>;

struct ConvGeometry {
  int64_t batch = 0, groups = 1;
  int64_t in_channels = 0, out_channels = 0;
  int64_t in_d = 1, in_h = 0, in_w = 0, out_d = 1, out_h = 0, out_w = 0;
  int64_t kernel_d = 1, kernel_h = 1, kernel_w = 1;
  int64_t stride_d = 1, stride_h = 1, stride_w = 1;
  int64_t pad_d = 0, pad_h = 0, pad_w = 0;
  int64_t dilation_d = 1, dilation_h = 1, dilation_w = 1;

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  int64_t kernel_taps() const { return kernel_d * kernel_h * kernel_w; }
  // Rows of an unfolded (im2col) image of one group: (c, kd, ki, kj).
  int64_t col_rows() const { return in_per_group() * kernel_taps(); }
  int64_t in_pixels() const { return in_d * in_h * in_w; }
  int64_t out_pixels() const { return out_d * out_h * out_w; }
  // Whether the depth is trivial (a 1-D or 2-D convolution).
  bool planar() const { return in_d == 1 && out_d == 1 && kernel_d == 1 && pad_d == 0; }
  // Multiply-adds of one forward pass.
  double macs() const {
    return static_cast<double>(batch) * out_channels * out_pixels() * static_cast<double>(col_rows());
  }
};

// Columns [j0, j1) of the unfolded image of one group, x_g (C_g, D, H, W) ->
// col (C_g kD kH kW, j1 - j0): row (c, kd, ki, kj), column (od, oh, ow), 0 in
// the padding (Note [Convolution as GEMM] in conv_gemm.cpp). float, double,
// float16, bfloat16 (it only moves values).
template <class T>
void im2col(const ConvGeometry& g, const T* x, int64_t j0, int64_t j1, T* col);

// x_g (C_g, D, H, W) += the columns [j0, j1) of an unfolded col
// (C_g kD kH kW, j1 - j0), each entry added where im2col took it from. float, double.
template <class T>
void col2im_add(const ConvGeometry& g, const T* col, int64_t j0, int64_t j1, T* x);

// y = x conv w (+ bias[c] on channel c when bias is not null).
template <class T>
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const ConvAcc<T>* bias, ConvAcc<T>* y);

// x_grad = the gradient of sum(y * y_grad) for x: the transposed convolution of y_grad.
template <class T>
void conv_input_grad(const ConvGeometry& g, const T* y_grad, const T* w, ConvAcc<T>* x_grad);

// w_grad = the gradient of sum(y * y_grad) for w.
template <class T>
void conv_weight_grad(const ConvGeometry& g, const T* y_grad, const T* x, ConvAcc<T>* w_grad);

// out[c] = sum over batch and pixels of t (batch, channels, pixels), channel c.
template <class T>
void channel_sums(const T* t, int64_t batch, int64_t channels, int64_t pixels, ConvAcc<T>* out);

// t (batch, channels, pixels) += bias[c] on channel c (float or double).
template <class T>
void add_channel_bias(T* t, const T* bias, int64_t batch, int64_t channels, int64_t pixels);

}  // namespace ember::cpu
