// nn::Linear (modules/linear.h).
#include "ember/nn/modules/linear.h"

#include <cmath>
#include <ostream>

#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops.h"

namespace ember::nn {

namespace {
LinearOptions checked(const LinearOptions& options) {
  EMBER_CHECK(options.in_features() >= 0 && options.out_features() >= 0,
              "Linear: in_features and out_features must be >= 0, got ", options.in_features(), " and ",
              options.out_features());
  return options;
}
}  // namespace

LinearImpl::LinearImpl(const LinearOptions& options)
    : Module("Linear"),
      options(checked(options)),
      weight(register_parameter("weight", empty({options.out_features(), options.in_features()}))),
      bias(register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor())) {
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // kaiming_uniform_ needs fan_in > 0; with a zero-size weight there is nothing to draw.
  if (weight.numel() > 0) init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = options.in_features();
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() >= 1 && input.size(-1) == options.in_features(), "Linear: expected an input whose last dim is ",
              "in_features = ", options.in_features(), ", got shape ", input.sizes());
  return functional::linear(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

}  // namespace ember::nn
