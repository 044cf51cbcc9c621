// Pooling on CPU: max_pool2d (values only, or with indices), avg_pool2d and
// their backward ops; adaptive_avg_pool2d is in adaptive_pooling.cpp.
//
// Note [Pooling loops]
// An input is [C, H, W] or [N, C, H, W]. The kernels read a contiguous copy
// as P = N*C independent planes of H*W elements and hand the thread pool a
// fixed number of planes per chunk (chosen from the plane size, never from
// the thread count).
//   forward   each output element is computed by one thread from its own
//             window, in row-major window order;
//   backward  a chunk owns whole planes of the gradient input: it zeroes
//             them and scatters its outputs' gradients into them, walking
//             the outputs in order (max, adaptive), or has each input element
//             gather from the windows covering it (avg: written once, no
//             zeroing pass). No two threads ever add into the same element,
//             so the sums are the same bits for any thread count.
// The loops are scalar loops over the window, as in PyTorch's NCHW kernels
// (for NCHW a window row is only kw elements, and neighbouring windows start
// `stride` apart), with window bounds computed once per output row and
// column, not per element. What makes them fast is keeping many independent
// chains in flight: max pooling selects instead of branching and runs 64
// interior outputs side by side (see max_pool_planes), or, for 2x2 windows
// with stride 2, a vector of outputs (max_pool_2x2_planes); adaptive pooling sums
// long windows in 16 partial sums (contiguous_sum). Both keep a fixed order
// per output, so results do not depend on threads. f16/bf16 compute in float
// and round once; their backward ops accumulate a plane in float, then round.
//
// Window rules (PyTorch 1.13):
//   output size  floor((in + 2 pad - dilation (k - 1) - 1 [+ stride - 1 with
//                ceil_mode]) / stride) + 1, minus one with ceil_mode when the
//                last window would start in the right padding;
//   max          the window's first position starts at -inf; an element wins
//                when it is larger or NaN (so NaN propagates, and the last NaN
//                of the window is the one whose index is returned); indices
//                are flat positions h * W + w in the input plane;
//   avg          the window is clipped to the padded input [-pad, in + pad)
//                (that count is the divisor with count_include_pad), then to
//                the input (the divisor without); divisor_override replaces
//                both; a window wholly in the padding gives 0;
//   adaptive     output i averages [floor(i in / out), ceil((i + 1) in / out)),
//                divided by the window height, then by its width.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_pooling.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/pool/pool_planes.h"
#include "kernels/cpu/pool/pool_windows.h"
#include "kernels/cpu/vec/vec.h"

namespace ember {

namespace {

using cpu::AvgSpan;
using cpu::acc_t;
using cpu::check_grad_shape;
using cpu::Pair;
using cpu::pair_arg;
using cpu::Planes;
using cpu::planes_of;
using cpu::planes_per_chunk;
using cpu::scatter_planes;
using cpu::Span;
using cpu::with_spatial;

struct Pool2d {
  Planes in;
  Pair kernel, stride, pad, dilation;
  int64_t out_h, out_w;
};

Pool2d pool_geometry(const char* op, IntArrayRef input, IntArrayRef kernel_size, IntArrayRef stride,
                     IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Pool2d g{};
  g.kernel = pair_arg(kernel_size, op, "kernel_size");
  g.stride = stride.empty() ? g.kernel : pair_arg(stride, op, "stride");
  g.pad = pair_arg(padding, op, "padding");
  g.dilation = pair_arg(dilation, op, "dilation");
  EMBER_CHECK(g.kernel.h > 0 && g.kernel.w > 0, op, ": kernel_size must be positive, got ", kernel_size);
  EMBER_CHECK(g.stride.h > 0 && g.stride.w > 0, op, ": stride must be positive (not zero), got ", stride);
  EMBER_CHECK(g.dilation.h > 0 && g.dilation.w > 0, op, ": dilation must be positive, got ", dilation);
  EMBER_CHECK(g.pad.h >= 0 && g.pad.w >= 0, op, ": padding must be non-negative, got ", padding);
  EMBER_CHECK(g.pad.h <= g.kernel.h / 2 && g.pad.w <= g.kernel.w / 2, op,
              ": padding must be at most half of the kernel size, got padding ", padding, " for kernel_size ",
              kernel_size);
  g.in = planes_of(input, op);
  g.out_h = cpu::pooled_size(g.in.h, g.kernel.h, g.pad.h, g.stride.h, g.dilation.h, ceil_mode);
  g.out_w = cpu::pooled_size(g.in.w, g.kernel.w, g.pad.w, g.stride.w, g.dilation.w, ceil_mode);
  EMBER_CHECK(g.out_h >= 1 && g.out_w >= 1, op, ": the kernel is larger than the padded input: input shape ", input,
              " with kernel_size ", kernel_size, ", padding ", padding, " and dilation ", dilation,
              " gives an output of ", g.out_h, "x", g.out_w, " (output size is too small)");
  return g;
}



// ---- max_pool2d ----

// One tap of the max: an element wins when it is larger or NaN. Branch-free
// (selects, not jumps): on real data the comparison is unpredictable.
template <class A>
inline void max_tap(A v, int64_t at, A& best, int64_t& where) {
  const bool take = (v > best) | (v != v);
  best = take ? v : best;
  where = take ? at : where;
}

// The output columns whose windows lie wholly inside the input: [lo, hi).
Span interior_columns(const Pool2d& g) {
  const int64_t reach = (g.kernel.w - 1) * g.dilation.w + 1;
  int64_t lo = 0, hi = g.out_w;
  while (lo < hi && lo * g.stride.w - g.pad.w < 0) ++lo;
  while (hi > lo && (hi - 1) * g.stride.w - g.pad.w + reach > g.in.w) --hi;
  return {lo, hi};
}

// (P, H, W) -> values (P, OH, OW) and, with kIndices, indices (P, OH, OW) into H*W.
// Interior columns go in blocks: the taps loop outside, the block's outputs
// inside, so the block's independent max chains overlap instead of each
// output waiting on its own compare-select chain. Each output still visits
// its taps in window order, so NaN and tie handling are unchanged.
template <class T, bool kIndices>
void max_pool_planes(const T* in, T* out, int64_t* indices, const Pool2d& g, int64_t begin, int64_t end) {
  using A = acc_t<T>;
  constexpr int64_t kBlock = 64;
  const int64_t W = g.in.w, plane = g.in.h * W, out_plane = g.out_h * g.out_w;
  const std::vector<Span> hs = cpu::max_spans(g.out_h, g.in.h, g.kernel.h, g.stride.h, g.pad.h, g.dilation.h);
  const std::vector<Span> ws = cpu::max_spans(g.out_w, W, g.kernel.w, g.stride.w, g.pad.w, g.dilation.w);
  const Span inner = interior_columns(g);
  const int64_t dh = g.dilation.h, dw = g.dilation.w, sw = g.stride.w, pw = g.pad.w;
  A best[kBlock];
  int64_t where[kBlock];
  for (int64_t p = begin; p < end; ++p) {
    const T* x = in + p * plane;
    T* y = out + p * out_plane;
    int64_t* yi = kIndices ? indices + p * out_plane : nullptr;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const Span h = hs[oh];
      auto one = [&](int64_t ow) {  // an edge column, tap by tap
        const Span w = ws[ow];
        A b = -std::numeric_limits<A>::infinity();
        int64_t at = h.begin * W + w.begin;
        for (int64_t ih = h.begin; ih < h.end; ih += dh) {
          for (int64_t iw = w.begin; iw < w.end; iw += dw) max_tap(static_cast<A>(x[ih * W + iw]), ih * W + iw, b, at);
        }
        y[oh * g.out_w + ow] = static_cast<T>(b);
        if constexpr (kIndices) yi[oh * g.out_w + ow] = at;
      };
      for (int64_t ow = 0; ow < inner.begin; ++ow) one(ow);
      for (int64_t b0 = inner.begin; b0 < inner.end; b0 += kBlock) {
        const int64_t n = std::min(kBlock, inner.end - b0);
        for (int64_t k = 0; k < n; ++k) {
          best[k] = -std::numeric_limits<A>::infinity();
          where[k] = h.begin * W + (b0 + k) * sw - pw;
        }
        for (int64_t ih = h.begin; ih < h.end; ih += dh) {
          const T* row = x + ih * W;
          for (int64_t j = 0; j < g.kernel.w; ++j) {
            const int64_t first = b0 * sw - pw + j * dw;  // the column of tap j of output b0
            for (int64_t k = 0; k < n; ++k) {
              const int64_t iw = first + k * sw;
              max_tap(static_cast<A>(row[iw]), ih * W + iw, best[k], where[k]);
            }
          }
        }
        for (int64_t k = 0; k < n; ++k) {
          y[oh * g.out_w + b0 + k] = static_cast<T>(best[k]);
          if constexpr (kIndices) yi[oh * g.out_w + b0 + k] = where[k];
        }
      }
      for (int64_t ow = std::max(inner.end, inner.begin); ow < g.out_w; ++ow) one(ow);
    }
  }
}

// The usual CNN downsampling window, 2x2 with stride 2 and no padding or
// dilation, on float, float16 or bfloat16: VecF::kLanes outputs of a row at
// once. Each input row pair is split into even and odd columns, so every
// output's four taps are lanes of four vectors, compared in window order with
// max_tap's rule (same values, NaNs and tie-breaking indices as
// max_pool_planes). float16/bfloat16 rows are widened into float first and
// the maxima narrowed back, both exact (each maximum is one of the inputs).
bool is_2x2_stride_2(const Pool2d& g) {
  return g.kernel.h == 2 && g.kernel.w == 2 && g.stride.h == 2 && g.stride.w == 2 && g.pad.h == 0 &&
         g.pad.w == 0 && g.dilation.h == 1 && g.dilation.w == 1 && 2 * g.out_h <= g.in.h && 2 * g.out_w <= g.in.w;
}

template <class T, bool kIndices>
void max_pool_2x2_planes(const T* in, T* out, int64_t* indices, const Pool2d& g, int64_t begin, int64_t end) {
  using cpu::vec::VecF;
  constexpr int kLanes = VecF::kLanes;
  constexpr bool kWiden = !std::is_same_v<T, float>;
  const int64_t W = g.in.w, plane = g.in.h * W, out_plane = g.out_h * g.out_w;
  std::vector<float> wide(kWiden ? 2 * W + g.out_w : 0);  // two input rows, then one output row
  for (int64_t p = begin; p < end; ++p) {
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const float* top;
      float* y;
      if constexpr (kWiden) {
        const T* rows = in + p * plane + 2 * oh * W;
        for (int64_t i = 0; i < 2 * W; ++i) wide[i] = static_cast<float>(rows[i]);
        top = wide.data();
        y = wide.data() + 2 * W;
      } else {
        top = in + p * plane + 2 * oh * W;
        y = out + p * out_plane + oh * g.out_w;
      }
      for (int64_t ow = 0; ow < g.out_w; ow += kLanes) {
        const int n = static_cast<int>(std::min<int64_t>(kLanes, g.out_w - ow));
        const int first_half = std::min(2 * n, kLanes), second_half = 2 * n - first_half;
        VecF taps[4];  // window order: (top, left), (top, right), (bottom, left), (bottom, right)
        for (int row = 0; row < 2; ++row) {
          const float* x = top + row * W + 2 * ow;
          cpu::vec::deinterleave(VecF::load_partial(x, first_half), VecF::load_partial(x + kLanes, second_half),
                            taps[2 * row], taps[2 * row + 1]);
        }
        VecF best = taps[0], tap = VecF(0.0f);
        for (int t = 1; t < 4; ++t) {
          const cpu::vec::MaskF take = (taps[t] > best) | (taps[t] != taps[t]);
          best = cpu::vec::blend(take, taps[t], best);
          if constexpr (kIndices) tap = cpu::vec::blend(take, VecF(static_cast<float>(t)), tap);
        }
        best.store_partial(y + ow, n);
        if constexpr (kIndices) {
          float won[kLanes];
          tap.store(won);
          int64_t* yi = indices + p * out_plane + oh * g.out_w + ow;
          for (int k = 0; k < n; ++k) {
            const int t = static_cast<int>(won[k]);
            yi[k] = (2 * oh + t / 2) * W + 2 * (ow + k) + t % 2;
          }
        }
      }
      if constexpr (kWiden) {
        T* narrow = out + p * out_plane + oh * g.out_w;
        for (int64_t ow = 0; ow < g.out_w; ++ow) narrow[ow] = static_cast<T>(y[ow]);
      }
    }
  }
}

TensorPair max_pool2d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const Pool2d g =
      pool_geometry("max_pool2d_with_indices", self.sizes(), kernel_size, stride, padding, dilation, ceil_mode);
  const DimVector shape = with_spatial(self.sizes(), g.out_h, g.out_w);
  Tensor out = make_empty(shape, self.dtype(), self.device());
  Tensor indices = make_empty(shape, DType::Int64, self.device());
  if (out.numel() == 0) return {out, indices};
  const Tensor x = self.contiguous();
  const int64_t work = g.out_h * g.out_w * g.kernel.h * g.kernel.w;
  dispatch_floating(self.dtype(), "max_pool2d_with_indices", [&]<class T>() {
    parallel_for(0, g.in.count, planes_per_chunk(work), [&](int64_t b, int64_t e) {
      if constexpr (!std::is_same_v<T, double>) {
        if (is_2x2_stride_2(g)) {
          max_pool_2x2_planes<T, true>(x.data_ptr<T>(), out.data_ptr<T>(), indices.data_ptr<int64_t>(), g, b, e);
          return;
        }
      }
      max_pool_planes<T, true>(x.data_ptr<T>(), out.data_ptr<T>(), indices.data_ptr<int64_t>(), g, b, e);
    });
  });
  return {out, indices};
}

Tensor max_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      IntArrayRef dilation, bool ceil_mode) {
  const Pool2d g = pool_geometry("max_pool2d", self.sizes(), kernel_size, stride, padding, dilation, ceil_mode);
  Tensor out = make_empty(with_spatial(self.sizes(), g.out_h, g.out_w), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const int64_t work = g.out_h * g.out_w * g.kernel.h * g.kernel.w;
  dispatch_floating(self.dtype(), "max_pool2d", [&]<class T>() {
    parallel_for(0, g.in.count, planes_per_chunk(work), [&](int64_t b, int64_t e) {
      if constexpr (!std::is_same_v<T, double>) {
        if (is_2x2_stride_2(g)) {
          max_pool_2x2_planes<T, false>(x.data_ptr<T>(), out.data_ptr<T>(), nullptr, g, b, e);
          return;
        }
      }
      max_pool_planes<T, false>(x.data_ptr<T>(), out.data_ptr<T>(), nullptr, g, b, e);
    });
  });
  return out;
}

// grad_output (P, OH, OW), indices (P, OH, OW) -> grad_input with input_size.
Tensor max_pool2d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& indices, IntArrayRef input_size) {
  const char* op = "max_pool2d_with_indices_backward";
  const Planes in = planes_of(input_size, op);
  EMBER_CHECK(indices.dtype() == DType::Int64, op, ": expected int64 indices, got ", indices.dtype());
  EMBER_CHECK(grad_output.sizes() == indices.sizes(), op, ": grad_output shape ", grad_output.sizes(),
              " differs from the indices' shape ", indices.sizes());
  EMBER_CHECK(grad_output.dim() == static_cast<int64_t>(input_size.size()) &&
                  IntArrayRef(with_spatial(grad_output.sizes(), in.h, in.w)) == input_size,
              op, ": grad_output shape ", grad_output.sizes(), " does not match the input shape ", input_size,
              " outside the last two dims");
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous(), idx = indices.contiguous();
  const int64_t plane = in.h * in.w, out_plane = g.size(-1) * g.size(-2);
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = acc_t<T>;
    scatter_planes<T>(g, grad_input, in, out_plane, [&](int64_t p, const T* go, A* gi) {
      const int64_t* ix = idx.data_ptr<int64_t>() + p * out_plane;
      for (int64_t k = 0; k < out_plane; ++k) {
        const int64_t i = ix[k];
        EMBER_CHECK(i >= 0 && i < plane, op, ": index ", i, " is outside the input plane of ", in.h, "x", in.w);
        gi[i] += static_cast<A>(go[k]);
      }
    });
  });
  return grad_input;
}

// ---- avg_pool2d ----

struct AvgPool2d {
  Pool2d g;
  std::vector<AvgSpan> hs, ws;
  bool count_include_pad;
  std::optional<int64_t> divisor_override;

  int64_t divisor(const AvgSpan& h, const AvgSpan& w) const {
    if (divisor_override) return *divisor_override;
    return count_include_pad ? h.padded * w.padded : (h.end - h.begin) * (w.end - w.begin);
  }
};

AvgPool2d avg_geometry(const char* op, IntArrayRef input, IntArrayRef kernel_size, IntArrayRef stride,
                       IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                       std::optional<int64_t> divisor_override) {
  EMBER_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor_override must not be zero");
  const int64_t one = 1;
  AvgPool2d a{pool_geometry(op, input, kernel_size, stride, padding, IntArrayRef(&one, 1), ceil_mode),
              {},
              {},
              count_include_pad,
              divisor_override};
  a.hs = cpu::avg_spans(a.g.out_h, a.g.in.h, a.g.kernel.h, a.g.stride.h, a.g.pad.h);
  a.ws = cpu::avg_spans(a.g.out_w, a.g.in.w, a.g.kernel.w, a.g.stride.w, a.g.pad.w);
  return a;
}

// (P, H, W) -> (P, OH, OW).
template <class T>
void avg_pool_planes(const T* in, T* out, const AvgPool2d& a, int64_t begin, int64_t end) {
  using A = acc_t<T>;
  const Pool2d& g = a.g;
  const int64_t W = g.in.w, plane = g.in.h * W, out_plane = g.out_h * g.out_w;
  for (int64_t p = begin; p < end; ++p) {
    const T* x = in + p * plane;
    T* y = out + p * out_plane;
    for (int64_t oh = 0; oh < g.out_h; ++oh) {
      const AvgSpan& h = a.hs[oh];
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
        const AvgSpan& w = a.ws[ow];
        if (h.begin >= h.end || w.begin >= w.end) {  // wholly in the padding (ceil_mode)
          y[oh * g.out_w + ow] = T(0);
          continue;
        }
        A sum = 0;
        for (int64_t ih = h.begin; ih < h.end; ++ih) {
          for (int64_t iw = w.begin; iw < w.end; ++iw) sum += static_cast<A>(x[ih * W + iw]);
        }
        y[oh * g.out_w + ow] = static_cast<T>(sum / static_cast<A>(a.divisor(h, w)));
      }
    }
  }
}

Tensor avg_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const AvgPool2d a = avg_geometry("avg_pool2d", self.sizes(), kernel_size, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override);
  Tensor out = make_empty(with_spatial(self.sizes(), a.g.out_h, a.g.out_w), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const int64_t work = a.g.out_h * a.g.out_w * a.g.kernel.h * a.g.kernel.w;
  dispatch_floating(self.dtype(), "avg_pool2d", [&]<class T>() {
    parallel_for(0, a.g.in.count, planes_per_chunk(work),
                 [&](int64_t b, int64_t e) { avg_pool_planes<T>(x.data_ptr<T>(), out.data_ptr<T>(), a, b, e); });
  });
  return out;
}

// For each input position along one dim, the outputs whose windows cover it:
// [lo, hi) (window starts and ends never decrease, so the range is contiguous).
std::vector<Span> covering_outputs(const std::vector<AvgSpan>& spans, int64_t in) {
  std::vector<Span> cover(static_cast<size_t>(in), Span{0, 0});
  for (int64_t o = 0; o < static_cast<int64_t>(spans.size()); ++o) {
    for (int64_t i = spans[o].begin; i < spans[o].end; ++i) {
      if (cover[i].end == 0) cover[i].begin = o;
      cover[i].end = o + 1;
    }
  }
  return cover;
}

// The backward of avg_pool2d as a gather: each input element sums
// grad_output / divisor over the windows that cover it, in (oh, ow) order,
// and is written once (no zeroing pass, no scatter).
Tensor avg_pool2d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  const AvgPool2d a =
      avg_geometry(op, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_grad_shape(op, grad_output, input_size, a.g.out_h, a.g.out_w);
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous();
  const int64_t H = a.g.in.h, W = a.g.in.w, OH = a.g.out_h, OW = a.g.out_w;
  const std::vector<Span> rows = covering_outputs(a.hs, H), cols = covering_outputs(a.ws, W);
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = acc_t<T>;
    parallel_for(0, a.g.in.count, planes_per_chunk(H * W + OH * OW), [&](int64_t b, int64_t e) {
      std::vector<A> scaled(static_cast<size_t>(OH * OW));  // grad_output / divisor, per window
      for (int64_t p = b; p < e; ++p) {
        const T* go = g.data_ptr<T>() + p * OH * OW;
        for (int64_t oh = 0; oh < OH; ++oh) {
          for (int64_t ow = 0; ow < OW; ++ow) {
            const AvgSpan &h = a.hs[oh], &w = a.ws[ow];
            const bool empty = h.begin >= h.end || w.begin >= w.end;
            scaled[oh * OW + ow] =
                empty ? A(0) : static_cast<A>(go[oh * OW + ow]) / static_cast<A>(a.divisor(h, w));
          }
        }
        T* gi = grad_input.data_ptr<T>() + p * H * W;
        for (int64_t ih = 0; ih < H; ++ih) {
          const Span r = rows[ih];
          for (int64_t iw = 0; iw < W; ++iw) {
            const Span c = cols[iw];
            A sum = 0;
            for (int64_t oh = r.begin; oh < r.end; ++oh) {
              for (int64_t ow = c.begin; ow < c.end; ++ow) sum += scaled[oh * OW + ow];
            }
            gi[ih * W + iw] = static_cast<T>(sum);
          }
        }
      }
    });
  });
  return grad_input;
}

}  // namespace

void register_cpu_pooling_kernels() {
  op::max_pool2d.impl(DispatchKey::CPU, kFloatingDTypes, &max_pool2d_cpu, "cpu::max_pool2d");
  op::max_pool2d_with_indices.impl(DispatchKey::CPU, kFloatingDTypes, &max_pool2d_with_indices_cpu,
                                   "cpu::max_pool2d_with_indices");
  op::max_pool2d_with_indices_backward.impl(DispatchKey::CPU, kFloatingDTypes, &max_pool2d_with_indices_backward_cpu,
                                            "cpu::max_pool2d_with_indices_backward");
  op::avg_pool2d.impl(DispatchKey::CPU, kFloatingDTypes, &avg_pool2d_cpu, "cpu::avg_pool2d");
  op::avg_pool2d_backward.impl(DispatchKey::CPU, kFloatingDTypes, &avg_pool2d_backward_cpu, "cpu::avg_pool2d_backward");
}

}  // namespace ember
