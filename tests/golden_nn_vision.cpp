// Golden runners of the vision family (cases in tools/golden/nn_vision.py):
// grid_sample (in0 = input, in1 = grid) and affine_grid (in0 = theta) through
// ember::nn::functional, with torch's keyword arguments.
#include "ember/nn/functional/vision.h"
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;
using nlohmann::json;

const bool kGridSample = register_golden_nn_op("grid_sample", [](const TensorList& in, const json& args) {
  return TensorList{F::grid_sample(in[0], in[1], str_arg(args, "mode", "bilinear"),
                                   str_arg(args, "padding_mode", "zeros"), bool_arg(args, "align_corners", false))};
});

const bool kAffineGrid = register_golden_nn_op("affine_grid", [](const TensorList& in, const json& args) {
  return TensorList{F::affine_grid(in[0], ints_arg(args, "size", {}), bool_arg(args, "align_corners", false))};
});

}  // namespace
}  // namespace ember::testing
