// The options of Unfold and Fold, shared by the layers
// (ember/nn/modules/fold.h) and the functions (ember/nn/functional/fold.h,
// where F::UnfoldFuncOptions and F::FoldFuncOptions name them), as libtorch's
// torch/nn/options. An int-list option is one value (both dims) or two (h, w).
#pragma once

#include <cstdint>
#include <vector>

#include "ember/array_ref.h"
#include "ember/nn/modules/int_list.h"

namespace ember::nn {

class UnfoldOptions {
 public:
  UnfoldOptions(IntArrayRef kernel_size)  // NOLINT: Unfold(2)
      : kernel_size_(detail::per_dim("Unfold", "kernel_size", kernel_size, 2)) {}

  UnfoldOptions& dilation(IntArrayRef v) { return set(dilation_, v, "dilation"); }
  // Zero padding on each side of the input.
  UnfoldOptions& padding(IntArrayRef v) { return set(padding_, v, "padding"); }
  UnfoldOptions& stride(IntArrayRef v) { return set(stride_, v, "stride"); }

  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  const std::vector<int64_t>& stride() const { return stride_; }

 private:
  UnfoldOptions& set(std::vector<int64_t>& field, IntArrayRef v, const char* what) {
    field = detail::per_dim("Unfold", what, v, 2);
    return *this;
  }
  std::vector<int64_t> kernel_size_, dilation_{1, 1}, padding_{0, 0}, stride_{1, 1};
};

class FoldOptions {
 public:
  FoldOptions(IntArrayRef output_size, IntArrayRef kernel_size)
      : output_size_(detail::per_dim("Fold", "output_size", output_size, 2)),
        kernel_size_(detail::per_dim("Fold", "kernel_size", kernel_size, 2)) {}

  FoldOptions& dilation(IntArrayRef v) { return set(dilation_, v, "dilation"); }
  // The padding the columns were unfolded with (it is cut off again).
  FoldOptions& padding(IntArrayRef v) { return set(padding_, v, "padding"); }
  FoldOptions& stride(IntArrayRef v) { return set(stride_, v, "stride"); }

  const std::vector<int64_t>& output_size() const { return output_size_; }
  const std::vector<int64_t>& kernel_size() const { return kernel_size_; }
  const std::vector<int64_t>& dilation() const { return dilation_; }
  const std::vector<int64_t>& padding() const { return padding_; }
  const std::vector<int64_t>& stride() const { return stride_; }

 private:
  FoldOptions& set(std::vector<int64_t>& field, IntArrayRef v, const char* what) {
    field = detail::per_dim("Fold", what, v, 2);
    return *this;
  }
  std::vector<int64_t> output_size_, kernel_size_, dilation_{1, 1}, padding_{0, 0}, stride_{1, 1};
};

}  // namespace ember::nn
