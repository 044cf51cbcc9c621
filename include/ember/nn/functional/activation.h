// ember::nn::functional activations: leaky_relu, elu, hardswish, hardsigmoid,
// mish, log_sigmoid (as torch.nn.functional). Each takes a floating-point
// tensor (float32, float64, float16, bfloat16), returns a new tensor of the
// same shape and dtype, and is differentiable twice. Gradients at the kinks
// follow PyTorch: leaky_relu'(0) = negative_slope, hardswish'(-3) = -1/2,
// hardswish'(3) = 3/2, hardsigmoid'(+-3) = 0.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::functional {

// x for x > 0, negative_slope * x otherwise.
Tensor leaky_relu(const Tensor& input, const Scalar& negative_slope = 0.01);
// x for x > 0, alpha * (exp(x) - 1) otherwise.
Tensor elu(const Tensor& input, const Scalar& alpha = 1.0);
// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& input);
// relu6(x + 3) / 6.
Tensor hardsigmoid(const Tensor& input);
// x * tanh(softplus(x)).
Tensor mish(const Tensor& input);
// log(sigmoid(x)), computed as min(x, 0) - log1p(exp(-|x|)) so it never overflows.
Tensor log_sigmoid(const Tensor& input);
// torch.nn.functional spells it logsigmoid.
inline Tensor logsigmoid(const Tensor& input) { return log_sigmoid(input); }

}  // namespace ember::nn::functional
