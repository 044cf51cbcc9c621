// Golden runners of the indexing family (cases in tools/golden/nn_indexing.py):
// gather, scatter, scatter_value, scatter_add, index_select, index_add,
// masked_select, repeat, flip, roll through the free functions of
// include/ember/ops.h. in0 is self (read through a transpose of its last two
// dims with transposed_input), in1 the index or mask, in2 the source.
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

using nlohmann::json;

Tensor self_of(const TensorList& in, const json& args) {
  return bool_arg(args, "transposed_input", false) ? in[0].transpose(-1, -2) : in[0];
}
int64_t dim_of(const json& args) { return int_arg(args, "dim", 0); }

const bool kGather = register_golden_nn_op("gather", [](const TensorList& in, const json& args) {
  return TensorList{gather(self_of(in, args), dim_of(args), in[1])};
});
const bool kScatter = register_golden_nn_op("scatter", [](const TensorList& in, const json& args) {
  return TensorList{scatter(self_of(in, args), dim_of(args), in[1], in[2])};
});
const bool kScatterValue = register_golden_nn_op("scatter_value", [](const TensorList& in, const json& args) {
  return TensorList{scatter(self_of(in, args), dim_of(args), in[1], Scalar(float_arg(args, "value", 0.0)))};
});
const bool kScatterAdd = register_golden_nn_op("scatter_add", [](const TensorList& in, const json& args) {
  return TensorList{scatter_add(self_of(in, args), dim_of(args), in[1], in[2])};
});
const bool kIndexSelect = register_golden_nn_op("index_select", [](const TensorList& in, const json& args) {
  return TensorList{index_select(self_of(in, args), dim_of(args), in[1])};
});
const bool kIndexAdd = register_golden_nn_op("index_add", [](const TensorList& in, const json& args) {
  const json& a = args.at("alpha");
  const Scalar alpha = a.is_number_integer() ? Scalar(a.get<int64_t>()) : Scalar(a.get<double>());
  return TensorList{index_add(self_of(in, args), dim_of(args), in[1], in[2], alpha)};
});
const bool kMaskedSelect = register_golden_nn_op("masked_select", [](const TensorList& in, const json& args) {
  return TensorList{masked_select(self_of(in, args), in[1])};
});
const bool kRepeat = register_golden_nn_op("repeat", [](const TensorList& in, const json& args) {
  return TensorList{repeat(self_of(in, args), ints_arg(args, "repeats", {}))};
});
const bool kFlip = register_golden_nn_op("flip", [](const TensorList& in, const json& args) {
  return TensorList{flip(self_of(in, args), ints_arg(args, "dims", {}))};
});
const bool kRoll = register_golden_nn_op("roll", [](const TensorList& in, const json& args) {
  return TensorList{roll(self_of(in, args), ints_arg(args, "shifts", {}), ints_arg(args, "dims", {}))};
});

}  // namespace
}  // namespace ember::testing
