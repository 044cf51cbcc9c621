// Golden tests of ember::linalg against PyTorch: how ember runs each op of
// tests/golden/linalg/linalg.safetensors (written by
// tools/golden/make_linalg_golden.py). The cases use the format of the
// neural-network cases and tests/golden_nn.cpp runs them (one test each,
// GoldenNn/GoldenNn.MatchesTorch/linalg_<case>), comparing the outputs and
// the gradients of sum(out * cot). The generator stores torch's factors in
// ember's sign convention, so the outputs compare element by element.
#include <cmath>
#include <limits>

#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

using nlohmann::json;

std::optional<double> optional_float(const json& args, const char* name) {
  if (!args.contains(name) || args.at(name).is_null()) return std::nullopt;
  return args.at(name).get<double>();
}

// A numeric ord, with the strings "inf" and "-inf" the files use for infinities.
double numeric_ord(const json& ord) {
  if (ord.is_string()) {
    const std::string s = ord.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::invalid_argument("ord is not a number: " + s);
  }
  return ord.get<double>();
}

template <class... T>
TensorList list(const std::tuple<T...>& t) {
  return std::apply([](const auto&... x) { return TensorList{x...}; }, t);
}

const bool registered = [] {
  register_golden_nn_op("linalg.solve", [](const TensorList& in, const json& args) {
    return TensorList{linalg::solve(in[0], in[1], bool_arg(args, "left", true))};
  });
  register_golden_nn_op("linalg.inv", [](const TensorList& in, const json&) { return TensorList{linalg::inv(in[0])}; });
  register_golden_nn_op("linalg.det", [](const TensorList& in, const json&) { return TensorList{linalg::det(in[0])}; });
  register_golden_nn_op("linalg.slogdet",
                        [](const TensorList& in, const json&) { return list(linalg::slogdet(in[0])); });
  register_golden_nn_op("linalg.cholesky", [](const TensorList& in, const json& args) {
    return TensorList{linalg::cholesky(in[0], bool_arg(args, "upper", false))};
  });
  register_golden_nn_op("linalg.qr", [](const TensorList& in, const json& args) {
    return list(linalg::qr(in[0], str_arg(args, "mode", "reduced")));
  });
  register_golden_nn_op("linalg.svd", [](const TensorList& in, const json& args) {
    return list(linalg::svd(in[0], bool_arg(args, "full_matrices", true)));
  });
  register_golden_nn_op("linalg.eigh", [](const TensorList& in, const json& args) {
    return list(linalg::eigh(in[0], str_arg(args, "UPLO", "L")));
  });
  register_golden_nn_op("linalg.pinv", [](const TensorList& in, const json& args) {
    return TensorList{linalg::pinv(in[0], optional_float(args, "atol"), optional_float(args, "rtol"),
                                   bool_arg(args, "hermitian", false))};
  });
  // outputs: "solution", or "all" in torch's order but with the floating ones first.
  register_golden_nn_op("linalg.lstsq", [](const TensorList& in, const json& args) {
    const linalg::LstsqResult r = linalg::lstsq(in[0], in[1], optional_float(args, "rcond"));
    if (str_arg(args, "outputs", "solution") == "solution") return TensorList{r.solution};
    return TensorList{r.solution, r.residuals, r.singular_values, r.rank};
  });
  register_golden_nn_op("linalg.matrix_norm", [](const TensorList& in, const json& args) {
    const std::vector<int64_t> dim = ints_arg(args, "dim", {-2, -1});
    const bool keepdim = bool_arg(args, "keepdim", false);
    const json ord = args.value("ord", json("fro"));
    if (ord.is_string() && (ord == "fro" || ord == "nuc"))
      return TensorList{linalg::matrix_norm(in[0], ord.get<std::string>(), dim, keepdim)};
    return TensorList{linalg::matrix_norm(in[0], numeric_ord(ord), dim, keepdim)};
  });
  register_golden_nn_op("linalg.vector_norm", [](const TensorList& in, const json& args) {
    return TensorList{linalg::vector_norm(in[0], numeric_ord(args.value("ord", json(2))), ints_arg(args, "dim", {}),
                                          bool_arg(args, "keepdim", false))};
  });
  return true;
}();

}  // namespace
}  // namespace ember::testing
