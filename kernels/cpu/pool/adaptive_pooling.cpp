// adaptive_avg_pool2d on CPU and its backward op: output i of a dim averages
// the input range [floor(i in / out), ceil((i + 1) in / out)), divided by the
// window height, then by its width (Note [Pooling loops] in pooling.cpp).
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_pooling.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/pool/pool_planes.h"
#include "kernels/cpu/pool/pool_windows.h"

namespace ember {

namespace {

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

Pair adaptive_output(const char* op, IntArrayRef output_size) {
  const Pair o = pair_arg(output_size, op, "output_size");
  EMBER_CHECK(o.h >= 0 && o.w >= 0, op, ": output_size must be non-negative, got ", output_size);
  return o;
}

// The sum of n contiguous elements in 16 independent partial sums (combined
// in a fixed order): a long window (a global pool sums a whole plane) is not
// bound by the latency of one chain of adds, and the compiler can keep the
// partials in vector registers. The order depends on n only.
template <class T>
acc_t<T> contiguous_sum(const T* p, int64_t n) {
  using A = acc_t<T>;
  constexpr int64_t kParts = 16;
  A part[kParts] = {};
  int64_t i = 0;
  for (; i + kParts <= n; i += kParts) {
    for (int64_t k = 0; k < kParts; ++k) part[k] += static_cast<A>(p[i + k]);
  }
  A sum = 0;
  for (int64_t k = 0; k < kParts; ++k) sum += part[k];
  for (; i < n; ++i) sum += static_cast<A>(p[i]);
  return sum;
}

// The sum of an adaptive window: one contiguous run when it spans whole rows.
template <class T>
acc_t<T> adaptive_window_sum(const T* x, int64_t W, Span h, Span w) {
  if (w.begin == 0 && w.end == W) return contiguous_sum(x + h.begin * W, (h.end - h.begin) * W);
  acc_t<T> sum = 0;
  for (int64_t ih = h.begin; ih < h.end; ++ih) sum += contiguous_sum(x + ih * W + w.begin, w.end - w.begin);
  return sum;
}

template <class T>
void adaptive_avg_planes(const T* in, T* out, const Planes& pl, const std::vector<Span>& hs,
                         const std::vector<Span>& ws, int64_t begin, int64_t end) {
  using A = acc_t<T>;
  const int64_t W = pl.w, plane = pl.h * W, OH = static_cast<int64_t>(hs.size()), OW = static_cast<int64_t>(ws.size());
  for (int64_t p = begin; p < end; ++p) {
    const T* x = in + p * plane;
    T* y = out + p * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh) {
      const Span h = hs[oh];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const Span w = ws[ow];
        const A sum = adaptive_window_sum(x, W, h, w);
        y[oh * OW + ow] = static_cast<T>(sum / static_cast<A>(h.end - h.begin) / static_cast<A>(w.end - w.begin));
      }
    }
  }
}

Tensor adaptive_avg_pool2d_cpu(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  const Pair o = adaptive_output(op, output_size);
  const Planes pl = planes_of(self.sizes(), op);
  Tensor out = make_empty(with_spatial(self.sizes(), o.h, o.w), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  const std::vector<Span> hs = cpu::adaptive_spans(o.h, pl.h), ws = cpu::adaptive_spans(o.w, pl.w);
  const int64_t work = pl.h * pl.w + o.h * o.w;
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    parallel_for(0, pl.count, planes_per_chunk(work), [&](int64_t b, int64_t e) {
      adaptive_avg_planes<T>(x.data_ptr<T>(), out.data_ptr<T>(), pl, hs, ws, b, e);
    });
  });
  return out;
}

Tensor adaptive_avg_pool2d_backward_cpu(const Tensor& grad_output, IntArrayRef input_size) {
  const char* op = "adaptive_avg_pool2d_backward";
  const Planes pl = planes_of(input_size, op);
  EMBER_CHECK(grad_output.dim() == static_cast<int64_t>(input_size.size()), op, ": grad_output shape ",
              grad_output.sizes(), " does not match the input shape ", input_size);
  const int64_t OH = grad_output.size(-2), OW = grad_output.size(-1);
  check_grad_shape(op, grad_output, input_size, OH, OW);
  Tensor grad_input = make_empty(input_size, grad_output.dtype(), grad_output.device());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad_output.contiguous();
  const std::vector<Span> hs = cpu::adaptive_spans(OH, pl.h), ws = cpu::adaptive_spans(OW, pl.w);
  const int64_t W = pl.w;
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = acc_t<T>;
    scatter_planes<T>(g, grad_input, pl, OH * OW, [&](int64_t /*plane*/, const T* go, A* gi) {
      for (int64_t oh = 0; oh < OH; ++oh) {
        const Span h = hs[oh];
        for (int64_t ow = 0; ow < OW; ++ow) {
          const Span w = ws[ow];
          const A delta =
              static_cast<A>(go[oh * OW + ow]) / static_cast<A>(h.end - h.begin) / static_cast<A>(w.end - w.begin);
          for (int64_t ih = h.begin; ih < h.end; ++ih) {
            for (int64_t iw = w.begin; iw < w.end; ++iw) gi[ih * W + iw] += delta;
          }
        }
      }
    });
  });
  return grad_input;
}

}  // namespace

void register_cpu_adaptive_pooling_kernels() {
  op::adaptive_avg_pool2d.impl(DispatchKey::CPU, kFloatingDTypes, &adaptive_avg_pool2d_cpu, "cpu::adaptive_avg_pool2d");
  op::adaptive_avg_pool2d_backward.impl(DispatchKey::CPU, kFloatingDTypes, &adaptive_avg_pool2d_backward_cpu,
                                        "cpu::adaptive_avg_pool2d_backward");
}

}  // namespace ember
