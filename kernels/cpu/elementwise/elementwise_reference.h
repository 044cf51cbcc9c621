// References of the elementwise ops (binary.cpp, unary.cpp, activation.cpp):
// each element computed in long double from the input values and rounded
// once to the output dtype. Inputs are CPU float32/float64 tensors of any
// layout; results are new contiguous tensors. Listed in kernels/reference_kernels.h.
#pragma once

#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::cpu {

// The unary ops unary_reference() knows: the floating ones of
// EMBER_FORALL_UNARY_OPS and the parameterless activations (hardswish, ...).
const std::vector<const char*>& unary_reference_ops();
Tensor unary_reference(std::string_view op, const Tensor& x);
Tensor gelu_reference(const Tensor& x, std::string_view approximate);  // "none" or "tanh"
Tensor leaky_relu_reference(const Tensor& x, double negative_slope);
Tensor elu_reference(const Tensor& x, double alpha);
Tensor softplus_reference(const Tensor& x, double beta, double threshold);

// add, sub (a + alpha * b, a - alpha * b), mul, div, maximum, minimum: a and
// b broadcast together; the result has their promoted dtype.
Tensor binary_reference(std::string_view op, const Tensor& a, const Tensor& b, double alpha = 1);

}  // namespace ember::cpu
