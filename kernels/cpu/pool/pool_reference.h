// References of the 2-D pooling ops (pooling.cpp, adaptive_pooling.cpp):
// each output element loops over its window of one (H, W) plane. Inputs are
// CPU float32/float64 tensors (C, H, W) or (N, C, H, W) of any layout;
// results are new contiguous tensors. Listed in kernels/reference_kernels.h.
#pragma once

#include <optional>
#include <vector>

#include "ember/tensor.h"

namespace ember::cpu {

// The pooling window, one value per spatial dim (height, width), each
// given as 1 value or 2 as in the ops' schemas; an empty stride is the kernel size.
struct Pool2dParams {
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode = false;
};

// (values, int64 indices): the max of each window (NaN wins, then the first
// of ties) and its position h * W + w in the input plane. Padding is never the max.
std::vector<Tensor> max_pool2d_reference(const Tensor& x, const Pool2dParams& p);
// The mean of each window: divided by divisor_override when given, else by
// the window's size clipped to the padded input (count_include_pad) or to the input.
Tensor avg_pool2d_reference(const Tensor& x, const Pool2dParams& p, bool count_include_pad,
                            std::optional<int64_t> divisor_override);
// output_size: (oh, ow), or one value for both. Output cell (i, j) averages input rows [floor(i H / oh), ceil((i + 1) H
// / oh)), likewise columns.
Tensor adaptive_avg_pool2d_reference(const Tensor& x, const std::vector<int64_t>& output_size);

}  // namespace ember::cpu
