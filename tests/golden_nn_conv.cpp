// Golden runners of the conv family (cases in tools/golden/nn_conv.py):
// conv1d, conv2d, conv3d, conv_transpose2d, unfold and fold through ember::nn::functional.
// Inputs: x, weight and, when present, bias. Args: stride, padding (numbers or
// "same"/"valid"), dilation, groups, output_padding, and transposed_input (the
// stored x is read through a transpose of its last two dims, a strided view).
#include "ember/nn/functional/conv.h"
#include "ember/nn/functional/fold.h"
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

std::optional<Tensor> bias_of(const TensorList& in) {
  return in.size() > 2 ? std::optional<Tensor>(in[2]) : std::nullopt;
}

Tensor input_of(const TensorList& in, const nlohmann::json& args) {
  return bool_arg(args, "transposed_input", false) ? in[0].transpose(-1, -2) : in[0];
}

F::ConvPadding padding_of(const nlohmann::json& args) {
  if (args.contains("padding") && args.at("padding").is_string()) return F::ConvPadding(str_arg(args, "padding", ""));
  return F::ConvPadding(IntArrayRef(ints_arg(args, "padding", {0})));
}

TensorList run_conv(const TensorList& in, const nlohmann::json& args, int spatial) {
  const std::vector<int64_t> stride = ints_arg(args, "stride", {1}), dilation = ints_arg(args, "dilation", {1});
  const int64_t groups = int_arg(args, "groups", 1);
  const Tensor x = input_of(in, args);
  if (spatial == 1) return {F::conv1d(x, in[1], bias_of(in), stride, padding_of(args), dilation, groups)};
  if (spatial == 2) return {F::conv2d(x, in[1], bias_of(in), stride, padding_of(args), dilation, groups)};
  return {F::conv3d(x, in[1], bias_of(in), stride, padding_of(args), dilation, groups)};
}

const bool kConv1d = register_golden_nn_op(
    "conv1d", [](const TensorList& in, const nlohmann::json& args) { return run_conv(in, args, 1); });
const bool kConv2d = register_golden_nn_op(
    "conv2d", [](const TensorList& in, const nlohmann::json& args) { return run_conv(in, args, 2); });
const bool kConv3d = register_golden_nn_op(
    "conv3d", [](const TensorList& in, const nlohmann::json& args) { return run_conv(in, args, 3); });
const bool kConvTranspose2d =
    register_golden_nn_op("conv_transpose2d", [](const TensorList& in, const nlohmann::json& args) {
      return TensorList{F::conv_transpose2d(input_of(in, args), in[1], bias_of(in), ints_arg(args, "stride", {1}),
                                            ints_arg(args, "padding", {0}), ints_arg(args, "output_padding", {0}),
                                            int_arg(args, "groups", 1), ints_arg(args, "dilation", {1}))};
    });

const bool kUnfold = register_golden_nn_op("unfold", [](const TensorList& in, const nlohmann::json& args) {
  return TensorList{F::unfold(input_of(in, args), ints_arg(args, "kernel_size", {}), ints_arg(args, "dilation", {1}),
                              ints_arg(args, "padding", {0}), ints_arg(args, "stride", {1}))};
});
const bool kFold = register_golden_nn_op("fold", [](const TensorList& in, const nlohmann::json& args) {
  return TensorList{F::fold(input_of(in, args), ints_arg(args, "output_size", {}), ints_arg(args, "kernel_size", {}),
                            ints_arg(args, "dilation", {1}), ints_arg(args, "padding", {0}),
                            ints_arg(args, "stride", {1}))};
});

}  // namespace
}  // namespace ember::testing
