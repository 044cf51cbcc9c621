// A direct (no unfolding, no GEMM) forward convolution for layers with few
// output channels per group and unit horizontal stride: the first layer of a
// small CNN (1 -> 6 channels, 5x5) or a depthwise layer. Why and when it is
// used: Note [Direct convolution] in conv_direct.cpp.
#pragma once

#include "kernels/cpu/conv/conv_gemm.h"

namespace ember::cpu {

// Whether conv_direct_forward serves this geometry (and is the faster choice).
bool conv_direct_suits(const ConvGeometry& g);

// One image and group: y_g (O_g, H_out, W_out) = x_g (C_g, H, W) conv w_g (O_g, C_g, kH, kW).
// `padded` is scratch for a zero-padded copy of x_g: C_g * (H + 2 pad_h) * (W + 2 pad_w) elements.
template <class T>
void conv_direct_forward(const ConvGeometry& g, const T* x, const T* w, T* y, T* padded);

}  // namespace ember::cpu
