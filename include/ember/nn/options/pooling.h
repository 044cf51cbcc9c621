// The options of the pooling layers, shared by the layers
// (ember/nn/modules/pooling.h) and the functions
// (ember/nn/functional/pooling.h, where F::MaxPool2dFuncOptions and friends
// name them), as libtorch's torch/nn/options: MaxPoolOptions<D> is
// MaxPool2dOptions (D = 2) and MaxPool3dOptions (D = 3), and so on. An
// int-list option is one value (every dim) or D values ((h, w) or (d, h, w)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/array_ref.h"
#include "ember/nn/modules/int_list.h"

namespace ember::nn {

namespace detail {
// "MaxPool2d", "AvgPool3d", ...: a layer's name from its kind and dims.
inline std::string pool_name(const char* kind, size_t dims) { return kind + std::to_string(dims) + "d"; }
}  // namespace detail

template <size_t D>
class MaxPoolOptions {
 public:
  MaxPoolOptions(IntArrayRef kernel_size)  // NOLINT: MaxPool2d(2)
      : kernel_size_(detail::per_dim(name(), "kernel_size", kernel_size, D)), stride_(kernel_size_) {}

  // Defaults to kernel_size.
  MaxPoolOptions& stride(IntArrayRef v) { return set(stride_, v, "stride"); }
  // -inf padding on each side, at most half the kernel.
  MaxPoolOptions& padding(IntArrayRef v) { return set(padding_, v, "padding"); }
  MaxPoolOptions& dilation(IntArrayRef v) { return set(dilation_, v, "dilation"); }
  // Round the output size up instead of down.
  MaxPoolOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }

  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }

  static std::string name() { return detail::pool_name("MaxPool", D); }

 private:
  MaxPoolOptions& set(std::vector<int64_t>& field, IntArrayRef v, const char* what) {
    field = detail::per_dim(name(), what, v, D);
    return *this;
  }
  std::vector<int64_t> kernel_size_, stride_, padding_ = std::vector<int64_t>(D, 0),
                                              dilation_ = std::vector<int64_t>(D, 1);
  bool ceil_mode_ = false;
};
using MaxPool2dOptions = MaxPoolOptions<2>;
using MaxPool3dOptions = MaxPoolOptions<3>;

template <size_t D>
class AvgPoolOptions {
 public:
  AvgPoolOptions(IntArrayRef kernel_size)  // NOLINT: AvgPool2d(2)
      : kernel_size_(detail::per_dim(name(), "kernel_size", kernel_size, D)), stride_(kernel_size_) {}

  // Defaults to kernel_size.
  AvgPoolOptions& stride(IntArrayRef v) { return set(stride_, v, "stride"); }
  // Zero padding on each side, at most half the kernel.
  AvgPoolOptions& padding(IntArrayRef v) { return set(padding_, v, "padding"); }
  AvgPoolOptions& ceil_mode(bool v) {
    ceil_mode_ = v;
    return *this;
  }
  // Padded positions count in the divisor.
  AvgPoolOptions& count_include_pad(bool v) {
    count_include_pad_ = v;
    return *this;
  }
  // When given (non-zero), the divisor of every window.
  AvgPoolOptions& divisor_override(std::optional<int64_t> v) {
    divisor_override_ = v;
    return *this;
  }

  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& stride() const { return stride_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }
  std::optional<int64_t> divisor_override() const { return divisor_override_; }

  static std::string name() { return detail::pool_name("AvgPool", D); }

 private:
  AvgPoolOptions& set(std::vector<int64_t>& field, IntArrayRef v, const char* what) {
    field = detail::per_dim(name(), what, v, D);
    return *this;
  }
  std::vector<int64_t> kernel_size_, stride_, padding_ = std::vector<int64_t>(D, 0);
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};
using AvgPool2dOptions = AvgPoolOptions<2>;
using AvgPool3dOptions = AvgPoolOptions<3>;

template <size_t D>
class AdaptiveAvgPoolOptions {
 public:
  AdaptiveAvgPoolOptions(IntArrayRef output_size)  // NOLINT: AdaptiveAvgPool2d(1)
      : output_size_(detail::per_dim(name(), "output_size", output_size, D)) {}

  const std::vector<int64_t>& output_size() const { return output_size_; }

  static std::string name() { return detail::pool_name("AdaptiveAvgPool", D); }

 private:
  std::vector<int64_t> output_size_;
};
using AdaptiveAvgPool2dOptions = AdaptiveAvgPoolOptions<2>;
using AdaptiveAvgPool3dOptions = AdaptiveAvgPoolOptions<3>;

}  // namespace ember::nn
