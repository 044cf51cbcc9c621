// The three computations behind every CPU convolution (conv1d/conv2d, their
// transposes, and all their gradients), on contiguous float, double or
// bfloat16 buffers. How they work is explained in Note [Convolution as GEMM]
// in conv_gemm.cpp.
//
// T is the dtype of the operands; results and bias are in ConvAcc<T>: T itself
// for float and double, float for bfloat16 (multiplied by gemm_bf16, which the
// caller checks is available, into float32; the caller rounds once).
//
// All three speak of one forward convolution, "x conv w = y":
//   x: (batch, in_channels, in_h, in_w)
//   w: (out_channels, in_channels / groups, kernel_h, kernel_w)
//   y: (batch, out_channels, out_h, out_w)
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
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dilation_h = 1, dilation_w = 1;

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
  // Rows of an unfolded (im2col) image of one group: (c, ki, kj).
  int64_t col_rows() const { return in_per_group() * kernel_h * kernel_w; }
  int64_t in_pixels() const { return in_h * in_w; }
  int64_t out_pixels() const { return out_h * out_w; }
  // Multiply-adds of one forward pass.
  double macs() const {
    return static_cast<double>(batch) * out_channels * out_pixels() * static_cast<double>(col_rows());
  }
};

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
