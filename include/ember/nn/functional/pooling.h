// ember::nn::functional pooling, padding and resampling, as torch.nn.functional
// (PyTorch 1.13 semantics):
//
//   namespace F = ember::nn::functional;
//   Tensor y = F::max_pool2d(x, 3, /*stride=*/2, /*padding=*/1);     // x: (N, C, H, W) or (C, H, W)
//   auto [v, i] = F::max_pool2d_with_indices(x, {2, 3});             // i: int64 flat indices into H*W
//   Tensor g = F::adaptive_avg_pool2d(x, 1);                         // global average: (N, C, 1, 1)
//   Tensor p = F::pad(x, {1, 1, 2, 0}, "reflect");                   // W by (1, 1), H by (2, 0)
//   Tensor u = F::interpolate(x, {.scale_factor = std::vector<double>{2.0}, .mode = "bilinear"});
//
// An IntArrayRef spatial argument is one value (both dims) or two (h, w).
// Pooling and bilinear take float32, float64, float16 and bfloat16 (the last
// two computed in float32); pad and nearest take every dtype. Every op here is
// differentiable to any order, and gives the same bits for any thread count.
// Bad arguments raise an ember::Error naming the op, the shapes and what was
// expected.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

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

// Pads the last dims by (left, right) pairs, the last dim first, as torch:
// mode "constant" (any number of dims, filled with `value`, default 0; a
// negative padding crops), "reflect" (mirror without repeating the edge;
// padding < the dim's size) or "replicate" (repeat the edge); the last two
// pad the last 1, 2 or 3 dims of a (K+1)-D or (K+2)-D input and take no value.
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

}  // namespace ember::nn::functional
