// Golden runner of the attention family (cases: tools/golden/nn_attention.py).
#include <optional>

#include "ember/nn/functional/attention.h"
#include "tests/golden_nn.h"

namespace ember::testing {

namespace {

namespace F = ember::nn::functional;
using nlohmann::json;

const bool registered = [] {
  register_golden_nn_op("scaled_dot_product_attention", [](const TensorList& in, const json& args) {
    const Tensor q = bool_arg(args, "transpose_q", false) ? in[0].transpose(-2, -1) : in[0];
    const std::optional<Tensor> mask = bool_arg(args, "mask", false) ? std::optional<Tensor>(in.at(3)) : std::nullopt;
    std::optional<double> scale;
    if (args.contains("scale") && !args.at("scale").is_null()) scale = args.at("scale").get<double>();
    return TensorList{F::scaled_dot_product_attention(q, in[1], in[2], mask, 0.0, bool_arg(args, "causal", false), scale)};
  });
  return true;
}();

}  // namespace

}  // namespace ember::testing
