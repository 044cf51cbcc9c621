// The activation modules (modules/activation.h): each forwards to its op.
#include "ember/nn/modules/activation.h"

#include <ostream>

#include "ember/nn/functional.h"

namespace ember::nn {

namespace F = functional;

Tensor ReLUImpl::forward(const Tensor& input) { return input.relu(); }
Tensor SiLUImpl::forward(const Tensor& input) { return input.silu(); }
Tensor SigmoidImpl::forward(const Tensor& input) { return input.sigmoid(); }
Tensor TanhImpl::forward(const Tensor& input) { return input.tanh(); }
Tensor HardswishImpl::forward(const Tensor& input) { return F::hardswish(input); }
Tensor HardsigmoidImpl::forward(const Tensor& input) { return F::hardsigmoid(input); }
Tensor MishImpl::forward(const Tensor& input) { return F::mish(input); }

Tensor GELUImpl::forward(const Tensor& input) { return input.gelu(options.approximate()); }
void GELUImpl::pretty_print(std::ostream& os) const { os << "GELU(approximate='" << options.approximate() << "')"; }

Tensor LeakyReLUImpl::forward(const Tensor& input) { return F::leaky_relu(input, options.negative_slope()); }
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << "LeakyReLU(negative_slope=" << options.negative_slope() << ")";
}

Tensor ELUImpl::forward(const Tensor& input) { return F::elu(input, options.alpha()); }
void ELUImpl::pretty_print(std::ostream& os) const { os << "ELU(alpha=" << options.alpha() << ")"; }

Tensor SoftplusImpl::forward(const Tensor& input) { return input.softplus(options.beta(), options.threshold()); }
void SoftplusImpl::pretty_print(std::ostream& os) const {
  os << "Softplus(beta=" << options.beta() << ", threshold=" << options.threshold() << ")";
}

Tensor SoftmaxImpl::forward(const Tensor& input) { return input.softmax(options.dim()); }
void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "Softmax(dim=" << options.dim() << ")"; }

Tensor LogSoftmaxImpl::forward(const Tensor& input) { return input.log_softmax(options.dim()); }
void LogSoftmaxImpl::pretty_print(std::ostream& os) const { os << "LogSoftmax(dim=" << options.dim() << ")"; }

}  // namespace ember::nn
