// ember::nn::functional pooling, pad and interpolate
// (include/ember/nn/functional/pooling.h): thin wrappers over the dispatched
// ops of core/op_decls_pooling.h, which check their arguments and run the
// kernels. What happens here is what torch.nn.functional does before its op:
// choosing the op by mode, the output size of interpolate from a scale, and
// nearest on a 3-D input as a 2-D resample with an H of 1.
#include <cmath>
#include <string>
#include <vector>

#include "core/op_decls_pooling.h"
#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/nn/functional/pooling.h"

namespace ember::nn::functional {

Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  // With a gradient to come, keep the indices the backward needs (as torch does); else skip writing them.
  if (input.requires_grad() && is_grad_enabled()) {
    return std::get<0>(op::max_pool2d_with_indices.call(input, kernel_size, stride, padding, dilation, ceil_mode));
  }
  return op::max_pool2d.call(input, kernel_size, stride, padding, dilation, ceil_mode);
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return op::max_pool2d_with_indices.call(input, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  return op::avg_pool2d.call(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  return op::adaptive_avg_pool2d.call(input, output_size);
}

Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(op::max_pool3d_with_indices.call(input, kernel_size, stride, padding, dilation, ceil_mode));
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return op::max_pool3d_with_indices.call(input, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  return op::avg_pool3d.call(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size) {
  return op::adaptive_avg_pool3d.call(input, output_size);
}

Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  if (mode == "constant") return op::constant_pad_nd.call(input, pad, Scalar(value.value_or(0.0)));
  EMBER_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular", "pad: unknown padding mode \"", mode,
              "\"; expected \"constant\", \"reflect\", \"replicate\" or \"circular\"");
  EMBER_CHECK(!value || *value == 0, "pad: padding mode \"", mode, "\" takes no value, got ", *value);
  if (mode == "circular") return op::circular_pad.call(input, pad);
  return mode == "reflect" ? op::reflection_pad.call(input, pad) : op::replication_pad.call(input, pad);
}

namespace {

// A list of 1 value (every spatial dim) or one per spatial dim.
template <class T>
std::vector<T> per_dim(const char* what, const std::vector<T>& v, int64_t spatial, IntArrayRef shape) {
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == spatial, "interpolate: ", what, " must have 1 or ",
              spatial, " values for an input of shape ", shape, " (", spatial, " spatial dims), got ", v.size());
  return v.size() == 1 ? std::vector<T>(static_cast<size_t>(spatial), v[0]) : v;
}

}  // namespace

Tensor interpolate(const Tensor& input, const InterpolateOptions& o) {
  const std::string& mode = o.mode;
  EMBER_CHECK(mode == "nearest" || mode == "bilinear", "interpolate: unknown or unsupported mode \"", mode,
              "\"; ember supports \"nearest\" (3-D and 4-D input) and \"bilinear\" (4-D input)");
  EMBER_CHECK(mode == "bilinear" || !o.align_corners,
              "interpolate: align_corners can only be set with mode "
              "\"bilinear\", not \"",
              mode, "\"");
  const int64_t dim = input.dim();
  if (mode == "bilinear") {
    EMBER_CHECK(dim == 4, "interpolate: mode \"bilinear\" needs a 4-D (N, C, H, W) input, got shape ", input.sizes());
  } else {
    EMBER_CHECK(dim == 3 || dim == 4,
                "interpolate: mode \"nearest\" needs a 3-D (N, C, W) or 4-D (N, C, H, W) input, "
                "got shape ",
                input.sizes());
  }
  EMBER_CHECK(o.size.has_value() != o.scale_factor.has_value(),
              "interpolate: exactly one of size and scale_factor "
              "must be given, got ",
              o.size ? "both" : "neither");
  const bool recompute = o.recompute_scale_factor.value_or(false);
  EMBER_CHECK(!(recompute && o.size), "interpolate: recompute_scale_factor is not meaningful with an explicit size");
  const int64_t spatial = dim - 2;

  std::vector<int64_t> out_size;
  std::vector<double> scales(static_cast<size_t>(spatial), 0.0);  // 0: none (the kernels use in / out)
  if (o.size) {
    out_size = per_dim("size", *o.size, spatial, input.sizes());
  } else {
    const std::vector<double> s = per_dim("scale_factor", *o.scale_factor, spatial, input.sizes());
    for (int64_t i = 0; i < spatial; ++i) {
      out_size.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + i)) * s[i])));
      if (!recompute) scales[i] = s[i];
    }
  }

  if (mode == "bilinear") {
    return op::upsample_bilinear2d.call(input, out_size, o.align_corners.value_or(false), scales[0], scales[1]);
  }
  if (dim == 4) return op::upsample_nearest2d.call(input, out_size, scales[0], scales[1]);
  // (N, C, W) as (N, C, 1, W): an H of 1 resamples to itself.
  const std::vector<int64_t> hw = {1, out_size[0]};
  return op::upsample_nearest2d.call(input.unsqueeze(2), hw, 0.0, scales[0]).squeeze(2);
}

}  // namespace ember::nn::functional
