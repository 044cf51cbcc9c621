// 3-D pooling on CPU: max_pool3d_with_indices, avg_pool3d, adaptive_avg_pool3d
// and their backward ops (core/op_decls_pooling.h).
//
// Note [3-D pooling]
// An input is [C, D, H, W] or [N, C, D, H, W], read (contiguous) as P = N*C
// independent volumes of D*H*W elements. The window rules are those of the
// 2-D kernels, one more dim (Note [Pooling loops] in pooling.cpp, the
// arithmetic in pool_windows.h): max takes the first tap inside the input as
// its start and an element wins when larger or NaN, indices are flat
// positions (d * H + h) * W + w in the volume; avg clips the window to the
// padded input (the count_include_pad divisor) and then to the input (the
// other), a window wholly in the padding giving 0; adaptive divides the sum
// by the window's depth, then height, then width, as torch does.
// The forward loops are plain loops over each output's window, in (d, h, w)
// order, threads splitting the volumes. Every backward op is a scatter: a
// chunk of threads owns whole volumes of the gradient input, zeroes them and
// adds its outputs' gradients into them in output order, so the sums are the
// same bits for any thread count. f16/bf16 compute in float and round once.
#include <algorithm>
#include <array>
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

namespace ember {

namespace {

using cpu::AvgSpan;
using cpu::Span;
using Triple = std::array<int64_t, 3>;  // (depth, height, width)

using cpu::acc_t;
using cpu::planes_per_chunk;  // a volume is what a plane is to the 2-D kernels: the unit of chunking

// (d, h, w) from a list of one int (every dim) or three.
Triple triple_arg(IntArrayRef v, const char* op, const char* what) {
  EMBER_CHECK(v.size() == 1 || v.size() == 3, op, ": ", what, " must be one int or three ints (d, h, w), got ", v);
  return v.size() == 1 ? Triple{v[0], v[0], v[0]} : Triple{v[0], v[1], v[2]};
}

// An input viewed as volumes: [C, D, H, W] or [N, C, D, H, W].
struct Volumes {
  int64_t count;
  Triple size;
  int64_t elements() const { return size[0] * size[1] * size[2]; }
};

Volumes volumes_of(IntArrayRef sizes, const char* op) {
  EMBER_CHECK(sizes.size() == 4 || sizes.size() == 5, op,
              ": expected a 4-D [C, D, H, W] or 5-D [N, C, D, H, W] input, got shape ", sizes);
  const size_t n = sizes.size();
  EMBER_CHECK(sizes[n - 4] > 0 && sizes[n - 3] > 0 && sizes[n - 2] > 0 && sizes[n - 1] > 0, op,
              ": expected non-zero C, D, H and W (only the batch may be empty), got shape ", sizes);
  return {n == 5 ? sizes[0] * sizes[1] : sizes[0], {sizes[n - 3], sizes[n - 2], sizes[n - 1]}};
}

// `sizes` with its last three dims replaced.
DimVector with_volume(IntArrayRef sizes, const Triple& v) {
  DimVector out(sizes);
  for (size_t a = 0; a < 3; ++a) out[out.size() - 3 + a] = v[a];
  return out;
}

int64_t product(const Triple& v) { return v[0] * v[1] * v[2]; }

// The window geometry of max_pool3d and avg_pool3d, checked as PyTorch does.
struct Pool3d {
  Volumes in;
  Triple kernel, stride, pad, dilation, out;
};

Pool3d pool_geometry(const char* op, IntArrayRef input, IntArrayRef kernel_size, IntArrayRef stride,
                     IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  Pool3d g{};
  g.kernel = triple_arg(kernel_size, op, "kernel_size");
  g.stride = stride.empty() ? g.kernel : triple_arg(stride, op, "stride");
  g.pad = triple_arg(padding, op, "padding");
  g.dilation = triple_arg(dilation, op, "dilation");
  g.in = volumes_of(input, op);
  for (size_t a = 0; a < 3; ++a) {
    EMBER_CHECK(g.kernel[a] > 0, op, ": kernel_size must be positive, got ", kernel_size);
    EMBER_CHECK(g.stride[a] > 0, op, ": stride must be positive (not zero), got ", stride);
    EMBER_CHECK(g.dilation[a] > 0, op, ": dilation must be positive, got ", dilation);
    EMBER_CHECK(g.pad[a] >= 0, op, ": padding must be non-negative, got ", padding);
    EMBER_CHECK(g.pad[a] <= g.kernel[a] / 2, op, ": padding must be at most half of the kernel size, got padding ",
                padding, " for kernel_size ", kernel_size);
    g.out[a] = cpu::pooled_size(g.in.size[a], g.kernel[a], g.pad[a], g.stride[a], g.dilation[a], ceil_mode);
    EMBER_CHECK(g.out[a] >= 1, op, ": the kernel is larger than the padded input: input shape ", input,
                " with kernel_size ", kernel_size, ", padding ", padding, " and dilation ", dilation,
                " gives an output size of ", g.out[a], " in spatial dim ", a, " (output size is too small)");
  }
  return g;
}


// Checks that a backward op's grad_output has the forward output's shape.
void check_grad_shape(const char* op, const Tensor& grad_output, IntArrayRef input_size, const Triple& out) {
  EMBER_CHECK(grad_output.dim() == static_cast<int64_t>(input_size.size()), op, ": grad_output shape ",
              grad_output.sizes(), " does not match the input shape ", input_size);
  const DimVector want = with_volume(input_size, out);
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(want), op, ": expected grad_output of shape ", IntArrayRef(want),
              " for an input of shape ", input_size, ", got ", grad_output.sizes());
}

// The shared shape of every backward op: grad_input (volumes of `in`) from
// grad_output (volumes of `out_elements`), each chunk of volumes zeroed (in
// float for f16/bf16) and filled by scatter(volume, grad_output volume, accumulator).
template <class T, class Scatter>
void scatter_volumes(const Tensor& grad, Tensor& grad_input, const Volumes& in, int64_t out_elements,
                     Scatter&& scatter) {
  using A = acc_t<T>;
  const int64_t elements = in.elements();
  parallel_for(0, in.count, planes_per_chunk(elements + out_elements), [&](int64_t b, int64_t e) {
    std::vector<A> scratch(std::is_same_v<T, A> ? 0 : static_cast<size_t>(elements));
    for (int64_t v = b; v < e; ++v) {
      T* gi = grad_input.data_ptr<T>() + v * elements;
      A* acc = std::is_same_v<T, A> ? reinterpret_cast<A*>(gi) : scratch.data();
      std::fill(acc, acc + elements, A(0));
      scatter(v, grad.data_ptr<T>() + v * out_elements, acc);
      if constexpr (!std::is_same_v<T, A>) std::copy(acc, acc + elements, gi);
    }
  });
}

// ---- max_pool3d ----

template <class T>
void max_pool_volumes(const T* in, T* out, int64_t* indices, const Pool3d& g, int64_t begin, int64_t end) {
  using A = acc_t<T>;
  std::array<std::vector<Span>, 3> spans;
  for (size_t a = 0; a < 3; ++a)
    spans[a] = cpu::max_spans(g.out[a], g.in.size[a], g.kernel[a], g.stride[a], g.pad[a], g.dilation[a]);
  const int64_t H = g.in.size[1], W = g.in.size[2];
  const int64_t in_elements = g.in.elements(), out_elements = product(g.out);
  for (int64_t v = begin; v < end; ++v) {
    const T* x = in + v * in_elements;
    int64_t o = v * out_elements;
    for (int64_t od = 0; od < g.out[0]; ++od) {
      const Span sd = spans[0][od];
      for (int64_t oh = 0; oh < g.out[1]; ++oh) {
        const Span sh = spans[1][oh];
        for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
          const Span sw = spans[2][ow];
          A best = -std::numeric_limits<A>::infinity();
          int64_t where = (sd.begin * H + sh.begin) * W + sw.begin;
          for (int64_t id = sd.begin; id < sd.end; id += g.dilation[0]) {
            for (int64_t ih = sh.begin; ih < sh.end; ih += g.dilation[1]) {
              for (int64_t iw = sw.begin; iw < sw.end; iw += g.dilation[2]) {
                const int64_t at = (id * H + ih) * W + iw;
                const A val = static_cast<A>(x[at]);
                if (val > best || val != val) {  // NaN wins: the last NaN of the window
                  best = val;
                  where = at;
                }
              }
            }
          }
          out[o] = static_cast<T>(best);
          indices[o] = where;
        }
      }
    }
  }
}

TensorPair max_pool3d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool3d_with_indices";
  const Pool3d g = pool_geometry(op, self.sizes(), kernel_size, stride, padding, dilation, ceil_mode);
  const DimVector shape = with_volume(self.sizes(), g.out);
  Tensor out = make_empty(shape, self.dtype(), self.device());
  Tensor indices = make_empty(shape, DType::Int64, self.device());
  if (out.numel() == 0) return {out, indices};
  const Tensor x = self.contiguous();
  const int64_t work = product(g.out) * product(g.kernel);
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    parallel_for(0, g.in.count, planes_per_chunk(work), [&](int64_t b, int64_t e) {
      max_pool_volumes<T>(x.data_ptr<T>(), out.data_ptr<T>(), indices.data_ptr<int64_t>(), g, b, e);
    });
  });
  return {out, indices};
}

Tensor max_pool3d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& indices, IntArrayRef input_size) {
  const char* op = "max_pool3d_with_indices_backward";
  const Volumes in = volumes_of(input_size, op);
  EMBER_CHECK(indices.dtype() == DType::Int64, op, ": expected int64 indices, got ", indices.dtype());
  EMBER_CHECK(grad_output.sizes() == indices.sizes(), op, ": grad_output shape ", grad_output.sizes(),
              " differs from the indices' shape ", indices.sizes());
  EMBER_CHECK(grad_output.dim() == static_cast<int64_t>(input_size.size()) &&
                  IntArrayRef(with_volume(grad_output.sizes(), in.size)) == input_size,
              op, ": grad_output shape ", grad_output.sizes(), " does not match the input shape ", input_size,
              " outside the last three dims");
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous(), idx = indices.contiguous();
  const int64_t elements = in.elements(), out_elements = g.size(-1) * g.size(-2) * g.size(-3);
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = acc_t<T>;
    scatter_volumes<T>(g, grad_input, in, out_elements, [&](int64_t v, const T* go, A* gi) {
      const int64_t* ix = idx.data_ptr<int64_t>() + v * out_elements;
      for (int64_t k = 0; k < out_elements; ++k) {
        const int64_t i = ix[k];
        EMBER_CHECK(i >= 0 && i < elements, op, ": index ", i, " is outside the input volume of ", in.size[0], "x",
                    in.size[1], "x", in.size[2]);
        gi[i] += static_cast<A>(go[k]);
      }
    });
  });
  return grad_input;
}

// ---- avg_pool3d ----

struct AvgPool3d {
  Pool3d g;
  std::array<std::vector<AvgSpan>, 3> spans;
  bool count_include_pad;
  std::optional<int64_t> divisor_override;

  // The window of output (od, oh, ow) per dim.
  std::array<AvgSpan, 3> window(int64_t od, int64_t oh, int64_t ow) const {
    return {spans[0][od], spans[1][oh], spans[2][ow]};
  }
  static bool empty(const std::array<AvgSpan, 3>& w) {
    return w[0].begin >= w[0].end || w[1].begin >= w[1].end || w[2].begin >= w[2].end;
  }
  int64_t divisor(const std::array<AvgSpan, 3>& w) const {
    if (divisor_override) return *divisor_override;
    if (count_include_pad) return w[0].padded * w[1].padded * w[2].padded;
    return (w[0].end - w[0].begin) * (w[1].end - w[1].begin) * (w[2].end - w[2].begin);
  }
};

AvgPool3d avg_geometry(const char* op, IntArrayRef input, IntArrayRef kernel_size, IntArrayRef stride,
                       IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                       std::optional<int64_t> divisor_override) {
  EMBER_CHECK(!divisor_override || *divisor_override != 0, op, ": divisor_override must not be zero");
  const int64_t one = 1;
  AvgPool3d a{pool_geometry(op, input, kernel_size, stride, padding, IntArrayRef(&one, 1), ceil_mode),
              {},
              count_include_pad,
              divisor_override};
  for (size_t d = 0; d < 3; ++d)
    a.spans[d] = cpu::avg_spans(a.g.out[d], a.g.in.size[d], a.g.kernel[d], a.g.stride[d], a.g.pad[d]);
  return a;
}

// Calls f(output position, window) for every output of one volume, in order.
template <class F>
void for_each_window(const AvgPool3d& a, F&& f) {
  int64_t o = 0;
  for (int64_t od = 0; od < a.g.out[0]; ++od) {
    for (int64_t oh = 0; oh < a.g.out[1]; ++oh) {
      for (int64_t ow = 0; ow < a.g.out[2]; ++ow) f(o++, a.window(od, oh, ow));
    }
  }
}

template <class T>
void avg_pool_volumes(const T* in, T* out, const AvgPool3d& a, int64_t begin, int64_t end) {
  using A = acc_t<T>;
  // Plain copies, not structured bindings: the lambda below captures them.
  const int64_t H = a.g.in.size[1], W = a.g.in.size[2];
  const int64_t in_elements = a.g.in.size[0] * H * W, out_elements = product(a.g.out);
  for (int64_t v = begin; v < end; ++v) {
    const T* x = in + v * in_elements;
    T* y = out + v * out_elements;
    for_each_window(a, [&](int64_t o, const std::array<AvgSpan, 3>& w) {
      if (AvgPool3d::empty(w)) {  // wholly in the padding (ceil_mode)
        y[o] = T(0);
        return;
      }
      A sum = 0;
      for (int64_t id = w[0].begin; id < w[0].end; ++id) {
        for (int64_t ih = w[1].begin; ih < w[1].end; ++ih) {
          const T* row = x + (id * H + ih) * W;
          for (int64_t iw = w[2].begin; iw < w[2].end; ++iw) sum += static_cast<A>(row[iw]);
        }
      }
      y[o] = static_cast<T>(sum / static_cast<A>(a.divisor(w)));
    });
  }
}

Tensor avg_pool3d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  const AvgPool3d a = avg_geometry("avg_pool3d", self.sizes(), kernel_size, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override);
  Tensor out = make_empty(with_volume(self.sizes(), a.g.out), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const int64_t work = product(a.g.out) * product(a.g.kernel);
  dispatch_floating(self.dtype(), "avg_pool3d", [&]<class T>() {
    parallel_for(0, a.g.in.count, planes_per_chunk(work),
                 [&](int64_t b, int64_t e) { avg_pool_volumes<T>(x.data_ptr<T>(), out.data_ptr<T>(), a, b, e); });
  });
  return out;
}

Tensor avg_pool3d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool3d_backward";
  const AvgPool3d a =
      avg_geometry(op, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  check_grad_shape(op, grad_output, input_size, a.g.out);
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous();
  const int64_t H = a.g.in.size[1], W = a.g.in.size[2];
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = acc_t<T>;
    scatter_volumes<T>(g, grad_input, a.g.in, product(a.g.out), [&](int64_t, const T* go, A* gi) {
      for_each_window(a, [&](int64_t o, const std::array<AvgSpan, 3>& w) {
        if (AvgPool3d::empty(w)) return;
        const A delta = static_cast<A>(go[o]) / static_cast<A>(a.divisor(w));
        for (int64_t id = w[0].begin; id < w[0].end; ++id) {
          for (int64_t ih = w[1].begin; ih < w[1].end; ++ih) {
            A* row = gi + (id * H + ih) * W;
            for (int64_t iw = w[2].begin; iw < w[2].end; ++iw) row[iw] += delta;
          }
        }
      });
    });
  });
  return grad_input;
}

// ---- adaptive_avg_pool3d ----

struct Adaptive3d {
  std::array<std::vector<Span>, 3> spans;

  Adaptive3d(const Triple& out, const Triple& in) {
    for (size_t a = 0; a < 3; ++a) spans[a] = cpu::adaptive_spans(out[a], in[a]);
  }
  // Calls f(output position, depth span, height span, width span) for every output of one volume, in order.
  template <class F>
  void for_each_window(F&& f) const {
    int64_t o = 0;
    for (const Span& d : spans[0]) {
      for (const Span& h : spans[1]) {
        for (const Span& w : spans[2]) f(o++, d, h, w);
      }
    }
  }
};

// sum / depth / height / width, in that order (torch's).
template <class A>
A window_mean(A value, const Span& d, const Span& h, const Span& w) {
  return value / static_cast<A>(d.end - d.begin) / static_cast<A>(h.end - h.begin) / static_cast<A>(w.end - w.begin);
}

Triple adaptive_output(const char* op, IntArrayRef output_size) {
  const Triple o = triple_arg(output_size, op, "output_size");
  EMBER_CHECK(o[0] >= 0 && o[1] >= 0 && o[2] >= 0, op, ": output_size must be non-negative, got ", output_size);
  return o;
}

Tensor adaptive_avg_pool3d_cpu(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool3d";
  const Triple o = adaptive_output(op, output_size);
  const Volumes in = volumes_of(self.sizes(), op);
  Tensor out = make_empty(with_volume(self.sizes(), o), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const Adaptive3d windows(o, in.size);
  const int64_t H = in.size[1], W = in.size[2];
  const int64_t out_elements = product(o);
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    using A = acc_t<T>;
    parallel_for(0, in.count, planes_per_chunk(in.elements() + out_elements), [&](int64_t b, int64_t e) {
      for (int64_t v = b; v < e; ++v) {
        const T* xv = x.data_ptr<T>() + v * in.elements();
        T* y = out.data_ptr<T>() + v * out_elements;
        windows.for_each_window([&](int64_t k, const Span& d, const Span& h, const Span& w) {
          A sum = 0;
          for (int64_t id = d.begin; id < d.end; ++id) {
            for (int64_t ih = h.begin; ih < h.end; ++ih) {
              const T* row = xv + (id * H + ih) * W;
              for (int64_t iw = w.begin; iw < w.end; ++iw) sum += static_cast<A>(row[iw]);
            }
          }
          y[k] = static_cast<T>(window_mean(sum, d, h, w));
        });
      }
    });
  });
  return out;
}

Tensor adaptive_avg_pool3d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size) {
  const char* op = "adaptive_avg_pool3d_backward";
  const Volumes in = volumes_of(input_size, op);
  EMBER_CHECK(grad_output.dim() == static_cast<int64_t>(input_size.size()), op, ": grad_output shape ",
              grad_output.sizes(), " does not match the input shape ", input_size);
  const Triple o = {grad_output.size(-3), grad_output.size(-2), grad_output.size(-1)};
  check_grad_shape(op, grad_output, input_size, o);
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous();
  const Adaptive3d windows(o, in.size);
  const int64_t H = in.size[1], W = in.size[2];
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = acc_t<T>;
    scatter_volumes<T>(g, grad_input, in, product(o), [&](int64_t, const T* go, A* gi) {
      windows.for_each_window([&](int64_t k, const Span& d, const Span& h, const Span& w) {
        const A delta = window_mean(static_cast<A>(go[k]), d, h, w);
        for (int64_t id = d.begin; id < d.end; ++id) {
          for (int64_t ih = h.begin; ih < h.end; ++ih) {
            A* row = gi + (id * H + ih) * W;
            for (int64_t iw = w.begin; iw < w.end; ++iw) row[iw] += delta;
          }
        }
      });
    });
  });
  return grad_input;
}

}  // namespace

void register_cpu_pooling3d_kernels() {
  op::max_pool3d_with_indices.impl(DispatchKey::CPU, kFloatingDTypes, &max_pool3d_with_indices_cpu,
                                   "cpu::max_pool3d_with_indices");
  op::max_pool3d_with_indices_backward.impl(DispatchKey::CPU, kFloatingDTypes, &max_pool3d_with_indices_backward_cpu,
                                            "cpu::max_pool3d_with_indices_backward");
  op::avg_pool3d.impl(DispatchKey::CPU, kFloatingDTypes, &avg_pool3d_cpu, "cpu::avg_pool3d");
  op::avg_pool3d_backward.impl(DispatchKey::CPU, kFloatingDTypes, &avg_pool3d_backward_cpu, "cpu::avg_pool3d_backward");
  op::adaptive_avg_pool3d.impl(DispatchKey::CPU, kFloatingDTypes, &adaptive_avg_pool3d_cpu, "cpu::adaptive_avg_pool3d");
  op::adaptive_avg_pool3d_backward.impl(DispatchKey::CPU, kFloatingDTypes, &adaptive_avg_pool3d_backward_cpu,
                                        "cpu::adaptive_avg_pool3d_backward");
}

}  // namespace ember
