// F::affine_grid and F::grid_sample (include/ember/nn/functional/vision.h).
//
// Note [grid_sample as a composite]
// Both are written with differentiable ember ops, so autograd gives the
// gradients of the input, the grid and theta (and second derivatives) with
// no formula of their own. grid_sample follows PyTorch's CPU kernel step by step:
//   1. each grid coordinate is unnormalised to a pixel position:
//      (c + 1) / 2 * (size - 1) with align_corners, ((c + 1) * size - 1) / 2 without;
//   2. padding "border" clamps it to [0, size - 1]; "reflection" reflects it
//      about the edges (the corner centres with align_corners, the outer edges
//      without), then clamps; "zeros" leaves it;
//   3. bilinear (trilinear) reads the 2^k neighbours floor(p) and floor(p) + 1
//      per dim, weighted by (1 - frac) and frac, frac = p - floor(p) (floor is
//      detached, so d frac / d p = 1); nearest reads round(p) (ties to even).
//      A neighbour outside the input reads 0. The reads are one gather over
//      the flattened spatial dims per neighbour, whose derivative scatters
//      the gradient back into the input.
#include "ember/nn/functional/vision.h"

#include <vector>

#include "ember/error.h"
#include "ember/ops.h"

namespace ember::nn::functional {

namespace {

// PyTorch's linspace_from_neg_one: `steps` normalised coordinates of one dim.
Tensor base_coords(int64_t steps, bool align_corners, const TensorOptions& options) {
  if (steps == 1) return zeros({1}, options);
  const Tensor r = linspace(-1, 1, steps, options);
  return align_corners ? r : r * (static_cast<double>(steps - 1) / static_cast<double>(steps));
}

// Position p reflected into [twice_low / 2, twice_high / 2], as PyTorch's reflect_coordinates.
Tensor reflect(const Tensor& p, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return p * 0.0;
  const double low = static_cast<double>(twice_low) / 2, span = static_cast<double>(twice_high - twice_low) / 2;
  const Tensor a = (p - low).abs();
  const Tensor extra = a.remainder(Scalar(span));
  const Tensor even = (a / span).floor().detach().remainder(Scalar(2.0)).eq(Scalar(0.0));
  return where(even, extra + low, (extra * -1.0) + (span + low));
}

// The pixel position of normalised coordinates c along a dim of `size` (steps 1 and 2 of the Note).
Tensor source_position(const Tensor& c, int64_t size, std::string_view padding, bool align_corners) {
  const double s = static_cast<double>(size);
  Tensor p = align_corners ? (c + 1.0) * ((s - 1) / 2) : ((c + 1.0) * s - 1.0) / 2.0;
  if (padding == "zeros") return p;
  if (padding == "reflection") p = align_corners ? reflect(p, 0, 2 * (size - 1)) : reflect(p, -1, 2 * size - 1);
  return p.clamp(Scalar(0.0), Scalar(s - 1));
}

}  // namespace

Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners) {
  EMBER_CHECK(size.size() == 4 || size.size() == 5,
              "affine_grid: expected a size (N, C, H, W) or (N, C, D, H, W), got ", size);
  const int64_t k = static_cast<int64_t>(size.size()) - 2;
  EMBER_CHECK(theta.is_floating_point(), "affine_grid: expected a floating-point theta, got ", theta.dtype());
  EMBER_CHECK(theta.dim() == 3 && theta.size(0) == size[0] && theta.size(1) == k && theta.size(2) == k + 1,
              "affine_grid: expected theta of shape [", size[0], ", ", k, ", ", k + 1, "] for size ", size, ", got ",
              theta.sizes());
  const std::vector<int64_t> spatial(size.begin() + 2, size.end());
  for (int64_t s : spatial)
    EMBER_CHECK(s > 0, "affine_grid: expected positive spatial sizes, got size ", size);
  const TensorOptions options = theta.options();
  TensorList columns;  // x (the last dim), y, [z], then ones
  for (int64_t j = 0; j < k; ++j) {
    const size_t d = static_cast<size_t>(k - 1 - j);
    std::vector<int64_t> shape(spatial.size(), 1);
    shape[d] = spatial[d];
    columns.push_back(base_coords(spatial[d], align_corners, options).reshape(shape).expand(spatial));
  }
  columns.push_back(ones(spatial, options));
  int64_t points = 1;
  for (int64_t s : spatial) points *= s;
  const Tensor base = stack(columns, -1).reshape({points, k + 1});
  std::vector<int64_t> out_shape{size[0]};
  out_shape.insert(out_shape.end(), spatial.begin(), spatial.end());
  out_shape.push_back(k);
  return base.matmul(theta.transpose(1, 2)).reshape(out_shape);  // (N, points, k)
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, std::string_view mode, std::string_view padding_mode,
                   bool align_corners) {
  EMBER_CHECK(mode == "bilinear" || mode == "nearest", "grid_sample: mode must be \"bilinear\" or \"nearest\", got \"",
              mode, "\"");
  EMBER_CHECK(padding_mode == "zeros" || padding_mode == "border" || padding_mode == "reflection",
              "grid_sample: padding_mode must be \"zeros\", \"border\" or \"reflection\", got \"", padding_mode, "\"");
  EMBER_CHECK(input.dim() == 4 || input.dim() == 5,
              "grid_sample: expected a 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, got shape ", input.sizes());
  const int64_t k = input.dim() - 2, N = input.size(0), C = input.size(1);
  EMBER_CHECK(grid.dim() == input.dim() && grid.size(0) == N && grid.size(-1) == k, "grid_sample: expected a grid of ",
              k == 2 ? "shape (N, Ho, Wo, 2)" : "shape (N, Do, Ho, Wo, 3)", " with N = ", N, " for input shape ",
              input.sizes(), ", got ", grid.sizes());
  EMBER_CHECK(input.is_floating_point() && grid.dtype() == input.dtype(),
              "grid_sample: expected input and grid of the same floating dtype, got ", input.dtype(), " and ",
              grid.dtype());
  std::vector<int64_t> in_size, out_size;
  int64_t in_points = 1, out_points = 1;
  for (int64_t d = 0; d < k; ++d) {
    in_size.push_back(input.size(2 + d));
    out_size.push_back(grid.size(1 + d));
    in_points *= in_size.back();
    out_points *= out_size.back();
    EMBER_CHECK(in_size.back() > 0, "grid_sample: expected non-empty spatial dims, got input shape ", input.sizes());
  }
  const Tensor flat = input.reshape({N, C, in_points});
  // Pixel positions per spatial dim (D, H, W order), each (N, 1, out_points); grid[..., 0] is x.
  std::vector<Tensor> pos;
  for (int64_t d = 0; d < k; ++d) {
    const Tensor c = grid.select(-1, k - 1 - d).reshape({N, 1, out_points});
    pos.push_back(source_position(c, in_size[static_cast<size_t>(d)], padding_mode, align_corners));
  }
  // The input at integer positions idx (detached, one per dim), 0 outside, times `weight` when defined.
  auto read = [&](const std::vector<Tensor>& idx, const Tensor& weight) {
    Tensor linear, inside;
    for (int64_t d = 0; d < k; ++d) {
      const double last = static_cast<double>(in_size[static_cast<size_t>(d)] - 1);
      const Tensor& p = idx[static_cast<size_t>(d)];
      const Tensor in_d = p.ge(Scalar(0.0)).logical_and(p.le(Scalar(last)));
      const Tensor i = p.clamp(Scalar(0.0), Scalar(last)).to(kInt64);
      inside = inside.defined() ? inside.logical_and(in_d) : in_d;
      linear = linear.defined() ? linear * in_size[static_cast<size_t>(d)] + i : i;
    }
    const Tensor w = weight.defined() ? weight * inside.to(input.dtype()) : inside.to(input.dtype());
    return flat.gather(2, linear.expand({N, C, out_points})) * w;
  };
  Tensor out;
  if (mode == "nearest") {
    std::vector<Tensor> idx;
    for (const Tensor& p : pos) idx.push_back(p.detach().round());
    out = read(idx, Tensor());
  } else {
    std::vector<Tensor> low, frac;
    for (const Tensor& p : pos) {
      low.push_back(p.detach().floor());
      frac.push_back(p - low.back());
    }
    for (int64_t corner = 0; corner < (int64_t{1} << k); ++corner) {
      std::vector<Tensor> idx;
      Tensor w;
      for (int64_t d = 0; d < k; ++d) {
        const bool high = (corner >> (k - 1 - d)) & 1;
        const size_t u = static_cast<size_t>(d);
        idx.push_back(high ? low[u] + 1.0 : low[u]);
        const Tensor wd = high ? frac[u] : (frac[u] * -1.0) + 1.0;
        w = w.defined() ? w * wd : wd;
      }
      const Tensor term = read(idx, w);
      out = out.defined() ? out + term : term;
    }
  }
  std::vector<int64_t> shape{N, C};
  shape.insert(shape.end(), out_size.begin(), out_size.end());
  return out.reshape(shape);
}

}  // namespace ember::nn::functional
