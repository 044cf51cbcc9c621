// ember::nn::functional — conv1d, conv2d, conv_transpose2d, as in torch.nn.functional.
//
//   namespace F = ember::nn::functional;
//   Tensor y = F::conv2d(x, w, b, /*stride=*/1, /*padding=*/1);          // x: (N, C, H, W), w: (O, C, 3, 3)
//   Tensor z = F::conv2d(x, w, std::nullopt, 1, "same");                  // output H, W == input H, W
//   Tensor u = F::conv_transpose2d(y, wt, std::nullopt, /*stride=*/2, /*padding=*/1, /*output_padding=*/1);
//
// Shapes: conv1d input (N, C_in, L) or (C_in, L), weight (C_out, C_in / groups, k);
// conv2d input (N, C_in, H, W) or (C_in, H, W), weight (C_out, C_in / groups, kH, kW);
// conv_transpose2d input (N, C_in, H, W) or (C_in, H, W), weight (C_in, C_out / groups, kH, kW).
// bias has C_out entries. An int argument applies to every spatial dim; a list
// gives one value per dim. All three are differentiable in input, weight and
// bias, twice (the backward is itself made of convolutions).
// float32, float64, bfloat16 and float16 (the last two computed in float32).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::nn::functional {

// The padding of conv1d/conv2d: numbers (one, or one per spatial dim), or the
// string "valid" (no padding) or "same" (the output has the input's size; only
// with stride 1; when the total padding dilation * (k - 1) is odd the extra
// zero goes to the right/bottom, as in PyTorch).
class ConvPadding {
 public:
  ConvPadding(int value) : values_{value} {}                                  // NOLINT
  ConvPadding(int64_t value) : values_{value} {}                              // NOLINT
  ConvPadding(std::initializer_list<int64_t> values) : values_(values) {}     // NOLINT
  ConvPadding(IntArrayRef values) : values_(values.begin(), values.end()) {}  // NOLINT
  ConvPadding(const char* mode) : mode_(mode) {}                              // NOLINT
  ConvPadding(std::string_view mode) : mode_(mode) {}                         // NOLINT
  bool is_mode() const { return !mode_.empty(); }
  const std::string& mode() const { return mode_; }  // "same" or "valid" when is_mode()
  const std::vector<int64_t>& values() const { return values_; }

 private:
  std::vector<int64_t> values_;
  std::string mode_;
};

// (N, C_in, L) -> (N, C_out, L_out), L_out = (L + 2 p - d (k - 1) - 1) / s + 1.
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, const ConvPadding& padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);

// (N, C_in, H, W) -> (N, C_out, H_out, W_out), per dim as conv1d. groups == C_in
// with C_out a multiple of it is a depthwise convolution.
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, const ConvPadding& padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);

// The gradient of conv2d with respect to its input, as a layer ("deconvolution"):
// (N, C_in, H, W) -> (N, C_out, H_out, W_out),
// H_out = (H - 1) s - 2 p + d (k - 1) + output_padding + 1; output_padding < max(s, d).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

}  // namespace ember::nn::functional
