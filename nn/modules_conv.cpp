// Conv1d, Conv2d, Conv3d, ConvTranspose2d (include/ember/nn/modules/conv.h): parameters,
// PyTorch's default init, argument checks that name the layer, and the
// non-zero padding modes: reflect, replicate, circular (F::pad first, then a
// convolution without padding).
#include <cmath>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ember/error.h"
#include "ember/nn/functional/pooling.h"
#include "ember/nn/init.h"
#include "ember/nn/modules/conv.h"
#include "ember/ops.h"

namespace ember::nn {

namespace F = functional;

std::vector<int64_t> detail::per_dim(const std::string& layer, const char* what, IntArrayRef values, size_t dims) {
  EMBER_CHECK(values.size() == 1 || values.size() == dims, layer, ": expected ", what, " to have 1 or ", dims,
              " values, got ", values);
  return values.size() == 1 ? std::vector<int64_t>(dims, values[0]) : values.vec();
}

namespace {

std::optional<Tensor> optional_bias(const Tensor& bias) {
  return bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
}

void check_channels(const std::string& layer, int64_t in_channels, int64_t out_channels, int64_t groups) {
  EMBER_CHECK(in_channels > 0 && out_channels > 0, layer, ": in_channels and out_channels must be positive, got ",
              in_channels, " and ", out_channels);
  EMBER_CHECK(groups > 0 && in_channels % groups == 0 && out_channels % groups == 0, layer, ": in_channels (",
              in_channels, ") and out_channels (", out_channels, ") must be divisible by groups (", groups, ")");
}

// PyTorch's init of a conv layer: kaiming_uniform_(a = sqrt(5)) gives
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the weight; the bias uses the same bound.
void default_init(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
  if (fan_in == 0) return;
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  init::uniform_(bias, -bound, bound);
}

// The input must be (C, *spatial) or (N, C, *spatial) with C == in_channels.
void check_input(const std::string& layer, const Tensor& input, size_t spatial, int64_t in_channels) {
  const int64_t dims = static_cast<int64_t>(spatial);
  EMBER_CHECK(input.dim() == dims + 1 || input.dim() == dims + 2, layer, ": expected a ", dims + 1,
              "-D (unbatched) or ", dims + 2, "-D (batched) input, got shape ", input.sizes());
  const int64_t channels = input.size(-dims - 1);
  EMBER_CHECK(channels == in_channels, layer, ": expected an input with ", in_channels, " channels (in_channels), got ",
              channels, " (input shape ", input.sizes(), ")");
}

std::ostream& print_list(std::ostream& os, const char* key, const std::vector<int64_t>& v) {
  return os << ", " << key << "=" << IntArrayRef(v);
}

bool all_equal(const std::vector<int64_t>& v, int64_t value) {
  for (int64_t x : v)
    if (x != value) return false;
  return true;
}

template <size_t D>
ConvOptions<D> validated(ConvOptions<D> options) {
  const std::string layer = ConvOptions<D>::layer_name();
  check_channels(layer, options.in_channels(), options.out_channels(), options.groups());
  const std::string& mode = options.padding_mode();
  EMBER_CHECK(mode == "zeros" || mode == "reflect" || mode == "replicate" || mode == "circular", layer,
              ": padding_mode must be \"zeros\", \"reflect\", \"replicate\" or \"circular\", got \"", mode, "\"");
  const F::ConvPadding& padding = options.padding();
  if (padding.is_mode()) {
    EMBER_CHECK(padding.mode() == "same" || padding.mode() == "valid", layer,
                ": padding must be numbers, \"valid\" or \"same\", got \"", padding.mode(), "\"");
    EMBER_CHECK(padding.mode() != "same" || all_equal(options.stride(), 1), layer,
                ": padding=\"same\" needs stride 1, got stride ", IntArrayRef(options.stride()));
  } else {
    detail::per_dim(layer, "padding", padding.values(), D);
  }
  return options;
}

// (out_channels, in_channels / groups, *kernel_size)
template <size_t D>
std::vector<int64_t> weight_shape(const ConvOptions<D>& options) {
  std::vector<int64_t> shape{options.out_channels(), options.in_channels() / options.groups()};
  shape.insert(shape.end(), options.kernel_size().begin(), options.kernel_size().end());
  return shape;
}

ConvTranspose2dOptions validated(ConvTranspose2dOptions options) {
  check_channels("ConvTranspose2d", options.in_channels(), options.out_channels(), options.groups());
  return options;
}

}  // namespace

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(ConvOptions<D> opts)
    : Module(ConvOptions<D>::layer_name()),
      options(validated(std::move(opts))),
      weight(register_parameter("weight", ember::empty(weight_shape(options)))),
      bias(register_parameter("bias", options.bias() ? empty({options.out_channels()}) : Tensor())) {
  reset_parameters();
}

template <size_t D>
void ConvNdImpl<D>::reset_parameters() {
  default_init(weight, bias);
}

template <size_t D>
Tensor ConvNdImpl<D>::forward(const Tensor& input) {
  check_input(name(), input, D, options.in_channels());
  const F::ConvPadding& padding = options.padding();
  auto conv = [&](const Tensor& x, const F::ConvPadding& pad) {
    if constexpr (D == 1) {
      return F::conv1d(x, weight, optional_bias(bias), options.stride(), pad, options.dilation(), options.groups());
    } else if constexpr (D == 2) {
      return F::conv2d(x, weight, optional_bias(bias), options.stride(), pad, options.dilation(), options.groups());
    } else {
      return F::conv3d(x, weight, optional_bias(bias), options.stride(), pad, options.dilation(), options.groups());
    }
  };
  if (options.padding_mode() == "zeros") return conv(input, padding);
  // Reflect/replicate/circular: pad explicitly, as F::pad wants it: (left, right) per dim, the last dim first.
  const std::vector<int64_t> numbers =
      padding.is_mode() ? std::vector<int64_t>(D, 0) : detail::per_dim(name(), "padding", padding.values(), D);
  std::vector<int64_t> pads;
  for (size_t i = D; i-- > 0;) {
    int64_t before = numbers[i], after = numbers[i];
    if (padding.is_mode() && padding.mode() == "same") {
      const int64_t total = options.dilation()[i] * (options.kernel_size()[i] - 1);
      before = total / 2;
      after = total - before;  // the odd one goes after, as with zeros
    }
    pads.push_back(before);
    pads.push_back(after);
  }
  return conv(F::pad(input, pads, options.padding_mode()), 0);
}

template <size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.in_channels() << ", " << options.out_channels();
  print_list(os, "kernel_size", options.kernel_size());
  print_list(os, "stride", options.stride());
  const F::ConvPadding& padding = options.padding();
  if (padding.is_mode()) {
    os << ", padding=" << padding.mode();
  } else {
    const std::vector<int64_t> p = detail::per_dim(name(), "padding", padding.values(), D);
    if (!all_equal(p, 0)) print_list(os, "padding", p);
  }
  if (!all_equal(options.dilation(), 1)) print_list(os, "dilation", options.dilation());
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!options.bias()) os << ", bias=false";
  if (options.padding_mode() != "zeros") os << ", padding_mode=" << options.padding_mode();
  os << ")";
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;
template class ConvNdImpl<3>;

ConvTranspose2dImpl::ConvTranspose2dImpl(ConvTranspose2dOptions opts)
    : Module("ConvTranspose2d"),
      options(validated(std::move(opts))),
      weight(register_parameter("weight", empty({options.in_channels(), options.out_channels() / options.groups(),
                                                 options.kernel_size()[0], options.kernel_size()[1]}))),
      bias(register_parameter("bias", options.bias() ? empty({options.out_channels()}) : Tensor())) {
  reset_parameters();
}

void ConvTranspose2dImpl::reset_parameters() { default_init(weight, bias); }

Tensor ConvTranspose2dImpl::forward(const Tensor& input) {
  check_input(name(), input, 2, options.in_channels());
  return F::conv_transpose2d(input, weight, optional_bias(bias), options.stride(), options.padding(),
                             options.output_padding(), options.groups(), options.dilation());
}

void ConvTranspose2dImpl::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.in_channels() << ", " << options.out_channels();
  print_list(os, "kernel_size", options.kernel_size());
  print_list(os, "stride", options.stride());
  if (!all_equal(options.padding(), 0)) print_list(os, "padding", options.padding());
  if (!all_equal(options.output_padding(), 0)) print_list(os, "output_padding", options.output_padding());
  if (!all_equal(options.dilation(), 1)) print_list(os, "dilation", options.dilation());
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!options.bias()) os << ", bias=false";
  os << ")";
}

}  // namespace ember::nn
