// Golden runners of the pooling family (cases in tools/golden/nn_pooling.py):
// max_pool2d/3d (values and indices), avg_pool2d/3d, adaptive_avg_pool2d/3d, pad and
// interpolate through ember::nn::functional. Each case has one input x; with
// transposed_input the stored x is read through a transpose of its last two
// dims (a strided view). The other args are torch's keyword arguments.
#include <optional>

#include "ember/nn/functional/pooling.h"
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using nlohmann::json;

Tensor input_of(const TensorList& in, const json& args) {
  return bool_arg(args, "transposed_input", false) ? in[0].transpose(-1, -2) : in[0];
}

std::vector<int64_t> kernel_of(const json& args) { return ints_arg(args, "kernel_size", {}); }

std::optional<int64_t> optional_int(const json& args, const char* name) {
  if (!args.contains(name) || args.at(name).is_null()) return std::nullopt;
  return args.at(name).get<int64_t>();
}

std::optional<bool> optional_bool(const json& args, const char* name) {
  if (!args.contains(name) || args.at(name).is_null()) return std::nullopt;
  return args.at(name).get<bool>();
}

const bool kMaxPool2d = register_golden_nn_op("max_pool2d", [](const TensorList& in, const json& args) {
  auto [values, indices] = F::max_pool2d_with_indices(input_of(in, args), kernel_of(args), ints_arg(args, "stride", {}),
                                                      ints_arg(args, "padding", {0}), ints_arg(args, "dilation", {1}),
                                                      bool_arg(args, "ceil_mode", false));
  return TensorList{values, indices};
});

const bool kAvgPool2d = register_golden_nn_op("avg_pool2d", [](const TensorList& in, const json& args) {
  return TensorList{F::avg_pool2d(input_of(in, args), kernel_of(args), ints_arg(args, "stride", {}),
                                  ints_arg(args, "padding", {0}), bool_arg(args, "ceil_mode", false),
                                  bool_arg(args, "count_include_pad", true), optional_int(args, "divisor_override"))};
});

const bool kAdaptiveAvgPool2d =
    register_golden_nn_op("adaptive_avg_pool2d", [](const TensorList& in, const json& args) {
      return TensorList{F::adaptive_avg_pool2d(input_of(in, args), ints_arg(args, "output_size", {}))};
    });

const bool kMaxPool3d = register_golden_nn_op("max_pool3d", [](const TensorList& in, const json& args) {
  auto [values, indices] = F::max_pool3d_with_indices(input_of(in, args), kernel_of(args), ints_arg(args, "stride", {}),
                                                      ints_arg(args, "padding", {0}), ints_arg(args, "dilation", {1}),
                                                      bool_arg(args, "ceil_mode", false));
  return TensorList{values, indices};
});

const bool kAvgPool3d = register_golden_nn_op("avg_pool3d", [](const TensorList& in, const json& args) {
  return TensorList{F::avg_pool3d(input_of(in, args), kernel_of(args), ints_arg(args, "stride", {}),
                                  ints_arg(args, "padding", {0}), bool_arg(args, "ceil_mode", false),
                                  bool_arg(args, "count_include_pad", true), optional_int(args, "divisor_override"))};
});

const bool kAdaptiveAvgPool3d =
    register_golden_nn_op("adaptive_avg_pool3d", [](const TensorList& in, const json& args) {
      return TensorList{F::adaptive_avg_pool3d(input_of(in, args), ints_arg(args, "output_size", {}))};
    });

const bool kPad = register_golden_nn_op("pad", [](const TensorList& in, const json& args) {
  std::optional<double> value;
  if (args.contains("value")) value = float_arg(args, "value", 0.0);
  return TensorList{F::pad(input_of(in, args), ints_arg(args, "pad", {}), str_arg(args, "mode", "constant"), value)};
});

const bool kInterpolate = register_golden_nn_op("interpolate", [](const TensorList& in, const json& args) {
  F::InterpolateOptions o;
  if (args.contains("size")) o.size = ints_arg(args, "size", {});
  if (args.contains("scale_factor")) o.scale_factor = args.at("scale_factor").get<std::vector<double>>();
  o.mode = str_arg(args, "mode", "nearest");
  o.align_corners = optional_bool(args, "align_corners");
  o.recompute_scale_factor = optional_bool(args, "recompute_scale_factor");
  return TensorList{F::interpolate(input_of(in, args), o)};
});

}  // namespace
}  // namespace ember::testing
