// References of the norm family (norm.cpp, softmax.cpp), forward only:
// statistics in long double by the textbook two-pass formulas (mean, then
// the mean squared deviation), outputs rounded once. Inputs are CPU
// float32/float64 tensors of any layout; results are new contiguous
// tensors, shaped as the tuned kernels return them. Listed in
// kernels/reference_kernels.h.
#pragma once

#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::cpu {

// y = (x - mean) * rstd * weight + bias over each row of the trailing
// `normalized_shape` dims; returns (y, mean, rstd), the statistics shaped as
// x's leading dims followed by a 1 per normalized dim. weight, bias may be undefined.
std::vector<Tensor> layer_norm_reference(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                                         const Tensor& weight, const Tensor& bias, double eps);
// y = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps); returns (y, rstd).
std::vector<Tensor> rms_norm_reference(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                                       const Tensor& weight, double eps);
// x: (N, C, *), statistics over each (sample, group of C / groups channels);
// returns (y, mean, rstd), statistics (N, groups).
std::vector<Tensor> group_norm_reference(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias,
                                         double eps);
// x: (N, C, *), statistics per channel: of the batch when training, else the
// running ones; returns (y, mean, rstd), statistics (C). Running statistics
// are read, never updated.
std::vector<Tensor> batch_norm_reference(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                         const Tensor& running_mean, const Tensor& running_var, bool training,
                                         double eps);

// softmax / log_softmax along `dim`, in `dtype` (x's by default).
Tensor softmax_reference(std::string_view op, const Tensor& x, int64_t dim, DType dtype);

}  // namespace ember::cpu
