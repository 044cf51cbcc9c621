// MaxPool2d/3d, AvgPool2d/3d, AdaptiveAvgPool2d/3d (include/ember/nn/modules/pooling.h):
// option holders over the F:: pooling functions of their dims.
#include <ostream>

#include "ember/nn/functional/pooling.h"
#include "ember/nn/modules/pooling.h"

namespace ember::nn {

namespace F = functional;

namespace {
const char* bool_str(bool b) { return b ? "true" : "false"; }
}  // namespace

template <size_t D>
Tensor MaxPoolNdImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 2) {
    return F::max_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                         options.ceil_mode());
  } else {
    return F::max_pool3d(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                         options.ceil_mode());
  }
}

template <size_t D>
std::tuple<Tensor, Tensor> MaxPoolNdImpl<D>::forward_with_indices(const Tensor& input) {
  if constexpr (D == 2) {
    return F::max_pool2d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                      options.dilation(), options.ceil_mode());
  } else {
    return F::max_pool3d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                      options.dilation(), options.ceil_mode());
  }
}

template <size_t D>
void MaxPoolNdImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(kernel_size=" << IntArrayRef(options.kernel_size()) << ", stride=" << IntArrayRef(options.stride())
     << ", padding=" << IntArrayRef(options.padding()) << ", dilation=" << IntArrayRef(options.dilation())
     << ", ceil_mode=" << bool_str(options.ceil_mode()) << ")";
}

template <size_t D>
Tensor AvgPoolNdImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 2) {
    return F::avg_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                         options.count_include_pad(), options.divisor_override());
  } else {
    return F::avg_pool3d(input, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                         options.count_include_pad(), options.divisor_override());
  }
}

template <size_t D>
void AvgPoolNdImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(kernel_size=" << IntArrayRef(options.kernel_size()) << ", stride=" << IntArrayRef(options.stride())
     << ", padding=" << IntArrayRef(options.padding());
  if (options.ceil_mode()) os << ", ceil_mode=true";
  if (!options.count_include_pad()) os << ", count_include_pad=false";
  if (options.divisor_override()) os << ", divisor_override=" << *options.divisor_override();
  os << ")";
}

template <size_t D>
Tensor AdaptiveAvgPoolNdImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 2) {
    return F::adaptive_avg_pool2d(input, options.output_size());
  } else {
    return F::adaptive_avg_pool3d(input, options.output_size());
  }
}

template <size_t D>
void AdaptiveAvgPoolNdImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(output_size=" << IntArrayRef(options.output_size()) << ")";
}

template class MaxPoolNdImpl<2>;
template class MaxPoolNdImpl<3>;
template class AvgPoolNdImpl<2>;
template class AvgPoolNdImpl<3>;
template class AdaptiveAvgPoolNdImpl<2>;
template class AdaptiveAvgPoolNdImpl<3>;

}  // namespace ember::nn
