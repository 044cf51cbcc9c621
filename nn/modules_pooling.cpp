// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (include/ember/nn/modules/pooling.h):
// option holders over F::max_pool2d, F::avg_pool2d, F::adaptive_avg_pool2d.
#include <ostream>

#include "ember/nn/functional/pooling.h"
#include "ember/nn/modules/pooling.h"

namespace ember::nn {

namespace F = functional;

namespace {
const char* bool_str(bool b) { return b ? "true" : "false"; }
}  // namespace

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return F::max_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                       options.ceil_mode());
}

std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return F::max_pool2d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                    options.dilation(), options.ceil_mode());
}

void MaxPool2dImpl::pretty_print(std::ostream& os) const {
  os << "MaxPool2d(kernel_size=" << IntArrayRef(options.kernel_size()) << ", stride=" << IntArrayRef(options.stride())
     << ", padding=" << IntArrayRef(options.padding()) << ", dilation=" << IntArrayRef(options.dilation())
     << ", ceil_mode=" << bool_str(options.ceil_mode()) << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return F::avg_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                       options.count_include_pad(), options.divisor_override());
}

void AvgPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AvgPool2d(kernel_size=" << IntArrayRef(options.kernel_size()) << ", stride=" << IntArrayRef(options.stride())
     << ", padding=" << IntArrayRef(options.padding());
  if (options.ceil_mode()) os << ", ceil_mode=true";
  if (!options.count_include_pad()) os << ", count_include_pad=false";
  if (options.divisor_override()) os << ", divisor_override=" << *options.divisor_override();
  os << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  return F::adaptive_avg_pool2d(input, options.output_size());
}

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AdaptiveAvgPool2d(output_size=" << IntArrayRef(options.output_size()) << ")";
}

}  // namespace ember::nn
