// ember::nn::functional — conv1d, conv2d, conv3d, conv_transpose2d, as in torch.nn.functional.
//
//   namespace F = ember::nn::functional;
//   Tensor y = F::conv2d(x, w, b, /*stride=*/1, /*padding=*/1);          // x: (N, C, H, W), w: (O, C, 3, 3)
//   Tensor z = F::conv2d(x, w, std::nullopt, 1, "same");                  // output H, W == input H, W
//   Tensor u = F::conv_transpose2d(y, wt, std::nullopt, /*stride=*/2, /*padding=*/1, /*output_padding=*/1);
//   Tensor v = F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1));   // libtorch's form
//
// Shapes: conv1d input (N, C_in, L) or (C_in, L), weight (C_out, C_in / groups, k);
// conv2d input (N, C_in, H, W) or (C_in, H, W), weight (C_out, C_in / groups, kH, kW);
// conv3d input (N, C_in, D, H, W) or (C_in, D, H, W), weight (C_out, C_in / groups, kD, kH, kW);
// conv_transpose2d input (N, C_in, H, W) or (C_in, H, W), weight (C_in, C_out / groups, kH, kW).
// bias has C_out entries. An int argument applies to every spatial dim; a list
// gives one value per dim. All four are differentiable in input, weight and
// bias, twice (the backward is itself made of convolutions).
// float32, float64, bfloat16 and float16 (the last two computed in float32).
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ember/nn/functional/options_support.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// The padding of conv1d/conv2d/conv3d: numbers (one, or one per spatial dim), or the
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

// (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out), per dim as conv1d.
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, const ConvPadding& padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);

// The gradient of conv2d with respect to its input, as a layer ("deconvolution"):
// (N, C_in, H, W) -> (N, C_out, H_out, W_out),
// H_out = (H - 1) s - 2 p + d (k - 1) + output_padding + 1; output_padding < max(s, d).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

// ---- libtorch's options forms (Note [Options forms] in options_support.h) ----

// The options of conv1d (D = 1), conv2d (D = 2) and conv3d (D = 3): the positional
// arguments after the weight, with the same defaults.
template <size_t D>
class ConvFuncOptions {
 public:
  ConvFuncOptions& bias(Tensor v) {
    bias_ = std::move(v);
    return *this;
  }
  ConvFuncOptions& stride(IntArrayRef v) {
    stride_.assign(v.begin(), v.end());
    return *this;
  }
  ConvFuncOptions& padding(ConvPadding v) {
    padding_ = std::move(v);
    return *this;
  }
  ConvFuncOptions& dilation(IntArrayRef v) {
    dilation_.assign(v.begin(), v.end());
    return *this;
  }
  ConvFuncOptions& groups(int64_t v) {
    groups_ = v;
    return *this;
  }
  const Tensor& bias() const { return bias_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const ConvPadding& padding() const { return padding_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }

 private:
  Tensor bias_;
  std::vector<int64_t> stride_{1};
  ConvPadding padding_ = 0;
  std::vector<int64_t> dilation_{1};
  int64_t groups_ = 1;
};
using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

class ConvTranspose2dFuncOptions {
 public:
  ConvTranspose2dFuncOptions& bias(Tensor v) {
    bias_ = std::move(v);
    return *this;
  }
  ConvTranspose2dFuncOptions& stride(IntArrayRef v) { return set(stride_, v); }
  ConvTranspose2dFuncOptions& padding(IntArrayRef v) { return set(padding_, v); }
  ConvTranspose2dFuncOptions& output_padding(IntArrayRef v) { return set(output_padding_, v); }
  ConvTranspose2dFuncOptions& groups(int64_t v) {
    groups_ = v;
    return *this;
  }
  ConvTranspose2dFuncOptions& dilation(IntArrayRef v) { return set(dilation_, v); }
  const Tensor& bias() const { return bias_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  const std::vector<int64_t>& output_padding() const { return output_padding_; }
  int64_t groups() const { return groups_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }

 private:
  ConvTranspose2dFuncOptions& set(std::vector<int64_t>& field, IntArrayRef v) {
    field.assign(v.begin(), v.end());
    return *this;
  }
  Tensor bias_;
  std::vector<int64_t> stride_{1}, padding_{0}, output_padding_{0};
  int64_t groups_ = 1;
  std::vector<int64_t> dilation_{1};
};

template <std::same_as<Conv1dFuncOptions> Options>
Tensor conv1d(const Tensor& input, const Tensor& weight, const Options& options) {
  return functional::conv1d(input, weight, nn::detail::optional_tensor(options.bias()), options.stride(),
                            options.padding(), options.dilation(), options.groups());
}
template <std::same_as<Conv2dFuncOptions> Options>
Tensor conv2d(const Tensor& input, const Tensor& weight, const Options& options) {
  return functional::conv2d(input, weight, nn::detail::optional_tensor(options.bias()), options.stride(),
                            options.padding(), options.dilation(), options.groups());
}
template <std::same_as<Conv3dFuncOptions> Options>
Tensor conv3d(const Tensor& input, const Tensor& weight, const Options& options) {
  return functional::conv3d(input, weight, nn::detail::optional_tensor(options.bias()), options.stride(),
                            options.padding(), options.dilation(), options.groups());
}
template <std::same_as<ConvTranspose2dFuncOptions> Options>
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Options& options) {
  return functional::conv_transpose2d(input, weight, nn::detail::optional_tensor(options.bias()),
                                      options.stride(), options.padding(), options.output_padding(),
                                      options.groups(), options.dilation());
}

}  // namespace ember::nn::functional
