// ember::nn::functional activations: each calls its dispatched op
// (core/op_decls_activation.h); the kernels are in kernels/cpu/elementwise/activation.cpp.
#include "ember/nn/functional/activation.h"

#include "core/op_decls_activation.h"

namespace ember::nn::functional {

Tensor leaky_relu(const Tensor& input, const Scalar& negative_slope) {
  return op::leaky_relu.call(input, negative_slope);
}
Tensor elu(const Tensor& input, const Scalar& alpha) { return op::elu.call(input, alpha); }
Tensor hardswish(const Tensor& input) { return op::hardswish.call(input); }
Tensor hardsigmoid(const Tensor& input) { return op::hardsigmoid.call(input); }
Tensor mish(const Tensor& input) { return op::mish.call(input); }
Tensor log_sigmoid(const Tensor& input) { return op::log_sigmoid.call(input); }

}  // namespace ember::nn::functional
