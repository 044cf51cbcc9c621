// Resampling on CPU: upsample_nearest2d, upsample_bilinear2d and their
// backward ops (F::interpolate's kernels).
//
// Note [Upsampling]
// Input [N, C, H, W], output [N, C, OH, OW]. Each output row and column maps
// to source positions through PyTorch 1.13's index formulas, computed once
// per dim (not per element):
//   scale    with a scale factor s > 0 given: 1 / s; else in / out;
//            bilinear with align_corners: (in - 1) / (out - 1), 0 if out == 1;
//   nearest  src = min(floor(dst * scale), in - 1), in float as torch does
//            (dst when out == in, dst / 2 when out == 2 in);
//   bilinear src = scale * dst with align_corners, else
//            max(scale * (dst + 0.5) - 0.5, 0); it reads i0 = floor(src) and
//            i1 = min(i0 + 1, in - 1) with weights 1 - l and l = src - i0
//            (i0 and l clamped to the input, as torch 2.x guards them);
//            a dim whose size does not change is copied (weights 1, 0).
// The forward loops are parallel over output rows; bilinear combines the
// four taps as (x00 w0 + x01 w1) h0 + (x10 w0 + x11 w1) h1. The backward ops
// scatter each output gradient into its source taps; a chunk owns whole
// planes of the gradient input and walks the outputs in order, so the sums
// are the same for any thread count. f16/bf16 compute in float.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_pooling.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {

namespace {

constexpr int64_t kChunkElements = int64_t{1} << 15;

// The input's [N, C, H, W] as planes, and the output's spatial size.
struct Resample {
  int64_t planes, in_h, in_w, out_h, out_w;
  DimVector in_shape, out_shape;
};

Resample resample_geometry(const char* op, IntArrayRef input, IntArrayRef output_size) {
  EMBER_CHECK(input.size() == 4, op, ": expected a 4-D [N, C, H, W] input, got shape ", input);
  EMBER_CHECK(output_size.size() == 2, op, ": output_size must be two ints (h, w), got ", output_size);
  EMBER_CHECK(input[1] > 0 && input[2] > 0 && input[3] > 0 && output_size[0] > 0 && output_size[1] > 0, op,
              ": input and output sizes must be greater than 0, got input shape ", input, " and output size ",
              output_size);
  Resample r{input[0] * input[1], input[2],         input[3],        output_size[0],
             output_size[1],      DimVector(input), DimVector(input)};
  r.out_shape[2] = output_size[0];
  r.out_shape[3] = output_size[1];
  return r;
}

// torch's compute_scales_value: the index scale from a scale factor (> 0) or the sizes.
template <class A>
A index_scale(double scale_factor, int64_t in, int64_t out) {
  return scale_factor > 0 ? static_cast<A>(1.0 / scale_factor) : static_cast<A>(in) / static_cast<A>(out);
}

// ---- nearest ----

std::vector<int64_t> nearest_sources(int64_t in, int64_t out, double scale_factor) {
  std::vector<int64_t> s(static_cast<size_t>(out));
  const float scale = index_scale<float>(scale_factor, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in)
      s[o] = o;
    else if (out == 2 * in)
      s[o] = o >> 1;
    else
      s[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in - 1);
  }
  return s;
}

Tensor upsample_nearest2d_cpu(const Tensor& self, IntArrayRef output_size, double scales_h, double scales_w) {
  const char* op = "upsample_nearest2d";
  const Resample r = resample_geometry(op, self.sizes(), output_size);
  Tensor out = make_empty(r.out_shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const std::vector<int64_t> sh = nearest_sources(r.in_h, r.out_h, scales_h),
                             sw = nearest_sources(r.in_w, r.out_w, scales_w);
  dispatch_width(self.element_size(), [&]<class U>() {
    const U* in = static_cast<const U*>(x.data_ptr());
    U* y = static_cast<U*>(out.data_ptr());
    parallel_for(0, r.planes * r.out_h, std::max<int64_t>(1, kChunkElements / r.out_w), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {  // row indexes (plane, oh)
        const int64_t p = row / r.out_h, oh = row % r.out_h;
        const U* src = in + (p * r.in_h + sh[oh]) * r.in_w;
        U* dst = y + row * r.out_w;
        for (int64_t ow = 0; ow < r.out_w; ++ow) dst[ow] = src[sw[ow]];
      }
    });
  });
  return out;
}

// Runs `scatter(plane index, grad plane, accumulator plane)` over the planes
// of grad_input, accumulators zeroed and in float for f16/bf16.
template <class T, class F>
void scatter_planes(const Tensor& grad, Tensor& grad_input, const Resample& r, F scatter) {
  using A = opmath_t<T>;
  const int64_t plane = r.in_h * r.in_w, out_plane = r.out_h * r.out_w;
  parallel_for(0, r.planes, std::max<int64_t>(1, kChunkElements / (plane + out_plane)), [&](int64_t b, int64_t e) {
    std::vector<A> scratch(std::is_same_v<T, A> ? 0 : static_cast<size_t>(plane));
    for (int64_t p = b; p < e; ++p) {
      T* gi = grad_input.data_ptr<T>() + p * plane;
      A* acc = std::is_same_v<T, A> ? reinterpret_cast<A*>(gi) : scratch.data();
      std::fill(acc, acc + plane, A(0));
      scatter(grad.data_ptr<T>() + p * out_plane, acc);
      if constexpr (!std::is_same_v<T, A>) std::copy(acc, acc + plane, gi);
    }
  });
}

// The backward ops take the forward input's shape; grad_output fixes the output size.
Resample backward_geometry(const char* op, const Tensor& grad_output, IntArrayRef input_size) {
  EMBER_CHECK(grad_output.dim() == 4, op, ": expected a 4-D grad_output, got shape ", grad_output.sizes());
  const int64_t out_hw[2] = {grad_output.size(2), grad_output.size(3)};
  const Resample r = resample_geometry(op, input_size, IntArrayRef(out_hw, 2));
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(r.out_shape), op, ": grad_output shape ", grad_output.sizes(),
              " does not match the input shape ", input_size, " in the batch and channel dims");
  return r;
}

Tensor upsample_nearest2d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, double scales_h,
                                       double scales_w) {
  const char* op = "upsample_nearest2d_backward";
  const Resample r = backward_geometry(op, grad_output, input_size);
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous();
  const std::vector<int64_t> sh = nearest_sources(r.in_h, r.out_h, scales_h),
                             sw = nearest_sources(r.in_w, r.out_w, scales_w);
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    scatter_planes<T>(g, grad_input, r, [&](const T* go, A* gi) {
      for (int64_t oh = 0; oh < r.out_h; ++oh) {
        A* row = gi + sh[oh] * r.in_w;
        const T* gr = go + oh * r.out_w;
        for (int64_t ow = 0; ow < r.out_w; ++ow) row[sw[ow]] += static_cast<A>(gr[ow]);
      }
    });
  });
  return grad_input;
}

// ---- bilinear ----

template <class A>
struct Taps {
  std::vector<int64_t> i0, i1;
  std::vector<A> l0, l1;
};

template <class A>
Taps<A> linear_taps(int64_t in, int64_t out, bool align_corners, double scale_factor) {
  Taps<A> t;
  t.i0.resize(static_cast<size_t>(out));
  t.i1.resize(static_cast<size_t>(out));
  t.l0.resize(static_cast<size_t>(out));
  t.l1.resize(static_cast<size_t>(out));
  const A scale = align_corners ? (out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0))
                                : index_scale<A>(scale_factor, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) {
      t.i0[o] = t.i1[o] = o;
      t.l0[o] = 1;
      t.l1[o] = 0;
      continue;
    }
    A src = align_corners ? scale * static_cast<A>(o) : scale * (static_cast<A>(o) + A(0.5)) - A(0.5);
    if (src < 0) src = 0;
    // A scale factor given by the caller may point past the input: stay on the last tap.
    const int64_t i0 = std::min(static_cast<int64_t>(src), in - 1);
    t.i0[o] = i0;
    t.i1[o] = i0 + (i0 < in - 1 ? 1 : 0);
    t.l1[o] = std::min(src - static_cast<A>(i0), A(1));
    t.l0[o] = A(1) - t.l1[o];
  }
  return t;
}

Tensor upsample_bilinear2d_cpu(const Tensor& self, IntArrayRef output_size, bool align_corners, double scales_h,
                               double scales_w) {
  const char* op = "upsample_bilinear2d";
  const Resample r = resample_geometry(op, self.sizes(), output_size);
  Tensor out = make_empty(r.out_shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    const Taps<A> th = linear_taps<A>(r.in_h, r.out_h, align_corners, scales_h);
    const Taps<A> tw = linear_taps<A>(r.in_w, r.out_w, align_corners, scales_w);
    const T* in = x.data_ptr<T>();
    T* y = out.data_ptr<T>();
    parallel_for(0, r.planes * r.out_h, std::max<int64_t>(1, kChunkElements / r.out_w), [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {  // row indexes (plane, oh)
        const int64_t p = row / r.out_h, oh = row % r.out_h;
        const T* r0 = in + (p * r.in_h + th.i0[oh]) * r.in_w;
        const T* r1 = in + (p * r.in_h + th.i1[oh]) * r.in_w;
        const A h0 = th.l0[oh], h1 = th.l1[oh];
        T* dst = y + row * r.out_w;
        for (int64_t ow = 0; ow < r.out_w; ++ow) {
          const int64_t w0 = tw.i0[ow], w1 = tw.i1[ow];
          const A top = static_cast<A>(r0[w0]) * tw.l0[ow] + static_cast<A>(r0[w1]) * tw.l1[ow];
          const A bottom = static_cast<A>(r1[w0]) * tw.l0[ow] + static_cast<A>(r1[w1]) * tw.l1[ow];
          dst[ow] = static_cast<T>(top * h0 + bottom * h1);
        }
      }
    });
  });
  return out;
}

Tensor upsample_bilinear2d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, bool align_corners,
                                        double scales_h, double scales_w) {
  const char* op = "upsample_bilinear2d_backward";
  const Resample r = backward_geometry(op, grad_output, input_size);
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous();
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    const Taps<A> th = linear_taps<A>(r.in_h, r.out_h, align_corners, scales_h);
    const Taps<A> tw = linear_taps<A>(r.in_w, r.out_w, align_corners, scales_w);
    scatter_planes<T>(g, grad_input, r, [&](const T* go, A* gi) {
      for (int64_t oh = 0; oh < r.out_h; ++oh) {
        A* r0 = gi + th.i0[oh] * r.in_w;
        A* r1 = gi + th.i1[oh] * r.in_w;
        const A h0 = th.l0[oh], h1 = th.l1[oh];
        const T* gr = go + oh * r.out_w;
        for (int64_t ow = 0; ow < r.out_w; ++ow) {
          const A v = static_cast<A>(gr[ow]);
          const int64_t w0 = tw.i0[ow], w1 = tw.i1[ow];
          r0[w0] += h0 * tw.l0[ow] * v;
          r0[w1] += h0 * tw.l1[ow] * v;
          r1[w0] += h1 * tw.l0[ow] * v;
          r1[w1] += h1 * tw.l1[ow] * v;
        }
      }
    });
  });
  return grad_input;
}

}  // namespace

void register_cpu_upsample_kernels() {
  op::upsample_nearest2d.impl(DispatchKey::CPU, kAllDTypes, &upsample_nearest2d_cpu, "cpu::upsample_nearest2d");
  op::upsample_nearest2d_backward.impl(DispatchKey::CPU, kFloatingDTypes, &upsample_nearest2d_backward_cpu,
                                       "cpu::upsample_nearest2d_backward");
  op::upsample_bilinear2d.impl(DispatchKey::CPU, kFloatingDTypes, &upsample_bilinear2d_cpu, "cpu::upsample_bilinear2d");
  op::upsample_bilinear2d_backward.impl(DispatchKey::CPU, kFloatingDTypes, &upsample_bilinear2d_backward_cpu,
                                        "cpu::upsample_bilinear2d_backward");
}

}  // namespace ember
