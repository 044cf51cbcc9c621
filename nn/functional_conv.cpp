// ember::nn::functional conv1d, conv2d, conv3d, conv_transpose2d (include/ember/nn/functional/conv.h):
// thin wrappers over the dispatched `convolution` op (core/op_decls_conv.h),
// which checks the arguments and runs the kernels. What happens here is what
// torch.nn.functional does before its op: unbatched inputs get a batch dim,
// and padding="same" becomes numbers (plus one extra zero on the right/bottom
// where the total padding is odd, as in PyTorch).
#include <string>
#include <vector>

#include "core/op_decls_conv.h"
#include "ember/error.h"
#include "ember/nn/functional/conv.h"
#include "ember/ops.h"

namespace ember::nn::functional {

namespace {

// An int[] argument as one value per spatial dim (a single value repeats).
std::vector<int64_t> per_dim(const char* op, const char* name, IntArrayRef v, int64_t spatial) {
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == spatial, op, ": expected ", name, " to have 1 or ",
              spatial, " values, got ", v);
  return v.size() == 1 ? std::vector<int64_t>(static_cast<size_t>(spatial), v[0]) : v.vec();
}

// conv1d (spatial 1), conv2d (spatial 2) and conv3d (spatial 3).
Tensor conv_nd(const char* op, int64_t spatial, const Tensor& input, const Tensor& weight,
               const std::optional<Tensor>& bias, IntArrayRef stride, const ConvPadding& padding, IntArrayRef dilation,
               int64_t groups) {
  const int64_t batched_dim = spatial + 2;
  EMBER_CHECK(input.dim() == batched_dim || input.dim() == batched_dim - 1, op, ": expected a ", batched_dim - 1,
              "-D (unbatched) or ", batched_dim, "-D (batched) input, got shape ", input.sizes());
  EMBER_CHECK(weight.dim() == batched_dim, op, ": expected a ", batched_dim, "-D weight, got shape ", weight.sizes());
  Tensor x = input.dim() == batched_dim ? input : input.unsqueeze(0);
  std::vector<int64_t> pad;
  if (!padding.is_mode()) {
    pad = padding.values();
  } else if (padding.mode() == "valid") {
    pad = {0};
  } else {
    EMBER_CHECK(padding.mode() == "same", op, ": padding must be a number, a list, \"valid\" or \"same\", got \"",
                padding.mode(), "\"");
    const std::vector<int64_t> s = per_dim(op, "stride", stride, spatial),
                               d = per_dim(op, "dilation", dilation, spatial);
    for (int64_t v : s)
      EMBER_CHECK(v == 1, op, ": padding=\"same\" is not supported for strided convolutions (stride ", stride, ")");
    for (int64_t i = 0; i < spatial; ++i) {
      const int64_t total = d[i] * (weight.size(2 + i) - 1);
      pad.push_back(total / 2);
      if (total % 2 != 0) {  // the odd zero goes after the input, along this dim
        std::vector<int64_t> zeros_shape = x.sizes().vec();
        zeros_shape[2 + i] = 1;
        x = cat({x, zeros(zeros_shape, TensorOptions(x.dtype()).device(x.device()))}, 2 + i);
      }
    }
  }
  Tensor out = op::convolution.call(x, weight, bias, stride, pad, dilation, false, {0}, groups);
  return input.dim() == batched_dim ? out : out.squeeze(0);
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              const ConvPadding& padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              const ConvPadding& padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              const ConvPadding& padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups);
}

Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4,
              "conv_transpose2d: expected a 3-D (unbatched) or 4-D (batched) input, got shape ", input.sizes());
  EMBER_CHECK(weight.dim() == 4, "conv_transpose2d: expected a 4-D weight, got shape ", weight.sizes());
  const Tensor x = input.dim() == 4 ? input : input.unsqueeze(0);
  Tensor out = op::convolution.call(x, weight, bias, stride, padding, dilation, true, output_padding, groups);
  return input.dim() == 4 ? out : out.squeeze(0);
}

}  // namespace ember::nn::functional
