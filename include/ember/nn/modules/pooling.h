// ember::nn pooling layers, as torch.nn: MaxPool2d, AvgPool2d, AdaptiveAvgPool2d.
//
//   namespace nn = ember::nn;
//   nn::MaxPool2d pool(2);                                            // (N, C, H, W) -> (N, C, H/2, W/2)
//   nn::MaxPool2d pool3(nn::MaxPool2dOptions(3).stride(2).padding(1));
//   nn::AvgPool2d avg(nn::AvgPool2dOptions({2, 3}).count_include_pad(false));
//   nn::AdaptiveAvgPool2d gap(1);                                     // global average: (N, C, 1, 1)
//
// An int-list option is one value (both dims) or two (h, w). No parameters;
// the arithmetic is F::max_pool2d / avg_pool2d / adaptive_avg_pool2d
// (ember/nn/functional/pooling.h), on (N, C, H, W) or (C, H, W) inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/modules/int_list.h"

namespace ember::nn {

class MaxPool2dOptions {
 public:
  MaxPool2dOptions(IntArrayRef kernel_size)  // NOLINT: MaxPool2d(2)
      : kernel_size_(detail::per_dim("MaxPool2d", "kernel_size", kernel_size, 2)), stride_(kernel_size_) {}

  // Defaults to kernel_size.
  MaxPool2dOptions& stride(IntArrayRef v) { return set(stride_, v, "stride"); }
  // -inf padding on each side, at most half the kernel.
  MaxPool2dOptions& padding(IntArrayRef v) { return set(padding_, v, "padding"); }
  MaxPool2dOptions& dilation(IntArrayRef v) { return set(dilation_, v, "dilation"); }
  // Round the output size up instead of down.
  MaxPool2dOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }

  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }

 private:
  MaxPool2dOptions& set(std::vector<int64_t>& field, IntArrayRef v, const char* what) {
    field = detail::per_dim("MaxPool2d", what, v, 2);
    return *this;
  }
  std::vector<int64_t> kernel_size_, stride_, padding_{0, 0}, dilation_{1, 1};
  bool ceil_mode_ = false;
};

class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(MaxPool2dOptions options) : Module("MaxPool2d"), options(std::move(options)) {}
  explicit MaxPool2dImpl(IntArrayRef kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}

  Tensor forward(const Tensor& input);
  // The maxima and their int64 positions h * W + w in each input plane
  // (PyTorch's return_indices=True).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  // "MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=false)"
  void pretty_print(std::ostream& os) const override;

  const MaxPool2dOptions options;
};
EMBER_MODULE(MaxPool2d);

class AvgPool2dOptions {
 public:
  AvgPool2dOptions(IntArrayRef kernel_size)  // NOLINT: AvgPool2d(2)
      : kernel_size_(detail::per_dim("AvgPool2d", "kernel_size", kernel_size, 2)), stride_(kernel_size_) {}

  // Defaults to kernel_size.
  AvgPool2dOptions& stride(IntArrayRef v) { return set(stride_, v, "stride"); }
  // Zero padding on each side, at most half the kernel.
  AvgPool2dOptions& padding(IntArrayRef v) { return set(padding_, v, "padding"); }
  AvgPool2dOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }
  // Padded positions count in the divisor.
  AvgPool2dOptions& count_include_pad(bool v) {
    count_include_pad_ = v;
    return *this;
  }
  // When given (non-zero), the divisor of every window.
  AvgPool2dOptions& divisor_override(std::optional<int64_t> v) {
    divisor_override_ = v;
    return *this;
  }

  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }
  std::optional<int64_t> divisor_override() const { return divisor_override_; }

 private:
  AvgPool2dOptions& set(std::vector<int64_t>& field, IntArrayRef v, const char* what) {
    field = detail::per_dim("AvgPool2d", what, v, 2);
    return *this;
  }
  std::vector<int64_t> kernel_size_, stride_, padding_{0, 0};
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(AvgPool2dOptions options) : Module("AvgPool2d"), options(std::move(options)) {}
  explicit AvgPool2dImpl(IntArrayRef kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}

  Tensor forward(const Tensor& input);
  // "AvgPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0])"
  void pretty_print(std::ostream& os) const override;

  const AvgPool2dOptions options;
};
EMBER_MODULE(AvgPool2d);

class AdaptiveAvgPool2dOptions {
 public:
  AdaptiveAvgPool2dOptions(IntArrayRef output_size)  // NOLINT: AdaptiveAvgPool2d(1)
      : output_size_(detail::per_dim("AdaptiveAvgPool2d", "output_size", output_size, 2)) {}

  const std::vector<int64_t>& output_size() const { return output_size_; }

 private:
  std::vector<int64_t> output_size_;
};

// (N, C, H, W) -> (N, C, oh, ow): output i averages input rows
// [floor(i H / oh), ceil((i + 1) H / oh)), and the same for columns.
class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions options)
      : Module("AdaptiveAvgPool2d"), options(std::move(options)) {}
  explicit AdaptiveAvgPool2dImpl(IntArrayRef output_size)
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}

  Tensor forward(const Tensor& input);
  // "AdaptiveAvgPool2d(output_size=[1, 1])"
  void pretty_print(std::ostream& os) const override;

  const AdaptiveAvgPool2dOptions options;
};
EMBER_MODULE(AdaptiveAvgPool2d);

}  // namespace ember::nn
