// The F:: activations that are ember's elementwise ops under their
// torch.nn.functional names, and those composed of ember ops (autograd
// derives their gradients). Calls into ember:: are qualified: unqualified,
// argument-dependent lookup would also find ember::relu and make the call
// ambiguous with F::relu.
#include <cmath>

#include "ember/error.h"
#include "ember/nn/functional/activation.h"
#include "ember/ops.h"

namespace ember::nn::functional {

Tensor relu(const Tensor& input) { return ember::relu(input); }
Tensor gelu(const Tensor& input, std::string_view approximate) { return ember::gelu(input, approximate); }
Tensor silu(const Tensor& input) { return ember::silu(input); }
Tensor sigmoid(const Tensor& input) { return ember::sigmoid(input); }
Tensor tanh(const Tensor& input) { return ember::tanh(input); }
Tensor softplus(const Tensor& input, double beta, double threshold) {
  return ember::softplus(input, beta, threshold);
}

// masked_fill gives the filled positions no gradient: 0 at and beyond the
// bounds, as PyTorch's hardtanh (clamp would pass the gradient at the bounds).
Tensor hardtanh(const Tensor& input, double min_val, double max_val) {
  EMBER_CHECK(min_val <= max_val, "hardtanh: min_val (", min_val, ") must not exceed max_val (", max_val, ")");
  return input.masked_fill(input.le(min_val), min_val).masked_fill(input.ge(max_val), max_val);
}

Tensor relu6(const Tensor& input) { return hardtanh(input, 0.0, 6.0); }

Tensor selu(const Tensor& input) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return elu(input, kAlpha) * kScale;
}

// The exponential only sees min(x, 0), so it never overflows (an inf there
// would turn the zero gradient of the unused side into NaN).
Tensor celu(const Tensor& input, double alpha) {
  EMBER_CHECK(alpha != 0.0, "celu: alpha must not be 0");
  return ember::relu(input) + (input.clamp(std::nullopt, 0.0) / alpha).expm1() * alpha;
}

Tensor softsign(const Tensor& input) { return input / (input.abs() + 1); }

Tensor tanhshrink(const Tensor& input) { return input - ember::tanh(input); }

Tensor threshold(const Tensor& input, double threshold, double value) {
  return input.masked_fill(input.le(threshold), value);
}

Tensor glu(const Tensor& input, int64_t dim) {
  EMBER_CHECK(input.dim() > 0, "glu: expected a tensor with at least one dim, got a 0-d tensor");
  const int64_t size = input.size(dim);
  EMBER_CHECK(size % 2 == 0, "glu: the size of dim ", dim, " must be even, got ", size, " (input ", input.sizes(), ")");
  const TensorList halves = input.chunk(2, dim);
  return halves[0] * ember::sigmoid(halves[1]);
}

}  // namespace ember::nn::functional
