// The 2-D pooling references (pool_reference.h): plain loops over planes,
// output rows and columns, and window rows and columns.
#include "kernels/cpu/pool/pool_reference.h"

#include <cmath>

#include "kernels/reference_values.h"

namespace ember::cpu {
namespace {

using reference::Values;

// x as planes of H x W: (C, H, W) or (N, C, H, W).
struct Planes {
  int64_t count = 1, h = 0, w = 0;
  std::vector<int64_t> leading;  // the dims before H, W
};
Planes planes_of(const Values& x, const char* op) {
  EMBER_CHECK(x.dim() == 3 || x.dim() == 4, op, ": expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got ",
              IntArrayRef(x.sizes));
  Planes p;
  for (int64_t d = 0; d < x.dim() - 2; ++d) {
    p.count *= x.size(d);
    p.leading.push_back(x.size(d));
  }
  p.h = x.size(x.dim() - 2);
  p.w = x.size(x.dim() - 1);
  return p;
}

// The (height, width) pair of a 1- or 2-value argument; `fallback` when empty.
std::pair<int64_t, int64_t> pair_of(const std::vector<int64_t>& v, const std::vector<int64_t>& fallback, const char* op,
                                    const char* name) {
  if (v.empty() && !fallback.empty()) return pair_of(fallback, fallback, op, name);
  EMBER_CHECK(v.size() == 1 || v.size() == 2, op, ": expected ", name, " to have 1 or 2 values, got ", IntArrayRef(v));
  return {v[0], v.size() == 1 ? v[0] : v[1]};
}

// One spatial dim of a window: output i covers input positions start + t * dilation, t < kernel.
struct Axis {
  int64_t in, kernel, stride, pad, dilation, out;
};
Axis axis_of(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation, bool ceil_mode,
             const char* op) {
  EMBER_CHECK(kernel > 0 && stride > 0 && dilation > 0 && pad >= 0 && 2 * pad <= (kernel - 1) * dilation + 1, op,
              ": expected kernel, stride, dilation > 0 and padding at most half the dilated kernel, got kernel ",
              kernel, ", stride ", stride, ", padding ", pad, ", dilation ", dilation);
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;  // the last window start that fits
  EMBER_CHECK(span >= 0, op, ": the window (kernel ", kernel, ", dilation ", dilation,
              ") is larger than the padded input (", in, " + 2 * ", pad, ")");
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;  // the last window must start inside the input or left pad
  return {in, kernel, stride, pad, dilation, out};
}

std::pair<Axis, Axis> window_axes(const Planes& pl, const Pool2dParams& p, int64_t dilation_h, int64_t dilation_w,
                                  const char* op) {
  const auto [kh, kw] = pair_of(p.kernel, p.kernel, op, "kernel_size");
  const auto [sh, sw] = pair_of(p.stride, p.kernel, op, "stride");
  const auto [ph, pw] = pair_of(p.padding, {0}, op, "padding");
  return {axis_of(pl.h, kh, sh, ph, dilation_h, p.ceil_mode, op),
          axis_of(pl.w, kw, sw, pw, dilation_w, p.ceil_mode, op)};
}

std::vector<int64_t> out_sizes(const Planes& pl, int64_t oh, int64_t ow) {
  std::vector<int64_t> s = pl.leading;
  s.push_back(oh);
  s.push_back(ow);
  return s;
}

}  // namespace

std::vector<Tensor> max_pool2d_reference(const Tensor& x, const Pool2dParams& p) {
  const char* op = "max_pool2d";
  reference::check_dtype(x, op);
  const Values v = reference::read(x, op);
  const Planes pl = planes_of(v, op);
  const auto [dh, dw] = pair_of(p.dilation, {1}, op, "dilation");
  const auto [ah, aw] = window_axes(pl, p, dh, dw, op);
  std::vector<double> values, indices;
  for (int64_t c = 0; c < pl.count; ++c) {
    for (int64_t i = 0; i < ah.out; ++i) {
      for (int64_t j = 0; j < aw.out; ++j) {
        double best = -INFINITY;
        int64_t best_at = -1;
        for (int64_t s = 0; s < ah.kernel; ++s) {
          for (int64_t t = 0; t < aw.kernel; ++t) {
            const int64_t h = i * ah.stride - ah.pad + s * ah.dilation, w = j * aw.stride - aw.pad + t * aw.dilation;
            if (h < 0 || h >= pl.h || w < 0 || w >= pl.w) continue;  // padding
            const double e = v.v[(c * pl.h + h) * pl.w + w];
            if (best_at < 0 || (!std::isnan(best) && (e > best || std::isnan(e)))) {
              best = e;
              best_at = h * pl.w + w;
            }
          }
        }
        values.push_back(best);
        indices.push_back(static_cast<double>(best_at));
      }
    }
  }
  const std::vector<int64_t> sizes = out_sizes(pl, ah.out, aw.out);
  return {reference::write(sizes, values, x.dtype()), reference::write(sizes, indices, DType::Int64)};
}

Tensor avg_pool2d_reference(const Tensor& x, const Pool2dParams& p, bool count_include_pad,
                            std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  reference::check_dtype(x, op);
  EMBER_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor_override must be non-zero");
  const Values v = reference::read(x, op);
  const Planes pl = planes_of(v, op);
  const auto [ah, aw] = window_axes(pl, p, 1, 1, op);
  std::vector<double> out;
  for (int64_t c = 0; c < pl.count; ++c) {
    for (int64_t i = 0; i < ah.out; ++i) {
      for (int64_t j = 0; j < aw.out; ++j) {
        // The window clipped to the padded input, then to the input.
        const int64_t h0 = i * ah.stride - ah.pad, w0 = j * aw.stride - aw.pad;
        const int64_t h1 = std::min(h0 + ah.kernel, pl.h + ah.pad), w1 = std::min(w0 + aw.kernel, pl.w + aw.pad);
        const int64_t padded_count = (h1 - h0) * (w1 - w0);
        long double sum = 0;
        int64_t count = 0;
        for (int64_t h = std::max<int64_t>(h0, 0); h < std::min(h1, pl.h); ++h) {
          for (int64_t w = std::max<int64_t>(w0, 0); w < std::min(w1, pl.w); ++w) {
            sum += v.v[(c * pl.h + h) * pl.w + w];
            ++count;
          }
        }
        const int64_t divisor = divisor_override ? *divisor_override : count_include_pad ? padded_count : count;
        out.push_back(static_cast<double>(sum / divisor));
      }
    }
  }
  return reference::write(out_sizes(pl, ah.out, aw.out), out, x.dtype());
}

Tensor adaptive_avg_pool2d_reference(const Tensor& x, const std::vector<int64_t>& output_size) {
  const char* op = "adaptive_avg_pool2d";
  reference::check_dtype(x, op);
  const Values v = reference::read(x, op);
  const Planes pl = planes_of(v, op);
  EMBER_CHECK(pl.h > 0 && pl.w > 0 && v.size(v.dim() - 3) > 0, op,
              ": expected non-zero C, H and W (only the batch may be empty), got shape ", IntArrayRef(v.sizes));
  const auto [oh, ow] = pair_of(output_size, output_size, op, "output_size");
  EMBER_CHECK(oh >= 0 && ow >= 0, op, ": expected a non-negative output_size, got ", IntArrayRef(output_size));
  auto start = [](int64_t i, int64_t in, int64_t out) { return i * in / out; };
  auto end = [](int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; };
  std::vector<double> out;
  for (int64_t c = 0; c < pl.count; ++c) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        long double sum = 0;
        int64_t count = 0;
        for (int64_t h = start(i, pl.h, oh); h < end(i, pl.h, oh); ++h) {
          for (int64_t w = start(j, pl.w, ow); w < end(j, pl.w, ow); ++w) {
            sum += v.v[(c * pl.h + h) * pl.w + w];
            ++count;
          }
        }
        out.push_back(static_cast<double>(sum / count));
      }
    }
  }
  return reference::write(out_sizes(pl, oh, ow), out, x.dtype());
}

}  // namespace ember::cpu
