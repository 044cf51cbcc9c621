// ember::nn convolution layers, as torch.nn: Conv1d, Conv2d, Conv3d, ConvTranspose2d.
//
//   namespace nn = ember::nn;
//   nn::Conv2d conv(nn::Conv2dOptions(1, 32, 3).stride(1).padding(1));   // x (N, 1, H, W) -> (N, 32, H, W)
//   nn::Conv2d same(nn::Conv2dOptions(32, 32, {3, 5}).padding("same").bias(false));
//   nn::Conv1d c1(16, 8, 3);                                              // plain arguments work too
//   nn::Conv3d c3(nn::Conv3dOptions(4, 8, {3, 3, 3}).padding(1).padding_mode(ember::kCircular));
//   nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(32, 16, 2).stride(2));
//
// Parameters, as PyTorch names and shapes them: "weight" (out, in / groups, k...)
// (ConvTranspose2d: (in, out / groups, kH, kW)) and "bias" (out), absent with
// bias(false). They start as PyTorch's do: kaiming_uniform_(weight, a = sqrt(5)),
// that is U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the bias from the same range,
// with fan_in = weight.size(1) * prod(kernel_size). The arithmetic is
// F::conv1d / F::conv2d / F::conv3d / F::conv_transpose2d (ember/nn/functional/conv.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ember/nn/functional/conv.h"
#include "ember/nn/module.h"
#include "ember/nn/modules/int_list.h"

namespace ember::nn {

// The arguments of Conv1d (D = 1), Conv2d (D = 2) and Conv3d (D = 3). An int argument applies
// to every spatial dim; a list gives one value per dim.
template <size_t D>
class ConvOptions {
 public:
  ConvOptions(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(detail::per_dim(layer_name(), "kernel_size", kernel_size, D)) {}

  ConvOptions& stride(IntArrayRef v) { return set(stride_, detail::per_dim(layer_name(), "stride", v, D)); }
  // Numbers (per dim), "valid" (none) or "same" (the output keeps the input's size; stride 1 only).
  ConvOptions& padding(functional::ConvPadding v) { return set(padding_, std::move(v)); }
  ConvOptions& dilation(IntArrayRef v) { return set(dilation_, detail::per_dim(layer_name(), "dilation", v, D)); }
  ConvOptions& groups(int64_t v) { return set(groups_, v); }
  ConvOptions& bias(bool v) { return set(bias_, v); }
  // What the padding is filled with: "zeros" (default), "reflect", "replicate" or "circular" (see F::pad).
  ConvOptions& padding_mode(std::string v) { return set(padding_mode_, std::move(v)); }

  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const functional::ConvPadding& padding() const { return padding_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }
  const std::string& padding_mode() const { return padding_mode_; }

  // "Conv1d", "Conv2d" or "Conv3d".
  static std::string layer_name() { return "Conv" + std::to_string(D) + "d"; }

 private:
  template <class T, class V>
  ConvOptions& set(T& field, V&& value) {
    field = std::forward<V>(value);
    return *this;
  }
  int64_t in_channels_, out_channels_;
  std::vector<int64_t> kernel_size_;
  std::vector<int64_t> stride_ = std::vector<int64_t>(D, 1);
  functional::ConvPadding padding_ = 0;
  std::vector<int64_t> dilation_ = std::vector<int64_t>(D, 1);
  int64_t groups_ = 1;
  bool bias_ = true;
  std::string padding_mode_ = "zeros";
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;

// The layer behind Conv1d, Conv2d and Conv3d (instantiated for D = 1, 2 and 3 in nn/modules_conv.cpp).
template <size_t D>
class ConvNdImpl : public Module {
 public:
  explicit ConvNdImpl(ConvOptions<D> options);
  ConvNdImpl(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size)
      : ConvNdImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}

  // (N, in_channels, *spatial) or unbatched (in_channels, *spatial) -> (N, out_channels, *spatial_out).
  Tensor forward(const Tensor& input);
  // Draws weight and bias again with the default init.
  void reset_parameters();
  // "Conv2d(3, 4, kernel_size=[3, 2], stride=[2, 1], padding=[1, 1])": what differs from the defaults.
  void pretty_print(std::ostream& os) const override;

  const ConvOptions<D> options;
  Tensor& weight;
  Tensor& bias;  // undefined with bias(false)
};

class Conv1dImpl : public ConvNdImpl<1> {
 public:
  using ConvNdImpl<1>::ConvNdImpl;
};
class Conv2dImpl : public ConvNdImpl<2> {
 public:
  using ConvNdImpl<2>::ConvNdImpl;
};
class Conv3dImpl : public ConvNdImpl<3> {
 public:
  using ConvNdImpl<3>::ConvNdImpl;
};
EMBER_MODULE(Conv1d);
EMBER_MODULE(Conv2d);
EMBER_MODULE(Conv3d);

// The arguments of ConvTranspose2d. Padding is numbers only; the padding is zeros.
class ConvTranspose2dOptions {
 public:
  ConvTranspose2dOptions(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(detail::per_dim("ConvTranspose2d", "kernel_size", kernel_size, 2)) {}

  ConvTranspose2dOptions& stride(IntArrayRef v) { return set(stride_, v, "stride"); }
  // Each side of the output loses `padding` rows/columns (the padding of the Conv2d this inverts).
  ConvTranspose2dOptions& padding(IntArrayRef v) { return set(padding_, v, "padding"); }
  // Extra rows/columns on the bottom/right of the output (< max(stride, dilation)), to pick
  // among the input sizes a strided Conv2d maps to the same output size.
  ConvTranspose2dOptions& output_padding(IntArrayRef v) { return set(output_padding_, v, "output_padding"); }
  ConvTranspose2dOptions& dilation(IntArrayRef v) { return set(dilation_, v, "dilation"); }
  ConvTranspose2dOptions& groups(int64_t v) {
    groups_ = v;
    return *this;
  }
  ConvTranspose2dOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }

  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  const std::vector<int64_t>& output_padding() const { return output_padding_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

 private:
  ConvTranspose2dOptions& set(std::vector<int64_t>& field, IntArrayRef v, const char* what) {
    field = detail::per_dim("ConvTranspose2d", what, v, 2);
    return *this;
  }
  int64_t in_channels_, out_channels_;
  std::vector<int64_t> kernel_size_;
  std::vector<int64_t> stride_{1, 1}, padding_{0, 0}, output_padding_{0, 0}, dilation_{1, 1};
  int64_t groups_ = 1;
  bool bias_ = true;
};

class ConvTranspose2dImpl : public Module {
 public:
  explicit ConvTranspose2dImpl(ConvTranspose2dOptions options);
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, IntArrayRef kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}

  // (N, in_channels, H, W) or (in_channels, H, W) -> (N, out_channels, H_out, W_out),
  // H_out = (H - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1.
  Tensor forward(const Tensor& input);
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;

  const ConvTranspose2dOptions options;
  Tensor& weight;  // (in_channels, out_channels / groups, kH, kW)
  Tensor& bias;
};
EMBER_MODULE(ConvTranspose2d);

}  // namespace ember::nn
