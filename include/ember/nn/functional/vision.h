// Spatial transformer sampling, as torch.nn.functional: affine_grid builds a
// sampling grid from affine matrices, grid_sample reads an input at the
// grid's points.
//
//   namespace F = ember::nn::functional;
//   Tensor grid = F::affine_grid(theta, {N, C, 32, 32});          // theta (N, 2, 3) -> (N, 32, 32, 2)
//   Tensor y = F::grid_sample(x, grid, "bilinear", "border");     // x (N, C, H, W) -> (N, C, 32, 32)
//   Tensor z = F::grid_sample(x, grid, F::GridSampleFuncOptions().mode(ember::kNearest).align_corners(true));
//
// Grid points are normalised: -1 and 1 are the centres of the corner pixels
// with align_corners, their outer edges without. Both are composites of
// differentiable ember ops (docs/nn.md), so the input, the grid and theta get
// gradients, second derivatives included.
#pragma once

#include <concepts>
#include <optional>
#include <string>
#include <string_view>

#include "ember/array_ref.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// theta (N, 2, 3) with size (N, C, H, W) -> grid (N, H, W, 2); theta (N, 3, 4)
// with size (N, C, D, H, W) -> grid (N, D, H, W, 3). Point (x, y[, z], 1) of
// the base grid maps to theta (x, y[, z], 1)^T.
Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners = false);

// input (N, C, H, W) and grid (N, Ho, Wo, 2) -> (N, C, Ho, Wo); or input
// (N, C, D, H, W) and grid (N, Do, Ho, Wo, 3) -> (N, C, Do, Ho, Wo). grid[..., 0]
// is x (the width), grid[..., 1] y, grid[..., 2] z. mode "bilinear" (trilinear
// for 5-D) or "nearest" (ties to even); padding_mode "zeros", "border" or
// "reflection" decides what points outside the input read.
Tensor grid_sample(const Tensor& input, const Tensor& grid, std::string_view mode = "bilinear",
                   std::string_view padding_mode = "zeros", bool align_corners = false);

// libtorch's options form of grid_sample.
class GridSampleFuncOptions {
 public:
  GridSampleFuncOptions& mode(std::string v) {
    mode_ = std::move(v);
    return *this;
  }
  GridSampleFuncOptions& padding_mode(std::string v) {
    padding_mode_ = std::move(v);
    return *this;
  }
  GridSampleFuncOptions& align_corners(std::optional<bool> v) {
    align_corners_ = v;
    return *this;
  }
  const std::string& mode() const { return mode_; }
  const std::string& padding_mode() const { return padding_mode_; }
  std::optional<bool> align_corners() const { return align_corners_; }

 private:
  std::string mode_ = "bilinear";
  std::string padding_mode_ = "zeros";
  std::optional<bool> align_corners_;  // unset: false, as PyTorch's None
};

template <std::same_as<GridSampleFuncOptions> Options>
Tensor grid_sample(const Tensor& input, const Tensor& grid, const Options& o) {
  return grid_sample(input, grid, o.mode(), o.padding_mode(), o.align_corners().value_or(false));
}

}  // namespace ember::nn::functional
