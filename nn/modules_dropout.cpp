// nn::Dropout (modules/dropout.h).
#include "ember/nn/modules/dropout.h"

#include <ostream>

#include "ember/nn/functional.h"

namespace ember::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options) : Module("Dropout"), options(options) {
  EMBER_CHECK(options.p() >= 0.0 && options.p() <= 1.0, "Dropout: p must be in [0, 1], got ", options.p());
}

Tensor DropoutImpl::forward(const Tensor& input) {
  return functional::dropout(input, options.p(), is_training(), options.generator());
}

void DropoutImpl::pretty_print(std::ostream& os) const { os << "Dropout(p=" << options.p() << ")"; }

}  // namespace ember::nn
