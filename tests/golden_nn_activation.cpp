// Golden runners of the activation family (cases in tools/golden/nn_activation.py):
// leaky_relu, elu, hardswish, hardsigmoid, mish, log_sigmoid through
// ember::nn::functional. Each case has one input x; with transposed_input the
// stored x is read through a transpose of its last two dims (a strided view).
#include "ember/nn/functional/activation.h"
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using nlohmann::json;

Tensor input_of(const TensorList& in, const json& args) {
  return bool_arg(args, "transposed_input", false) ? in[0].transpose(-1, -2) : in[0];
}

const bool kLeakyRelu = register_golden_nn_op("leaky_relu", [](const TensorList& in, const json& args) {
  return TensorList{F::leaky_relu(input_of(in, args), float_arg(args, "negative_slope", 0.01))};
});
const bool kElu = register_golden_nn_op("elu", [](const TensorList& in, const json& args) {
  return TensorList{F::elu(input_of(in, args), float_arg(args, "alpha", 1.0))};
});
const bool kHardswish = register_golden_nn_op("hardswish", [](const TensorList& in, const json& args) {
  return TensorList{F::hardswish(input_of(in, args))};
});
const bool kHardsigmoid = register_golden_nn_op("hardsigmoid", [](const TensorList& in, const json& args) {
  return TensorList{F::hardsigmoid(input_of(in, args))};
});
const bool kMish = register_golden_nn_op("mish", [](const TensorList& in, const json& args) {
  return TensorList{F::mish(input_of(in, args))};
});
const bool kLogSigmoid = register_golden_nn_op("log_sigmoid", [](const TensorList& in, const json& args) {
  return TensorList{F::log_sigmoid(input_of(in, args))};
});

}  // namespace
}  // namespace ember::testing
