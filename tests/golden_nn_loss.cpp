// Golden runners of the loss family (cases: tools/golden/nn_loss.py).
#include "ember/nn/functional/loss.h"
#include "tests/golden_nn.h"

namespace ember::testing {

namespace {

namespace F = ember::nn::functional;
using nlohmann::json;

// Input `index` when the flag `name` is set.
std::optional<Tensor> optional_input(const TensorList& in, const json& args, const char* name, size_t index) {
  if (!bool_arg(args, name, false)) return std::nullopt;
  return in.at(index);
}

std::optional<int64_t> optional_int(const json& args, const char* name) {
  if (!args.contains(name) || args.at(name).is_null()) return std::nullopt;
  return args.at(name).get<int64_t>();
}

const bool registered = [] {
  register_golden_nn_op("cross_entropy", [](const TensorList& in, const json& args) {
    const Tensor x = bool_arg(args, "transpose", false) ? in[0].t() : in[0];
    return TensorList{F::cross_entropy(x, in[1], optional_input(in, args, "weight", 2),
                                       int_arg(args, "ignore_index", -100), str_arg(args, "reduction", "mean"),
                                       float_arg(args, "label_smoothing", 0.0))};
  });
  register_golden_nn_op("nll_loss", [](const TensorList& in, const json& args) {
    return TensorList{F::nll_loss(in[0], in[1], optional_input(in, args, "weight", 2),
                                  int_arg(args, "ignore_index", -100), str_arg(args, "reduction", "mean"))};
  });
  register_golden_nn_op("mse_loss", [](const TensorList& in, const json& args) {
    return TensorList{F::mse_loss(in[0], in[1], str_arg(args, "reduction", "mean"))};
  });
  register_golden_nn_op("l1_loss", [](const TensorList& in, const json& args) {
    return TensorList{F::l1_loss(in[0], in[1], str_arg(args, "reduction", "mean"))};
  });
  register_golden_nn_op("smooth_l1_loss", [](const TensorList& in, const json& args) {
    return TensorList{
        F::smooth_l1_loss(in[0], in[1], str_arg(args, "reduction", "mean"), float_arg(args, "beta", 1.0))};
  });
  register_golden_nn_op("binary_cross_entropy_with_logits", [](const TensorList& in, const json& args) {
    return TensorList{F::binary_cross_entropy_with_logits(in[0], in[1], optional_input(in, args, "weight", 2),
                                                          str_arg(args, "reduction", "mean"),
                                                          optional_input(in, args, "pos_weight", 3))};
  });
  register_golden_nn_op("kl_div", [](const TensorList& in, const json& args) {
    return TensorList{
        F::kl_div(in[0], in[1], str_arg(args, "reduction", "mean"), bool_arg(args, "log_target", false))};
  });
  register_golden_nn_op("embedding", [](const TensorList& in, const json& args) {
    return TensorList{F::embedding(in[0], in[1], optional_int(args, "padding_idx"))};
  });
  register_golden_nn_op("linear", [](const TensorList& in, const json& args) {
    return TensorList{F::linear(in[0], in[1], optional_input(in, args, "bias", 2))};
  });
  return true;
}();

}  // namespace

}  // namespace ember::testing
