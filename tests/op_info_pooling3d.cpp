// Op-info rows of the 3-D pooling ops (Note [The op-info table] in
// tests/op_info.h): max_pool3d_with_indices, avg_pool3d, adaptive_avg_pool3d
// and the backward op of each.
//
// The references are the definitions, as naive as possible: a window is the
// list of taps o * stride - pad + i * dilation in each of (d, h, w), each
// checked against the input's bounds; a backward op adds each output
// gradient into the input positions its forward read. Max-pooling inputs
// hold distinct values (no ties: the gradient is defined for gradcheck).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "tests/op_info.h"
#include "tests/op_info_pooling_inputs.h"

namespace ember::testing {
namespace {

using Triple = std::array<int64_t, 3>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
const std::vector<DType> kFloatTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

IValue ints(Shape v) { return IValue::Payload(std::move(v)); }
IValue flag(bool b) { return IValue::Payload(b); }
IValue tensor(const Tensor& t) { return IValue::Payload(t); }
IValue optional_int(std::optional<int64_t> v) { return v ? IValue(IValue::Payload(*v)) : IValue(); }

// ---- inputs ----

using Inputs = PoolingInputs;

// ---- shared reference pieces ----

Triple triple(const Shape& v) { return v.size() == 1 ? Triple{v[0], v[0], v[0]} : Triple{v[0], v[1], v[2]}; }

// [..., D, H, W] as volumes.
struct Volumes {
  int64_t count;
  Triple size;
  int64_t elements() const { return size[0] * size[1] * size[2]; }
};
Volumes volumes(const Shape& s) {
  const size_t n = s.size();
  const Triple size = {s[n - 3], s[n - 2], s[n - 1]};
  return {numel_of(s) / std::max<int64_t>(1, size[0] * size[1] * size[2]), size};
}
Shape with_dhw(Shape s, const Triple& v) {
  for (size_t a = 0; a < 3; ++a) s[s.size() - 3 + a] = v[a];
  return s;
}

// kernel, stride, padding, dilation, ceil_mode as the ops read them.
struct PoolArgs {
  Triple k, s, p, d;
  bool ceil;
  Triple out(const Triple& in) const {
    Triple o{};
    for (size_t a = 0; a < 3; ++a) o[a] = pooled(in[a], k[a], p[a], s[a], d[a], ceil);
    return o;
  }
};

PoolArgs make_args(const Shape& k, const Shape& s, const Shape& p, const Shape& d, bool ceil) {
  const Triple kernel = triple(k);
  return {kernel, s.empty() ? kernel : triple(s), triple(p), triple(d), ceil};
}

// Calls f(output index, output (od, oh, ow)) for every output of one volume, in order.
template <class F>
void for_each_output(const Triple& out, F f) {
  for_each_index({out[0], out[1], out[2]}, [&](const Shape& o, int64_t k) { f(k, o); });
}

// The in-range input positions (flat in the volume) of output o's window, in (d, h, w) order.
std::vector<int64_t> window_taps(const PoolArgs& g, const Triple& in, const Shape& o) {
  std::vector<int64_t> taps;
  for_each_index({g.k[0], g.k[1], g.k[2]}, [&](const Shape& t, int64_t) {
    Shape at(3);
    for (size_t a = 0; a < 3; ++a) {
      at[a] = o[a] * g.s[a] - g.p[a] + t[a] * g.d[a];
      if (at[a] < 0 || at[a] >= in[a]) return;
    }
    taps.push_back(linear_index(at, {in[0], in[1], in[2]}));
  });
  return taps;
}

// ---- max_pool3d_with_indices ----

Expected max_pool_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const PoolArgs g = make_args(a.ints(1), a.ints(2), a.ints(3), a.ints(4), a.flag(5));
  const Volumes v = volumes(x.shape);
  const Triple out = g.out(v.size);
  HostTensor y(with_dhw(x.shape, out), a.out), idx(with_dhw(x.shape, out), DType::Int64);
  const int64_t out_elements = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < v.count; ++p) {
    for_each_output(out, [&](int64_t k, const Shape& o) {
      double best = -kInf;
      const std::vector<int64_t> taps = window_taps(g, v.size, o);
      int64_t where = taps.empty() ? 0 : taps[0];
      for (int64_t t : taps) {
        const double val = x.f[p * v.elements() + t];
        if (val > best || std::isnan(val)) best = val, where = t;  // NaN wins, the last NaN of the window
      }
      y.set(p * out_elements + k, best);
      idx.set_int(p * out_elements + k, where);
    });
  }
  return {{y, idx}};
}

std::vector<Sample> max_pool_samples(DType t, SampleSize size) {
  Inputs in("max_pool3d_with_indices", t, size);
  auto s = [](std::string name, const Tensor& x, Shape k, Shape stride, Shape pad, Shape dil, bool ceil,
              std::string error = "") {
    return Sample{
        std::move(name), {tensor(x), ints(k), ints(stride), ints(pad), ints(dil), flag(ceil)}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.distinct({2, 8, 16, 20, 20}), {3}, {2}, {1}, {1}, false)};
  std::vector<Sample> out = {
      s("basic", in.distinct({2, 2, 5, 6, 7}), {3}, {2}, {1}, {1}, false),
      s("nonsquare_dilated", in.distinct({1, 2, 6, 7, 5}), {2, 3, 2}, {1, 2, 1}, {1, 0, 1}, {2, 1, 2}, false),
      s("ceil_mode", in.distinct({1, 2, 7, 6, 5}), {3}, {2}, {0}, {1}, true),
      s("ceil_mode_padding", in.distinct({1, 1, 5, 6, 7}), {3, 2, 3}, {2}, {1}, {1}, true),
      s("unbatched_default_stride", in.distinct({2, 4, 6, 5}), {2}, {}, {0}, {1}, false),
      s("transposed", in.distinct({1, 2, 4, 5, 6}, true), {2}, {1}, {0}, {1}, false),
      s("empty_batch", in.distinct({0, 2, 4, 4, 4}), {2}, {}, {0}, {1}, false),
      s("kernel_larger_than_padded_input", in.distinct({1, 1, 3, 3, 3}), {7}, {1}, {1}, {1}, false,
        "larger than the padded input"),
      s("padding_over_half_kernel", in.distinct({1, 1, 6, 6, 6}), {3}, {1}, {2}, {1}, false, "at most half"),
      s("stride_zero", in.distinct({1, 1, 6, 6, 6}), {3}, {0}, {0}, {1}, false, "stride must be positive"),
      s("rank_3", in.distinct({6, 6, 6}), {3}, {}, {0}, {1}, false, "4-D [C, D, H, W] or 5-D"),
      s("kernel_two_values", in.distinct({1, 1, 6, 6, 6}), {3, 3}, {}, {0}, {1}, false,
        "kernel_size must be one int or three"),
  };
  if (is_floating_point(t)) {
    out.push_back(s("special",
                    in.exact({1, 2, 2, 2, 2}, {1, kNaN, 3, kNaN, -kInf, -kInf, 2, 0.5,  //
                                               -kInf, -kInf, -kInf, -kInf, kInf, 0, -kInf, kNaN}),
                    {2}, {}, {0}, {1}, false));
  }
  return out;
}

// max_pool3d_with_indices_backward(grad_output, indices, input_size)
Expected max_pool_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0), idx = a.tensor(1);
  const Shape in_shape = a.ints(2);
  const Volumes v = volumes(in_shape);
  const int64_t per = g.numel() / std::max<int64_t>(1, v.count);
  HostTensor gi(in_shape, a.out);
  for (int64_t p = 0; p < v.count; ++p) {
    for (int64_t k = 0; k < per; ++k) {
      const int64_t i = idx.i[p * per + k];
      if (i < 0 || i >= v.elements()) return Expected::raises("outside the input volume");
      gi.f[p * v.elements() + i] += g.f[p * per + k];
    }
  }
  return {{gi}};
}

std::vector<Sample> max_pool_backward_samples(DType t, SampleSize size) {
  Inputs in("max_pool3d_with_indices_backward", t, size);
  auto s = [](std::string name, const Tensor& g, const Tensor& idx, Shape input, std::string error = "") {
    return Sample{std::move(name), {tensor(g), tensor(idx), ints(std::move(input))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) {
    return {s("large", in.values({2, 8, 8, 10, 10}), in.indices({2, 8, 8, 10, 10}, 16 * 20 * 20), {2, 8, 16, 20, 20})};
  }
  Tensor bad = in.indices({1, 1, 2, 2, 2}, 64);
  bad.fill_(64);
  return {
      s("basic", in.values({2, 2, 3, 3, 4}), in.indices({2, 2, 3, 3, 4}, 5 * 6 * 7), {2, 2, 5, 6, 7}),
      s("unbatched", in.values({2, 3, 3, 2}), in.indices({2, 3, 3, 2}, 4 * 6 * 5), {2, 4, 6, 5}),
      s("transposed_grad", in.values({1, 2, 2, 4, 3}, true), in.indices({1, 2, 2, 4, 3}, 4 * 5 * 6), {1, 2, 4, 5, 6}),
      s("index_out_of_range", in.values({1, 1, 2, 2, 2}), bad, {1, 1, 4, 4, 4}, "outside the input volume"),
      s("shape_mismatch", in.values({1, 1, 2, 2, 2}), in.indices({1, 1, 2, 2, 3}, 64), {1, 1, 4, 4, 4},
        "differs from the indices"),
  };
}

// ---- avg_pool3d ----

struct AvgArgs {
  PoolArgs g;
  bool count_include_pad;
  std::optional<int64_t> divisor;
};

// avg_pool3d's arguments from position `kernel` on (kernel, stride, padding, ceil_mode, count_include_pad, divisor).
AvgArgs avg_args(const RefArgs& a, size_t kernel) {
  AvgArgs r{make_args(a.ints(kernel), a.ints(kernel + 1), a.ints(kernel + 2), {1}, a.flag(kernel + 3)),
            a.flag(kernel + 4), std::nullopt};
  if (!a.is_none(kernel + 5)) r.divisor = a.integer(kernel + 5);
  return r;
}

// The divisor of output o's window: its taps inside the padded input, inside the input, or the override.
int64_t avg_divisor(const AvgArgs& a, const Triple& in, const Shape& o, int64_t taps_inside) {
  if (a.divisor) return *a.divisor;
  if (!a.count_include_pad) return taps_inside;
  int64_t padded = 1;
  for (size_t d = 0; d < 3; ++d) {
    int64_t n = 0;
    for (int64_t i = 0; i < a.g.k[d]; ++i) n += o[d] * a.g.s[d] - a.g.p[d] + i < in[d] + a.g.p[d] ? 1 : 0;
    padded *= n;
  }
  return padded;
}

Expected avg_pool_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const AvgArgs w = avg_args(a, 1);
  const Volumes v = volumes(x.shape);
  const Triple out = w.g.out(v.size);
  HostTensor y(with_dhw(x.shape, out), a.out);
  const int64_t out_elements = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < v.count; ++p) {
    for_each_output(out, [&](int64_t k, const Shape& o) {
      const std::vector<int64_t> taps = window_taps(w.g, v.size, o);
      double sum = 0;
      for (int64_t t : taps) sum += x.f[p * v.elements() + t];
      const int64_t n = static_cast<int64_t>(taps.size());
      y.set(p * out_elements + k, n == 0 ? 0.0 : sum / static_cast<double>(avg_divisor(w, v.size, o, n)));
    });
  }
  return {{y}};
}

std::vector<Sample> avg_pool_samples(DType t, SampleSize size) {
  Inputs in("avg_pool3d", t, size);
  auto s = [](std::string name, const Tensor& x, Shape k, Shape stride, Shape pad, bool ceil, bool include_pad,
              std::optional<int64_t> divisor, std::string error = "") {
    return Sample{std::move(name),
                  {tensor(x), ints(k), ints(stride), ints(pad), flag(ceil), flag(include_pad), optional_int(divisor)},
                  {},
                  std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({2, 8, 16, 20, 20}), {3}, {2}, {1}, false, true, {})};
  return {
      s("basic", in.values({2, 2, 5, 6, 7}), {3}, {2}, {1}, false, true, {}),
      s("exclude_pad_ceil_nonsquare", in.values({1, 2, 6, 7, 5}), {3, 2, 3}, {2, 1, 2}, {1, 1, 0}, true, false, {}),
      s("ceil_include_pad", in.values({1, 2, 5, 5, 6}), {3}, {2}, {1}, true, true, {}),
      s("divisor_override", in.values({1, 2, 4, 4, 4}), {2}, {}, {0}, false, true, 3),
      s("unbatched", in.values({2, 4, 5, 6}), {2, 3, 2}, {1, 2, 1}, {0}, false, true, {}),
      s("transposed", in.values({1, 2, 4, 5, 6}, true), {2}, {}, {1}, false, true, {}),
      s("divisor_zero", in.values({1, 1, 4, 4, 4}), {2}, {}, {0}, false, true, 0, "divisor_override must not be zero"),
      s("kernel_larger_than_padded_input", in.values({1, 1, 3, 3, 3}), {8}, {}, {2}, false, true, {},
        "larger than the padded input"),
      s("rank_3", in.values({4, 4, 4}), {2}, {}, {0}, false, true, {}, "4-D [C, D, H, W] or 5-D"),
  };
}

// avg_pool3d_backward(grad_output, input_size, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override)
Expected avg_pool_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0);
  const Shape in_shape = a.ints(1);
  const AvgArgs w = avg_args(a, 2);
  const Volumes v = volumes(in_shape);
  const Triple out = w.g.out(v.size);
  if (g.shape != with_dhw(in_shape, out)) return Expected::raises("expected grad_output of shape");
  HostTensor gi(in_shape, a.out);
  const int64_t out_elements = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < v.count; ++p) {
    for_each_output(out, [&](int64_t k, const Shape& o) {
      const std::vector<int64_t> taps = window_taps(w.g, v.size, o);
      const int64_t n = static_cast<int64_t>(taps.size());
      if (n == 0) return;
      const double share = g.f[p * out_elements + k] / static_cast<double>(avg_divisor(w, v.size, o, n));
      for (int64_t t : taps) gi.f[p * v.elements() + t] += share;
    });
  }
  return {{gi}};
}

std::vector<Sample> avg_pool_backward_samples(DType t, SampleSize size) {
  Inputs in("avg_pool3d_backward", t, size);
  auto s = [](std::string name, const Tensor& g, Shape input, Shape k, Shape stride, Shape pad, bool ceil,
              bool include_pad, std::optional<int64_t> divisor, std::string error = "") {
    return Sample{std::move(name),
                  {tensor(g), ints(std::move(input)), ints(k), ints(stride), ints(pad), flag(ceil), flag(include_pad),
                   optional_int(divisor)},
                  {},
                  std::move(error)};
  };
  if (size == SampleSize::Large) {
    return {s("large", in.values({2, 8, 8, 10, 10}), {2, 8, 16, 20, 20}, {3}, {2}, {1}, false, true, {})};
  }
  return {
      s("basic", in.values({2, 2, 3, 3, 4}), {2, 2, 5, 6, 7}, {3}, {2}, {1}, false, true, {}),
      s("exclude_pad_ceil_nonsquare", in.values({1, 2, 4, 8, 3}), {1, 2, 6, 7, 5}, {3, 2, 3}, {2, 1, 2}, {1, 1, 0},
        true, false, {}),
      s("divisor_override_transposed", in.values({1, 2, 2, 2, 2}, true), {1, 2, 4, 4, 4}, {2}, {}, {0}, false, true, 3),
      s("unbatched", in.values({2, 4, 2, 5}), {2, 4, 5, 6}, {2, 3, 2}, {1, 2, 1}, {0}, false, true, {}),
      s("wrong_grad_shape", in.values({1, 1, 2, 3, 2}), {1, 1, 4, 4, 4}, {2}, {}, {0}, false, true, {},
        "expected grad_output of shape"),
  };
}

// ---- adaptive_avg_pool3d ----

// Output o of `out` reads input [floor(o in / out), ceil((o + 1) in / out)).
std::array<int64_t, 2> adaptive_range(int64_t o, int64_t out, int64_t in) {
  return {(o * in) / out, ((o + 1) * in + out - 1) / out};
}

// Output o's window: per dim its input range; mean() divides a sum by the
// window's depth, then height, then width.
struct AdaptiveWindow {
  std::array<std::array<int64_t, 2>, 3> r;
  double mean(double sum) const {
    return sum / static_cast<double>(r[0][1] - r[0][0]) / static_cast<double>(r[1][1] - r[1][0]) /
           static_cast<double>(r[2][1] - r[2][0]);
  }
  // Calls f(flat input position) for every input of the window.
  template <class F>
  void for_each(const Triple& in, F f) const {
    for (int64_t d = r[0][0]; d < r[0][1]; ++d)
      for (int64_t h = r[1][0]; h < r[1][1]; ++h)
        for (int64_t w = r[2][0]; w < r[2][1]; ++w) f((d * in[1] + h) * in[2] + w);
  }
};

AdaptiveWindow adaptive_window(const Triple& out, const Triple& in, const Shape& o) {
  AdaptiveWindow w{};
  for (size_t a = 0; a < 3; ++a) w.r[a] = adaptive_range(o[a], out[a], in[a]);
  return w;
}

Expected adaptive_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const Shape size = a.ints(1);
  if (size.size() != 1 && size.size() != 3) return Expected::raises("output_size must be one int or three");
  const Triple out = triple(size);
  const Volumes v = volumes(x.shape);
  HostTensor y(with_dhw(x.shape, out), a.out);
  const int64_t out_elements = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < v.count; ++p) {
    for_each_output(out, [&](int64_t k, const Shape& o) {
      const AdaptiveWindow w = adaptive_window(out, v.size, o);
      double sum = 0;
      w.for_each(v.size, [&](int64_t at) { sum += x.f[p * v.elements() + at]; });
      y.set(p * out_elements + k, w.mean(sum));
    });
  }
  return {{y}};
}

std::vector<Sample> adaptive_samples(DType t, SampleSize size) {
  Inputs in("adaptive_avg_pool3d", t, size);
  auto s = [](std::string name, const Tensor& x, Shape out, std::string error = "") {
    return Sample{std::move(name), {tensor(x), ints(std::move(out))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({2, 8, 16, 20, 20}), {5, 7, 6})};
  return {
      s("basic", in.values({2, 2, 5, 6, 7}), {2, 3, 4}),
      s("one_value", in.values({1, 2, 5, 5, 6}), {3}),
      s("global_unbatched", in.values({2, 4, 5, 6}), {1}),
      s("larger_than_input_transposed", in.values({1, 1, 2, 3, 2}, true), {3, 4, 5}),
      s("empty_output", in.values({1, 1, 2, 2, 2}), {0, 1, 1}),
      s("two_values", in.values({1, 1, 2, 2, 2}), {1, 1}, "output_size must be one int or three"),
      s("rank_3", in.values({2, 2, 2}), {1}, "4-D [C, D, H, W] or 5-D"),
  };
}

// adaptive_avg_pool3d_backward(grad_output, input_size)
Expected adaptive_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0);
  const Shape in_shape = a.ints(1);
  if (g.shape.size() != in_shape.size()) return Expected::raises("does not match the input shape");
  const Volumes v = volumes(in_shape);
  const Triple out = {g.shape[g.shape.size() - 3], g.shape[g.shape.size() - 2], g.shape.back()};
  HostTensor gi(in_shape, a.out);
  const int64_t out_elements = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < v.count; ++p) {
    for_each_output(out, [&](int64_t k, const Shape& o) {
      const AdaptiveWindow w = adaptive_window(out, v.size, o);
      const double share = w.mean(g.f[p * out_elements + k]);
      w.for_each(v.size, [&](int64_t at) { gi.f[p * v.elements() + at] += share; });
    });
  }
  return {{gi}};
}

std::vector<Sample> adaptive_backward_samples(DType t, SampleSize size) {
  Inputs in("adaptive_avg_pool3d_backward", t, size);
  auto s = [](std::string name, const Tensor& g, Shape input, std::string error = "") {
    return Sample{std::move(name), {tensor(g), ints(std::move(input))}, {}, std::move(error)};
  };
  if (size == SampleSize::Large) return {s("large", in.values({2, 8, 5, 7, 6}), {2, 8, 16, 20, 20})};
  return {
      s("basic", in.values({2, 2, 2, 3, 4}), {2, 2, 5, 6, 7}),
      s("unbatched_transposed", in.values({2, 3, 2, 3}, true), {2, 4, 5, 6}),
      s("larger_than_input", in.values({1, 1, 3, 4, 5}), {1, 1, 2, 3, 2}),
      s("wrong_rank", in.values({1, 2, 2, 2}), {1, 1, 4, 4, 4}, "does not match the input shape"),
  };
}

}  // namespace

void add_pooling3d_rows(std::vector<OpInfo>& rows) {
  auto row = [&](std::string name, std::function<std::vector<Sample>(DType, SampleSize)> samples,
                 std::function<Expected(const RefArgs&)> reference) {
    const bool exact = name == "max_pool3d_with_indices";  // moves input values (Note [Tolerances])
    rows.push_back({.name = std::move(name),
                    .dtypes = kFloatTypes,
                    .out_dtype = same_dtype,
                    .samples = std::move(samples),
                    .reference = std::move(reference),
                    .exact = exact,
                    .accumulation = largest_arg_numel,
                    .differentiable = true});
  };
  row("max_pool3d_with_indices", max_pool_samples, max_pool_ref);
  row("max_pool3d_with_indices_backward", max_pool_backward_samples, max_pool_backward_ref);
  row("avg_pool3d", avg_pool_samples, avg_pool_ref);
  row("avg_pool3d_backward", avg_pool_backward_samples, avg_pool_backward_ref);
  row("adaptive_avg_pool3d", adaptive_samples, adaptive_ref);
  row("adaptive_avg_pool3d_backward", adaptive_backward_samples, adaptive_backward_ref);
}

}  // namespace ember::testing
