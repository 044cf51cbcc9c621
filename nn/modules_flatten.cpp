// nn::Flatten and nn::Unflatten (modules/flatten.h).
#include "ember/nn/modules/flatten.h"

#include <ostream>

namespace ember::nn {

Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(options.start_dim(), options.end_dim()); }

void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

Tensor UnflattenImpl::forward(const Tensor& input) { return input.unflatten(options.dim(), options.sizes()); }

void UnflattenImpl::pretty_print(std::ostream& os) const {
  os << "Unflatten(dim=" << options.dim() << ", unflattened_size=" << IntArrayRef(options.sizes()) << ")";
}

}  // namespace ember::nn
