// The options of the pooling layers, shared by the layers
// (ember/nn/modules/pooling.h) and the functions
// (ember/nn/functional/pooling.h, where F::MaxPool2dFuncOptions and friends
// name them), as libtorch's torch/nn/options. An int-list option is one
// value (both dims) or two (h, w).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ember/array_ref.h"
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

class AdaptiveAvgPool2dOptions {
 public:
  AdaptiveAvgPool2dOptions(IntArrayRef output_size)  // NOLINT: AdaptiveAvgPool2d(1)
      : output_size_(detail::per_dim("AdaptiveAvgPool2d", "output_size", output_size, 2)) {}

  const std::vector<int64_t>& output_size() const { return output_size_; }

 private:
  std::vector<int64_t> output_size_;
};

}  // namespace ember::nn
