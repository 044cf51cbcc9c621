// References of the reductions (reduce.cpp, reduce_index.cpp): each output
// element folds its group of input elements in input order, sums in long
// double. Inputs are CPU float32/float64 tensors of any layout; results are
// new contiguous tensors. Listed in kernels/reference_kernels.h.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::cpu {

// sum, mean, prod, amax, amin over `dims` (empty: every dim), dims dropped
// or kept as size 1. `dtype` is sum's and prod's optional result dtype.
Tensor reduce_reference(std::string_view op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
                        std::optional<DType> dtype = std::nullopt);
// max_dim, min_dim: (values, int64 indices) along one dim; the first of ties, NaN wins.
std::vector<Tensor> extreme_dim_reference(std::string_view op, const Tensor& x, int64_t dim, bool keepdim);
// argmax, argmin: over one dim, or over every element (dim none: the index into the flattened input).
Tensor arg_extreme_reference(std::string_view op, const Tensor& x, std::optional<int64_t> dim, bool keepdim);

}  // namespace ember::cpu
