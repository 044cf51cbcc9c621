// Golden runners of the norm family (cases: tools/golden/nn_norm.py; format:
// tests/golden_nn.h). Inputs come in the order the case lists them; "transposed"
// means the stored input is transposed back first, so ember reads a strided view.
#include <optional>

#include "ember/nn/functional/norm.h"
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using nlohmann::json;

Tensor maybe_transposed(const Tensor& x, const json& args) {
  return bool_arg(args, "transposed", false) ? x.transpose(-1, -2) : x;
}

// The input at the position stored under `key`, or none.
std::optional<Tensor> input_at(const TensorList& in, const json& args, const char* key) {
  const int64_t k = int_arg(args, key, -1);
  return k < 0 ? std::nullopt : std::optional<Tensor>(in.at(static_cast<size_t>(k)));
}

std::optional<DType> dtype_arg(const json& args) {
  const std::string name = str_arg(args, "dtype", "");
  if (name.empty()) return std::nullopt;
  EMBER_CHECK(name == "float64" || name == "float32", "golden norm: unexpected dtype ", name);
  return name == "float64" ? kFloat64 : kFloat32;
}

const bool registered = [] {
  register_golden_nn_op("softmax", [](const TensorList& in, const json& args) {
    return TensorList{F::softmax(maybe_transposed(in[0], args), int_arg(args, "dim", -1), dtype_arg(args))};
  });
  register_golden_nn_op("log_softmax", [](const TensorList& in, const json& args) {
    return TensorList{F::log_softmax(maybe_transposed(in[0], args), int_arg(args, "dim", -1), dtype_arg(args))};
  });
  register_golden_nn_op("layer_norm", [](const TensorList& in, const json& args) {
    return TensorList{F::layer_norm(maybe_transposed(in[0], args), ints_arg(args, "normalized_shape", {}),
                                    input_at(in, args, "weight"), input_at(in, args, "bias"),
                                    float_arg(args, "eps", 1e-5))};
  });
  register_golden_nn_op("rms_norm", [](const TensorList& in, const json& args) {
    const bool given = args.contains("eps") && !args.at("eps").is_null();
    const std::optional<Tensor> w = bool_arg(args, "weight", false) ? std::optional<Tensor>(in.at(1)) : std::nullopt;
    return TensorList{F::rms_norm(in[0], ints_arg(args, "normalized_shape", {}), w,
                                  given ? std::optional<double>(float_arg(args, "eps", 0)) : std::nullopt)};
  });
  register_golden_nn_op("group_norm", [](const TensorList& in, const json& args) {
    const bool affine = bool_arg(args, "affine", false);
    return TensorList{F::group_norm(in[0], int_arg(args, "num_groups", 1),
                                    affine ? std::optional<Tensor>(in.at(1)) : std::nullopt,
                                    affine ? std::optional<Tensor>(in.at(2)) : std::nullopt)};
  });
  // Returns the output, then the running statistics after the call (when given).
  register_golden_nn_op("batch_norm", [](const TensorList& in, const json& args) {
    const bool affine = bool_arg(args, "affine", false), running = bool_arg(args, "running", false);
    std::optional<Tensor> rm, rv;
    if (running) {
      rm = in.at(in.size() - 2).detach().clone();
      rv = in.at(in.size() - 1).detach().clone();
    }
    const Tensor y = F::batch_norm(in[0], rm, rv, affine ? std::optional<Tensor>(in.at(1)) : std::nullopt,
                                   affine ? std::optional<Tensor>(in.at(2)) : std::nullopt,
                                   bool_arg(args, "training", false), float_arg(args, "momentum", 0.1),
                                   float_arg(args, "eps", 1e-5));
    return running ? TensorList{y, *rm, *rv} : TensorList{y};
  });
  return true;
}();

}  // namespace
}  // namespace ember::testing
