// ember::nn::functional pooling, padding and resampling, as torch.nn.functional
// (PyTorch 1.13 semantics):
//
//   namespace F = ember::nn::functional;
//   Tensor y = F::max_pool2d(x, 3, /*stride=*/2, /*padding=*/1);     // x: (N, C, H, W) or (C, H, W)
//   auto [v, i] = F::max_pool2d_with_indices(x, {2, 3});             // i: int64 flat indices into H*W
//   Tensor g = F::adaptive_avg_pool2d(x, 1);                         // global average: (N, C, 1, 1)
//   Tensor v3 = F::max_pool3d(vol, {1, 2, 2});                        // vol: (N, C, D, H, W) or (C, D, H, W)
//   Tensor p = F::pad(x, {1, 1, 2, 0}, "reflect");                   // W by (1, 1), H by (2, 0)
//   Tensor u = F::interpolate(x, {.scale_factor = std::vector<double>{2.0}, .mode = "bilinear"});
//   Tensor m = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));   // libtorch's form
//   Tensor v = F::interpolate(x, F::InterpolateFuncOptions().size({7, 5}).mode(ember::kBilinear));
//
// An IntArrayRef spatial argument is one value (every dim) or one per dim:
// (h, w) for the 2-D functions, (d, h, w) for the 3-D ones.
// Pooling and bilinear take float32, float64, float16 and bfloat16 (the last
// two computed in float32); pad and nearest take every dtype. Every op here is
// differentiable to any order, and gives the same bits for any thread count.
// Bad arguments raise an ember::Error naming the op, the shapes and what was
// expected.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/nn/functional/options_support.h"
#include "ember/nn/options/pooling.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// The maximum of each kernel_size window (dilated by `dilation`, stepped by
// `stride`, which defaults to kernel_size) over the input padded with -inf
// by `padding` (at most half the kernel). ceil_mode rounds the output size
// up (a window may then hang over the right edge, but never starts in the
// right padding).
// NaN propagates. Output size floor((H + 2 p - d (k - 1) - 1) / s) + 1 per dim.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
// max_pool2d and, as an int64 tensor of the same shape, the position h * W + w
// of each maximum in its input plane (torch's return_indices=True).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);

// The mean of each window over the zero-padded input. count_include_pad:
// padded positions count in the divisor; divisor_override (non-zero) replaces
// the divisor.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);

// (N, C, H, W) -> (N, C, oh, ow): output i averages the input rows
// [floor(i H / oh), ceil((i + 1) H / oh)), and the same for columns.
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);

// The 3-D forms of the four above, on (N, C, D, H, W) or (C, D, H, W) inputs,
// with the same rules per dim; max_pool3d_with_indices gives the positions
// (d * H + h) * W + w in each input volume.
Tensor max_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool3d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
Tensor adaptive_avg_pool3d(const Tensor& input, IntArrayRef output_size);

// Pads the last dims by (left, right) pairs, the last dim first, as torch:
// mode "constant" (any number of dims, filled with `value`, default 0; a
// negative padding crops), "reflect" (mirror without repeating the edge;
// padding < the dim's size), "replicate" (repeat the edge) or "circular"
// (wrap around: the left padding repeats the end of the dim, the right one
// its start; after the crop of a negative padding, each padding at most the
// dim's remaining size); the last three pad the last 1, 2 or 3 dims of a
// (K+1)-D or (K+2)-D input and take no value.
Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);

// The arguments of interpolate, named as in torch.nn.functional.interpolate.
struct InterpolateOptions {
  std::optional<std::vector<int64_t>> size{};         // the output's spatial size: 1 value or one per dim
  std::optional<std::vector<double>> scale_factor{};  // or a scale: 1 value or one per dim
  std::string mode = "nearest";                       // "nearest" (3-D, 4-D input) or "bilinear" (4-D)
  std::optional<bool> align_corners{};                // bilinear only (default false)
  std::optional<bool> recompute_scale_factor{};       // true: index with in / out instead of 1 / scale
};

// Resamples the spatial dims of (N, C, W) or (N, C, H, W). Exactly one of
// size and scale_factor; with a scale the output size is floor(in * scale).
// nearest reads source floor(dst * scale); bilinear, without align_corners,
// samples at (dst + 0.5) * scale - 0.5 (clamped at 0); with it, at
// dst * (in - 1) / (out - 1). scale is 1 / scale_factor when given (and not
// recomputed), else in / out.
Tensor interpolate(const Tensor& input, const InterpolateOptions& options);

// ---- libtorch's options forms (Note [Options forms] in options_support.h) ----

using MaxPool2dFuncOptions = nn::MaxPool2dOptions;
using AvgPool2dFuncOptions = nn::AvgPool2dOptions;
using AdaptiveAvgPool2dFuncOptions = nn::AdaptiveAvgPool2dOptions;
using MaxPool3dFuncOptions = nn::MaxPool3dOptions;
using AvgPool3dFuncOptions = nn::AvgPool3dOptions;
using AdaptiveAvgPool3dFuncOptions = nn::AdaptiveAvgPool3dOptions;

class PadFuncOptions {
 public:
  explicit PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}
  // "constant" (default), "reflect", "replicate" or "circular" (ember::kReflect, ...).
  PadFuncOptions& mode(std::string v) {
    mode_ = std::move(v);
    return *this;
  }
  // The fill of "constant" (0 when not set).
  PadFuncOptions& value(double v) {
    value_ = v;
    return *this;
  }
  const std::vector<int64_t>& pad() const { return pad_; }
  const std::string& mode() const { return mode_; }
  std::optional<double> value() const { return value_; }

 private:
  std::vector<int64_t> pad_;
  std::string mode_ = "constant";
  std::optional<double> value_;
};

// InterpolateOptions with libtorch's setters.
class InterpolateFuncOptions {
 public:
  InterpolateFuncOptions& size(std::vector<int64_t> v) {
    options_.size = std::move(v);
    return *this;
  }
  InterpolateFuncOptions& scale_factor(std::vector<double> v) {
    options_.scale_factor = std::move(v);
    return *this;
  }
  // "nearest" (default) or "bilinear" (ember::kNearest, ember::kBilinear).
  InterpolateFuncOptions& mode(std::string v) {
    options_.mode = std::move(v);
    return *this;
  }
  InterpolateFuncOptions& align_corners(std::optional<bool> v) {
    options_.align_corners = v;
    return *this;
  }
  InterpolateFuncOptions& recompute_scale_factor(std::optional<bool> v) {
    options_.recompute_scale_factor = v;
    return *this;
  }
  const std::optional<std::vector<int64_t>>& size() const { return options_.size; }
  const std::optional<std::vector<double>>& scale_factor() const { return options_.scale_factor; }
  const std::string& mode() const { return options_.mode; }
  std::optional<bool> align_corners() const { return options_.align_corners; }
  std::optional<bool> recompute_scale_factor() const { return options_.recompute_scale_factor; }
  // The same arguments in the keyword form.
  const InterpolateOptions& keywords() const { return options_; }

 private:
  InterpolateOptions options_;
};

template <std::same_as<MaxPool2dFuncOptions> Options>
Tensor max_pool2d(const Tensor& input, const Options& options) {
  return functional::max_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                                options.ceil_mode());
}
template <std::same_as<MaxPool2dFuncOptions> Options>
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const Options& options) {
  return functional::max_pool2d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                             options.dilation(), options.ceil_mode());
}
template <std::same_as<AvgPool2dFuncOptions> Options>
Tensor avg_pool2d(const Tensor& input, const Options& options) {
  return functional::avg_pool2d(input, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                                options.count_include_pad(), options.divisor_override());
}
template <std::same_as<AdaptiveAvgPool2dFuncOptions> Options>
Tensor adaptive_avg_pool2d(const Tensor& input, const Options& options) {
  return functional::adaptive_avg_pool2d(input, options.output_size());
}
template <std::same_as<MaxPool3dFuncOptions> Options>
Tensor max_pool3d(const Tensor& input, const Options& options) {
  return functional::max_pool3d(input, options.kernel_size(), options.stride(), options.padding(), options.dilation(),
                                options.ceil_mode());
}
template <std::same_as<MaxPool3dFuncOptions> Options>
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const Options& options) {
  return functional::max_pool3d_with_indices(input, options.kernel_size(), options.stride(), options.padding(),
                                             options.dilation(), options.ceil_mode());
}
template <std::same_as<AvgPool3dFuncOptions> Options>
Tensor avg_pool3d(const Tensor& input, const Options& options) {
  return functional::avg_pool3d(input, options.kernel_size(), options.stride(), options.padding(), options.ceil_mode(),
                                options.count_include_pad(), options.divisor_override());
}
template <std::same_as<AdaptiveAvgPool3dFuncOptions> Options>
Tensor adaptive_avg_pool3d(const Tensor& input, const Options& options) {
  return functional::adaptive_avg_pool3d(input, options.output_size());
}
template <std::same_as<PadFuncOptions> Options>
Tensor pad(const Tensor& input, const Options& options) {
  return functional::pad(input, options.pad(), options.mode(), options.value());
}
template <std::same_as<InterpolateFuncOptions> Options>
Tensor interpolate(const Tensor& input, const Options& options) {
  return functional::interpolate(input, options.keywords());
}

}  // namespace ember::nn::functional
