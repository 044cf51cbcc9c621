// Unfold and Fold (include/ember/nn/modules/fold.h): F::unfold and F::fold
// with the layer's options.
#include <ostream>

#include "ember/nn/functional/fold.h"
#include "ember/nn/modules/fold.h"

namespace ember::nn {

Tensor UnfoldImpl::forward(const Tensor& input) {
  return functional::unfold(input, options.kernel_size(), options.dilation(), options.padding(), options.stride());
}

void UnfoldImpl::pretty_print(std::ostream& os) const {
  os << "Unfold(kernel_size=" << IntArrayRef(options.kernel_size()) << ", dilation=" << IntArrayRef(options.dilation())
     << ", padding=" << IntArrayRef(options.padding()) << ", stride=" << IntArrayRef(options.stride()) << ")";
}

Tensor FoldImpl::forward(const Tensor& input) {
  return functional::fold(input, options.output_size(), options.kernel_size(), options.dilation(), options.padding(),
                          options.stride());
}

void FoldImpl::pretty_print(std::ostream& os) const {
  os << "Fold(output_size=" << IntArrayRef(options.output_size())
     << ", kernel_size=" << IntArrayRef(options.kernel_size()) << ", dilation=" << IntArrayRef(options.dilation())
     << ", padding=" << IntArrayRef(options.padding()) << ", stride=" << IntArrayRef(options.stride()) << ")";
}

}  // namespace ember::nn
