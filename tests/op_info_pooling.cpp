// Op-info rows of the pooling family (Note [The op-info table] in
// tests/op_info.h): max_pool2d, max_pool2d_with_indices, avg_pool2d, adaptive_avg_pool2d,
// upsample_nearest2d, upsample_bilinear2d, and the backward op of each
// (the padding ops are in op_info_padding.cpp).
//
// The references are the definitions, written as naively as possible: a
// window is a list of taps (oh * stride - pad + i * dilation), each checked
// against the input's bounds; a backward op adds each output gradient into
// the input positions its forward read. Max-pooling inputs hold distinct
// values (no ties: the gradient is defined, and gradcheck runs on them).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "tests/op_info.h"
#include "tests/op_info_pooling_inputs.h"

namespace ember::testing {
namespace {


const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
const std::vector<DType> kAllTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                      DType::Int32,   DType::Int64,   DType::UInt8,   DType::Bool};
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

IValue ints(Shape v) { return IValue::Payload(std::move(v)); }
IValue flag(bool b) { return IValue::Payload(b); }
IValue real(double d) { return IValue::Payload(d); }
IValue none() { return IValue(); }
IValue tensor(const Tensor& t) { return IValue::Payload(t); }

// ---- inputs ----

using Inputs = PoolingInputs;

// ---- shared reference pieces ----

struct Pair {
  int64_t h, w;
};
Pair pair(const Shape& v) { return v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]}; }

// [.., H, W] as planes.
struct Planes {
  int64_t count, h, w;
};
Planes planes(const Shape& s) {
  const size_t n = s.size();
  return {numel_of(s) / (s[n - 2] * s[n - 1]), s[n - 2], s[n - 1]};
}
Shape with_hw(Shape s, int64_t h, int64_t w) {
  s[s.size() - 2] = h;
  s[s.size() - 1] = w;
  return s;
}

// max_pool2d / avg_pool2d arguments as the op reads them.
struct PoolArgs {
  Pair k, s, p, d;
  bool ceil;
};

PoolArgs pool_args(const RefArgs& a, size_t kernel, size_t dilation, size_t ceil) {
  PoolArgs r;
  r.k = pair(a.ints(kernel));
  const Shape stride = a.ints(kernel + 1);
  r.s = stride.empty() ? r.k : pair(stride);
  r.p = pair(a.ints(kernel + 2));
  r.d = dilation == 0 ? Pair{1, 1} : pair(a.ints(dilation));
  r.ceil = a.flag(ceil);
  return r;
}

// ---- max_pool2d ----

Expected max_pool_with_indices_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const PoolArgs g = pool_args(a, 1, 4, 5);
  const Planes pl = planes(x.shape);
  const int64_t oh_n = pooled(pl.h, g.k.h, g.p.h, g.s.h, g.d.h, g.ceil),
                ow_n = pooled(pl.w, g.k.w, g.p.w, g.s.w, g.d.w, g.ceil);
  HostTensor v(with_hw(x.shape, oh_n, ow_n), a.out), idx(with_hw(x.shape, oh_n, ow_n), DType::Int64);
  int64_t o = 0;
  for (int64_t p = 0; p < pl.count; ++p) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow, ++o) {
        double best = -kInf;
        int64_t where = -1, first = -1;
        for (int64_t i = 0; i < g.k.h; ++i) {
          const int64_t ih = oh * g.s.h - g.p.h + i * g.d.h;
          if (ih < 0 || ih >= pl.h) continue;
          for (int64_t j = 0; j < g.k.w; ++j) {
            const int64_t iw = ow * g.s.w - g.p.w + j * g.d.w;
            if (iw < 0 || iw >= pl.w) continue;
            const double val = x.f[(p * pl.h + ih) * pl.w + iw];
            if (first < 0) first = ih * pl.w + iw;
            if (val > best || std::isnan(val)) {  // NaN wins, the last NaN of the window
              best = val;
              where = ih * pl.w + iw;
            }
          }
        }
        v.set(o, best);
        idx.set_int(o, where < 0 ? first : where);
      }
    }
  }
  return {{v, idx}};
}

// max_pool2d: the values of max_pool2d_with_indices.
Expected max_pool_ref(const RefArgs& a) {
  Expected e = max_pool_with_indices_ref(a);
  e.outputs.resize(1);
  return e;
}

std::vector<Sample> max_pool_samples(const std::string& op, DType t, SampleSize size) {
  Inputs in(op, t, size);
  auto s = [](std::string name, const Tensor& x, Shape k, Shape stride, Shape pad, Shape dil, bool ceil,
              std::string error = "") {
    return Sample{
        std::move(name), {tensor(x), ints(k), ints(stride), ints(pad), ints(dil), flag(ceil)}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.distinct({4, 16, 40, 40}), {3}, {2}, {1}, {1}, false)};
  std::vector<Sample> out = {
      s("basic", in.distinct({2, 3, 7, 9}), {3}, {2}, {1}, {1}, false),
      s("batch1_nonsquare_dilated", in.distinct({1, 2, 8, 7}), {2, 3}, {1, 2}, {1, 0}, {2, 1}, false),
      s("ceil_mode", in.distinct({2, 2, 9, 8}), {3}, {2}, {0}, {1}, true),
      s("ceil_mode_padding", in.distinct({1, 2, 6, 7}), {3, 2}, {2, 2}, {1, 1}, {1}, true),
      s("padding_two", in.distinct({1, 2, 7, 7}), {5}, {2}, {2}, {1}, false),
      s("unbatched_default_stride", in.distinct({3, 6, 5}), {2}, {}, {0}, {1}, false),
      s("transposed", in.distinct({2, 2, 6, 5}, true), {2}, {1}, {0}, {1}, false),
      s("empty_batch", in.distinct({0, 2, 4, 4}), {2}, {}, {0}, {1}, false),
      s("kernel_larger_than_padded_input", in.distinct({1, 1, 3, 3}), {7}, {1}, {1}, {1}, false,
        "larger than the padded input"),
      s("padding_over_half_kernel", in.distinct({1, 1, 6, 6}), {3}, {1}, {2}, {1}, false, "at most half"),
      s("stride_zero", in.distinct({1, 1, 6, 6}), {3}, {0}, {0}, {1}, false, "stride must be positive"),
      s("rank_2", in.distinct({6, 6}), {3}, {}, {0}, {1}, false, "3-D [C, H, W] or 4-D"),
      s("kernel_three_values", in.distinct({1, 1, 6, 6}), {3, 3, 3}, {}, {0}, {1}, false,
        "kernel_size must be one int or two"),
  };
  if (is_floating_point(t)) {
    out.push_back(s("special",
                    in.exact({1, 2, 2, 4}, {1, kNaN, 3, kNaN, -kInf, -kInf, 2, 0.5,  //
                                            kNaN, -1, -2, -3, kInf, 0, -kInf, kNaN}),
                    {2}, {}, {0}, {1}, false));
  }
  return out;
}

// max_pool2d_with_indices_backward(grad_output, indices, input_size)
Expected max_pool_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0), idx = a.tensor(1);
  const Shape in_shape = a.ints(2);
  const Planes pl = planes(in_shape);
  const int64_t per = g.numel() / std::max<int64_t>(1, pl.count);
  HostTensor gi(in_shape, a.out);
  for (int64_t p = 0; p < pl.count; ++p) {
    for (int64_t k = 0; k < per; ++k) {
      const int64_t i = idx.i[p * per + k];
      if (i < 0 || i >= pl.h * pl.w) return Expected::raises("outside the input plane");
      gi.f[p * pl.h * pl.w + i] += g.f[p * per + k];
    }
  }
  return {{gi}};
}

std::vector<Sample> max_pool_backward_samples(DType t, SampleSize size) {
  Inputs in("max_pool2d_with_indices_backward", t, size);
  auto s = [](std::string name, const Tensor& g, const Tensor& idx, Shape input, std::string error = "") {
    return Sample{std::move(name), {tensor(g), tensor(idx), ints(std::move(input))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) {
    return {s("large", in.values({4, 16, 20, 20}), in.indices({4, 16, 20, 20}, 40 * 40), {4, 16, 40, 40})};
  }
  Tensor bad = in.indices({1, 2, 2, 2}, 16);
  bad.fill_(16);
  return {
      s("basic", in.values({2, 3, 4, 5}), in.indices({2, 3, 4, 5}, 7 * 9), {2, 3, 7, 9}),
      s("unbatched", in.values({3, 3, 2}), in.indices({3, 3, 2}, 6 * 5), {3, 6, 5}),
      s("transposed_grad", in.values({2, 2, 5, 3}, true), in.indices({2, 2, 5, 3}, 6 * 5), {2, 2, 6, 5}),
      s("index_out_of_range", in.values({1, 2, 2, 2}), bad, {1, 2, 4, 4}, "outside the input plane"),
      s("shape_mismatch", in.values({1, 2, 2, 2}), in.indices({1, 2, 2, 3}, 16), {1, 2, 4, 4},
        "differs from the indices"),
  };
}

// ---- avg_pool2d ----

struct AvgArgs {
  PoolArgs g;
  bool count_include_pad;
  std::optional<int64_t> divisor;
};

// The window of output (oh, ow): the taps inside the input, and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};

AvgWindow avg_window(const AvgArgs& a, const Planes& pl, int64_t oh, int64_t ow) {
  int64_t in_h = 0, in_w = 0, pad_h = 0, pad_w = 0, h0 = pl.h, h1 = 0, w0 = pl.w, w1 = 0;
  for (int64_t i = 0; i < a.g.k.h; ++i) {
    const int64_t ih = oh * a.g.s.h - a.g.p.h + i;
    if (ih < pl.h + a.g.p.h) ++pad_h;
    if (ih >= 0 && ih < pl.h) ++in_h, h0 = std::min(h0, ih), h1 = ih + 1;
  }
  for (int64_t j = 0; j < a.g.k.w; ++j) {
    const int64_t iw = ow * a.g.s.w - a.g.p.w + j;
    if (iw < pl.w + a.g.p.w) ++pad_w;
    if (iw >= 0 && iw < pl.w) ++in_w, w0 = std::min(w0, iw), w1 = iw + 1;
  }
  const int64_t divisor = a.divisor ? *a.divisor : (a.count_include_pad ? pad_h * pad_w : in_h * in_w);
  return {h0, h1, w0, w1, divisor};
}

AvgArgs avg_args(const RefArgs& a, size_t kernel) {
  AvgArgs r{pool_args(a, kernel, 0, kernel + 3), a.flag(kernel + 4), std::nullopt};
  if (!a.is_none(kernel + 5)) r.divisor = a.integer(kernel + 5);
  return r;
}

Expected avg_pool_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const AvgArgs g = avg_args(a, 1);
  const Planes pl = planes(x.shape);
  const int64_t oh_n = pooled(pl.h, g.g.k.h, g.g.p.h, g.g.s.h, 1, g.g.ceil),
                ow_n = pooled(pl.w, g.g.k.w, g.g.p.w, g.g.s.w, 1, g.g.ceil);
  HostTensor y(with_hw(x.shape, oh_n, ow_n), a.out);
  int64_t o = 0;
  for (int64_t p = 0; p < pl.count; ++p) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow, ++o) {
        const AvgWindow w = avg_window(g, pl, oh, ow);
        double sum = 0;
        for (int64_t ih = w.h0; ih < w.h1; ++ih) {
          for (int64_t iw = w.w0; iw < w.w1; ++iw) sum += x.f[(p * pl.h + ih) * pl.w + iw];
        }
        y.set(o, w.h0 < w.h1 && w.w0 < w.w1 ? sum / static_cast<double>(w.divisor) : 0.0);
      }
    }
  }
  return {{y}};
}

std::vector<Sample> avg_pool_samples(DType t, SampleSize size) {
  Inputs in("avg_pool2d", t, size);
  auto s = [](std::string name, const Tensor& x, Shape k, Shape stride, Shape pad, bool ceil, bool include_pad,
              std::optional<int64_t> divisor, std::string error = "") {
    return Sample{std::move(name),
                  {tensor(x), ints(k), ints(stride), ints(pad), flag(ceil), flag(include_pad),
                   divisor ? IValue(IValue::Payload(*divisor)) : none()},
                  {},
                  std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 40, 40}), {3}, {2}, {1}, false, true, {})};
  return {
      s("basic", in.values({2, 3, 7, 9}), {3}, {2}, {1}, false, true, {}),
      s("exclude_pad_ceil_nonsquare", in.values({2, 2, 8, 7}), {3, 2}, {2, 1}, {1, 1}, true, false, {}),
      s("ceil_include_pad", in.values({1, 2, 5, 6}), {3}, {2}, {1}, true, true, {}),
      s("divisor_override", in.values({1, 2, 6, 6}), {2}, {}, {0}, false, true, 3),
      s("padding_two", in.values({1, 2, 7, 7}), {5}, {3}, {2}, true, false, {}),
      s("unbatched", in.values({3, 5, 6}), {2, 3}, {1, 2}, {0}, false, true, {}),
      s("transposed", in.values({2, 2, 6, 5}, true), {2}, {}, {1}, false, true, {}),
      s("divisor_zero", in.values({1, 1, 4, 4}), {2}, {}, {0}, false, true, 0, "divisor_override must not be zero"),
      s("kernel_larger_than_padded_input", in.values({1, 1, 3, 3}), {8}, {}, {2}, false, true, {},
        "larger than the padded input"),
      s("padding_over_half_kernel", in.values({1, 1, 6, 6}), {2}, {}, {2}, false, true, {}, "at most half"),
      s("stride_zero", in.values({1, 1, 6, 6}), {2}, {0, 1}, {0}, false, true, {}, "stride must be positive"),
      s("rank_5", in.values({1, 1, 1, 6, 6}), {2}, {}, {0}, false, true, {}, "3-D [C, H, W] or 4-D"),
  };
}

// avg_pool2d_backward(grad_output, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override)
Expected avg_pool_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0);
  const Shape in_shape = a.ints(1);
  const AvgArgs w = avg_args(a, 2);
  const Planes pl = planes(in_shape);
  const int64_t oh_n = g.shape[g.shape.size() - 2], ow_n = g.shape.back();
  HostTensor gi(in_shape, a.out);
  int64_t o = 0;
  for (int64_t p = 0; p < pl.count; ++p) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow, ++o) {
        const AvgWindow win = avg_window(w, pl, oh, ow);
        for (int64_t ih = win.h0; ih < win.h1; ++ih) {
          for (int64_t iw = win.w0; iw < win.w1; ++iw) {
            gi.f[(p * pl.h + ih) * pl.w + iw] += g.f[o] / static_cast<double>(win.divisor);
          }
        }
      }
    }
  }
  return {{gi}};
}

std::vector<Sample> avg_pool_backward_samples(DType t, SampleSize size) {
  Inputs in("avg_pool2d_backward", t, size);
  auto s = [](std::string name, const Tensor& g, Shape input, Shape k, Shape stride, Shape pad, bool ceil,
              bool include_pad, std::optional<int64_t> divisor, std::string error = "") {
    return Sample{std::move(name),
                  {tensor(g), ints(std::move(input)), ints(k), ints(stride), ints(pad), flag(ceil), flag(include_pad),
                   divisor ? IValue(IValue::Payload(*divisor)) : none()},
                  {},
                  std::move(error)};
  };
  if (size == SampleSize::Large) {
    return {s("large", in.values({4, 16, 20, 20}), {4, 16, 40, 40}, {3}, {2}, {1}, false, true, {})};
  }
  return {
      s("basic", in.values({2, 3, 4, 5}), {2, 3, 7, 9}, {3}, {2}, {1}, false, true, {}),
      s("exclude_pad_ceil_nonsquare", in.values({2, 2, 5, 8}), {2, 2, 8, 7}, {3, 2}, {2, 1}, {1, 1}, true, false, {}),
      s("divisor_override_transposed", in.values({1, 2, 3, 3}, true), {1, 2, 6, 6}, {2}, {}, {0}, false, true, 3),
      s("unbatched", in.values({3, 4, 2}), {3, 5, 6}, {2, 3}, {1, 2}, {0}, false, true, {}),
      s("wrong_grad_shape", in.values({1, 2, 3, 4}), {1, 2, 6, 6}, {2}, {}, {0}, false, true, {},
        "expected grad_output of shape"),
  };
}

// ---- adaptive_avg_pool2d ----

int64_t start_of(int64_t o, int64_t out, int64_t in) { return (o * in) / out; }
int64_t end_of(int64_t o, int64_t out, int64_t in) { return ((o + 1) * in + out - 1) / out; }

Expected adaptive_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const Pair o = pair(a.ints(1));
  const Planes pl = planes(x.shape);
  HostTensor y(with_hw(x.shape, o.h, o.w), a.out);
  int64_t k = 0;
  for (int64_t p = 0; p < pl.count; ++p) {
    for (int64_t oh = 0; oh < o.h; ++oh) {
      for (int64_t ow = 0; ow < o.w; ++ow, ++k) {
        const int64_t h0 = start_of(oh, o.h, pl.h), h1 = end_of(oh, o.h, pl.h);
        const int64_t w0 = start_of(ow, o.w, pl.w), w1 = end_of(ow, o.w, pl.w);
        double sum = 0;
        for (int64_t ih = h0; ih < h1; ++ih) {
          for (int64_t iw = w0; iw < w1; ++iw) sum += x.f[(p * pl.h + ih) * pl.w + iw];
        }
        y.set(k, sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
    }
  }
  return {{y}};
}

std::vector<Sample> adaptive_samples(DType t, SampleSize size) {
  Inputs in("adaptive_avg_pool2d", t, size);
  auto s = [](std::string name, const Tensor& x, Shape out, std::string error = "") {
    return Sample{std::move(name), {tensor(x), ints(std::move(out))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 40, 40}), {7, 6})};
  return {
      s("basic", in.values({2, 3, 7, 9}), {3, 4}),
      s("global", in.values({2, 4, 5, 6}), {1}),
      s("larger_than_input", in.values({1, 2, 3, 5}), {5, 7}),
      s("unbatched", in.values({3, 10, 7}), {4, 3}),
      s("transposed", in.values({2, 2, 7, 6}, true), {3, 2}),
      s("zero_output", in.values({1, 2, 4, 4}), {0, 2}),
      s("negative_output_size", in.values({1, 2, 4, 4}), {-1, 2}, "output_size must be non-negative"),
      s("empty_height", in.values({1, 2, 0, 4}), {2, 2}, "non-zero C, H and W"),
      s("rank_2", in.values({4, 4}), {2, 2}, "3-D [C, H, W] or 4-D"),
  };
}

// adaptive_avg_pool2d_backward(grad_output, input_size)
Expected adaptive_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0);
  const Shape in_shape = a.ints(1);
  const Planes pl = planes(in_shape);
  const int64_t oh_n = g.shape[g.shape.size() - 2], ow_n = g.shape.back();
  HostTensor gi(in_shape, a.out);
  int64_t k = 0;
  for (int64_t p = 0; p < pl.count; ++p) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow, ++k) {
        const int64_t h0 = start_of(oh, oh_n, pl.h), h1 = end_of(oh, oh_n, pl.h);
        const int64_t w0 = start_of(ow, ow_n, pl.w), w1 = end_of(ow, ow_n, pl.w);
        for (int64_t ih = h0; ih < h1; ++ih) {
          for (int64_t iw = w0; iw < w1; ++iw) {
            gi.f[(p * pl.h + ih) * pl.w + iw] += g.f[k] / static_cast<double>((h1 - h0) * (w1 - w0));
          }
        }
      }
    }
  }
  return {{gi}};
}

std::vector<Sample> adaptive_backward_samples(DType t, SampleSize size) {
  Inputs in("adaptive_avg_pool2d_backward", t, size);
  auto s = [](std::string name, const Tensor& g, Shape input, std::string error = "") {
    return Sample{std::move(name), {tensor(g), ints(std::move(input))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 7, 6}), {4, 16, 40, 40})};
  return {
      s("basic", in.values({2, 3, 3, 4}), {2, 3, 7, 9}),
      s("global", in.values({2, 4, 1, 1}), {2, 4, 5, 6}),
      s("larger_than_input_transposed", in.values({1, 2, 5, 7}, true), {1, 2, 3, 5}),
      s("unbatched", in.values({3, 4, 3}), {3, 10, 7}),
      s("batch_mismatch", in.values({2, 2, 3, 3}), {1, 2, 6, 6}, "expected grad_output of shape"),
  };
}

// ---- upsampling ----

// torch's index scale: 1 / scale_factor when given (> 0), else in / out; in A (float or double).
template <class A>
A index_scale(double factor, int64_t in, int64_t out) {
  return factor > 0 ? static_cast<A>(1.0 / factor) : static_cast<A>(in) / static_cast<A>(out);
}

int64_t nearest_source(int64_t o, int64_t in, int64_t out, double factor) {
  if (out == in) return o;
  if (out == 2 * in) return o / 2;
  const float v = static_cast<float>(o) * index_scale<float>(factor, in, out);  // torch computes it in float
  return std::min(static_cast<int64_t>(std::floor(v)), in - 1);
}

// The two taps and weights of a bilinear output position, in A as the kernel.
struct LinearTaps {
  int64_t i0, i1;
  double l0, l1;
};

template <class A>
LinearTaps linear_taps(int64_t o, int64_t in, int64_t out, bool align, double factor) {
  if (out == in) return {o, o, 1.0, 0.0};
  const A scale =
      align ? (out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0)) : index_scale<A>(factor, in, out);
  A src = align ? scale * static_cast<A>(o) : scale * (static_cast<A>(o) + A(0.5)) - A(0.5);
  src = std::max(src, A(0));
  const int64_t i0 = std::min(static_cast<int64_t>(src), in - 1);
  const A l1 = std::min(src - static_cast<A>(i0), A(1));
  return {i0, std::min(i0 + 1, in - 1), static_cast<double>(A(1) - l1), static_cast<double>(l1)};
}

LinearTaps taps(DType t, int64_t o, int64_t in, int64_t out, bool align, double factor) {
  return t == DType::Float64 ? linear_taps<double>(o, in, out, align, factor)
                             : linear_taps<float>(o, in, out, align, factor);
}

// Calls f(output index, input index, weight) for each tap of each output of
// an upsampling of `in_shape` ([N, C, H, W]) to (oh_n, ow_n).
template <class F>
void for_each_tap(bool bilinear, DType t, const Shape& in_shape, int64_t oh_n, int64_t ow_n, bool align, double sh,
                  double sw, F f) {
  const Planes pl = planes(in_shape);
  int64_t o = 0;
  for (int64_t p = 0; p < pl.count; ++p) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow, ++o) {
        const int64_t base = p * pl.h * pl.w;
        if (!bilinear) {
          f(o, base + nearest_source(oh, pl.h, oh_n, sh) * pl.w + nearest_source(ow, pl.w, ow_n, sw), 1.0);
          continue;
        }
        const LinearTaps h = taps(t, oh, pl.h, oh_n, align, sh), w = taps(t, ow, pl.w, ow_n, align, sw);
        f(o, base + h.i0 * pl.w + w.i0, h.l0 * w.l0);
        f(o, base + h.i0 * pl.w + w.i1, h.l0 * w.l1);
        f(o, base + h.i1 * pl.w + w.i0, h.l1 * w.l0);
        f(o, base + h.i1 * pl.w + w.i1, h.l1 * w.l1);
      }
    }
  }
}

// upsample_nearest2d(self, output_size, scales_h, scales_w) /
// upsample_bilinear2d(self, output_size, align_corners, scales_h, scales_w)
Expected upsample_ref(bool bilinear, const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const Shape size = a.ints(1);
  const size_t k = bilinear ? 3 : 2;
  HostTensor y(with_hw(x.shape, size[0], size[1]), a.out);
  std::vector<double> acc(static_cast<size_t>(y.numel()), 0.0);
  for_each_tap(bilinear, x.dtype, x.shape, size[0], size[1], bilinear && a.flag(2), a.number(k), a.number(k + 1),
               [&](int64_t o, int64_t i, double w) {
                 if (!bilinear) return y.floating() ? y.set(o, x.f[i]) : y.set_int(o, x.i[i]);
                 acc[o] += w * x.f[i];
               });
  if (bilinear) {
    for (int64_t o = 0; o < y.numel(); ++o) y.set(o, acc[o]);
  }
  return {{y}};
}

// upsample_*_backward(grad_output, input_size, [align_corners,] scales_h, scales_w)
Expected upsample_backward_ref(bool bilinear, const RefArgs& a) {
  const HostTensor g = a.tensor(0);
  const Shape in_shape = a.ints(1);
  const size_t k = bilinear ? 3 : 2;
  HostTensor gi(in_shape, a.out);
  for_each_tap(bilinear, g.dtype, in_shape, g.shape[2], g.shape[3], bilinear && a.flag(2), a.number(k), a.number(k + 1),
               [&](int64_t o, int64_t i, double w) { gi.f[i] += w * g.f[o]; });
  return {{gi}};
}

std::vector<Sample> upsample_samples(const std::string& op, bool bilinear, DType t, SampleSize size) {
  Inputs in(op, t, size);
  auto s = [&](std::string name, const Tensor& x, Shape out, bool align, double sh, double sw, std::string error = "") {
    Stack args = {tensor(x), ints(std::move(out))};
    if (bilinear) args.push_back(flag(align));
    args.push_back(real(sh));
    args.push_back(real(sw));
    return Sample{std::move(name), std::move(args), {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 25, 25}), {40, 39}, false, 0, 0)};
  std::vector<Sample> out = {
      s("up", in.values({2, 3, 4, 5}), {7, 9}, false, 0, 0),
      s("scale_factor", in.values({1, 2, 5, 6}), {7, 10}, false, 1.5, 1.7),
      s("double", in.values({2, 2, 3, 4}), {6, 8}, false, 2.0, 2.0),
      s("down", in.values({1, 3, 9, 8}), {4, 3}, false, 0, 0),
      s("same_height", in.values({2, 2, 5, 4}), {5, 7}, false, 0, 0),
      s("transposed", in.values({2, 2, 5, 4}, true), {8, 6}, false, 0, 0),
      s("zero_output", in.values({1, 2, 4, 4}), {0, 3}, false, 0, 0, "greater than 0"),
      s("rank_3", in.values({2, 4, 4}), {8, 8}, false, 0, 0, "4-D [N, C, H, W]"),
      s("one_output_size", in.values({1, 2, 4, 4}), {8}, false, 0, 0, "two ints"),
  };
  if (bilinear) {
    out.push_back(s("align_corners", in.values({2, 3, 4, 5}), {7, 9}, true, 0, 0));
    out.push_back(s("align_corners_down_to_one", in.values({1, 2, 9, 8}), {4, 1}, true, 0, 0));
  }
  return out;
}

std::vector<Sample> upsample_backward_samples(const std::string& op, bool bilinear, DType t, SampleSize size) {
  Inputs in(op, t, size);
  auto s = [&](std::string name, const Tensor& g, Shape input, bool align, double sh, double sw,
               std::string error = "") {
    Stack args = {tensor(g), ints(std::move(input))};
    if (bilinear) args.push_back(flag(align));
    args.push_back(real(sh));
    args.push_back(real(sw));
    return Sample{std::move(name), std::move(args), {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({4, 16, 40, 39}), {4, 16, 25, 25}, false, 0, 0)};
  std::vector<Sample> out = {
      s("up", in.values({2, 3, 7, 9}), {2, 3, 4, 5}, false, 0, 0),
      s("scale_factor", in.values({1, 2, 7, 10}), {1, 2, 5, 6}, false, 1.5, 1.7),
      s("down_transposed", in.values({1, 3, 4, 3}, true), {1, 3, 9, 8}, false, 0, 0),
      s("wrong_batch", in.values({2, 3, 7, 9}), {1, 3, 4, 5}, false, 0, 0, "does not match the input shape"),
  };
  if (bilinear) out.push_back(s("align_corners", in.values({2, 3, 7, 9}), {2, 3, 4, 5}, true, 0, 0));
  return out;
}

}  // namespace

void add_pooling_rows(std::vector<OpInfo>& rows) {
  const auto row = [&](auto&&... args) { add_pooling_family_row(rows, args...); };
  row(
      "max_pool2d", kFloatTypes, [](DType t, SampleSize n) { return max_pool_samples("max_pool2d", t, n); },
      max_pool_ref);
  row(
      "max_pool2d_with_indices", kFloatTypes,
      [](DType t, SampleSize n) { return max_pool_samples("max_pool2d_with_indices", t, n); },
      max_pool_with_indices_ref);
  row("max_pool2d_with_indices_backward", kFloatTypes, max_pool_backward_samples, max_pool_backward_ref);
  row("avg_pool2d", kFloatTypes, avg_pool_samples, avg_pool_ref);
  row("avg_pool2d_backward", kFloatTypes, avg_pool_backward_samples, avg_pool_backward_ref);
  row("adaptive_avg_pool2d", kFloatTypes, adaptive_samples, adaptive_ref);
  row("adaptive_avg_pool2d_backward", kFloatTypes, adaptive_backward_samples, adaptive_backward_ref);
  row(
      "upsample_nearest2d", kAllTypes,
      [](DType t, SampleSize n) { return upsample_samples("upsample_nearest2d", false, t, n); },
      [](const RefArgs& a) { return upsample_ref(false, a); });
  row(
      "upsample_nearest2d_backward", kFloatTypes,
      [](DType t, SampleSize n) { return upsample_backward_samples("upsample_nearest2d_backward", false, t, n); },
      [](const RefArgs& a) { return upsample_backward_ref(false, a); });
  row(
      "upsample_bilinear2d", kFloatTypes,
      [](DType t, SampleSize n) { return upsample_samples("upsample_bilinear2d", true, t, n); },
      [](const RefArgs& a) { return upsample_ref(true, a); });
  row(
      "upsample_bilinear2d_backward", kFloatTypes,
      [](DType t, SampleSize n) { return upsample_backward_samples("upsample_bilinear2d_backward", true, t, n); },
      [](const RefArgs& a) { return upsample_backward_ref(true, a); });
}

}  // namespace ember::testing
