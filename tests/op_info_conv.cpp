// Op-info rows of the convolution ops: convolution and convolution_backward
// (core/op_decls_conv.h). The reference is one naive loop over every
// (image, output pixel, input channel, kernel tap) in double, read in
// forward-convolution terms (x conv w = y): an ordinary convolution computes
// y from x, a transposed one x from y, and both backward passes scatter along
// the same loop.
#include <algorithm>
#include <array>
#include <optional>

#include "tests/op_info.h"

namespace ember::testing {
namespace {


// ---------------------------------------------------------------------------
// Arguments

struct ConvCall {
  Shape x, w;  // input and weight shapes (as the op takes them)
  bool bias = false;
  Shape stride{1}, padding{0}, dilation{1};
  bool transposed = false;
  Shape output_padding{0};
  int64_t groups = 1;
  bool strided_input = false;  // the input is a transposed view (last two dims swapped)
};

// One value per spatial dim, as (depth, height, width); 2-D convolutions have
// depth 1, 1-D ones height 1 too.
std::array<int64_t, 3> dhw(const Shape& v, size_t spatial, int64_t neutral) {
  std::array<int64_t, 3> out{neutral, neutral, neutral};
  for (size_t d = 0; d < spatial; ++d) out[3 - spatial + d] = v.size() == 1 ? v[0] : v[d];
  return out;
}

// The op's output shape for valid arguments.
Shape output_shape(const ConvCall& c) {
  const size_t spatial = c.x.size() - 2;
  const auto s = dhw(c.stride, spatial, 1), p = dhw(c.padding, spatial, 0), d = dhw(c.dilation, spatial, 1);
  const auto op = dhw(c.output_padding, spatial, 0);
  Shape out = {c.x[0], c.transposed ? c.w[1] * c.groups : c.w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    const size_t dim = 2 + i, k = 3 - spatial + i;
    const int64_t extent = d[k] * (c.w[dim] - 1) + 1;
    out.push_back(c.transposed ? (c.x[dim] - 1) * s[k] - 2 * p[k] + extent + op[k]
                               : (c.x[dim] + 2 * p[k] - extent) / s[k] + 1);
  }
  return out;
}

class Inputs {
 public:
  Inputs(DType t, uint64_t seed) : t_(t), gen_(seed) {}
  Tensor make(const Shape& s, bool strided = false) {
    if (!strided || s.size() < 2) return randn(s, TensorOptions(DType::Float64), &gen_).to(t_);
    Shape swapped = s;
    std::swap(swapped[s.size() - 1], swapped[s.size() - 2]);
    return randn(swapped, TensorOptions(DType::Float64), &gen_).to(t_).transpose(-1, -2);
  }

 private:
  DType t_;
  Generator gen_;
};

Stack conv_args(Inputs& in, const ConvCall& c) {
  const int64_t out_channels = c.transposed ? c.w[1] * c.groups : c.w[0];
  return {IValue::Payload(in.make(c.x, c.strided_input)),
          IValue::Payload(in.make(c.w)),
          c.bias ? IValue::Payload(in.make({out_channels})) : IValue(),
          IValue::Payload(c.stride),
          IValue::Payload(c.padding),
          IValue::Payload(c.dilation),
          IValue::Payload(c.transposed),
          IValue::Payload(c.output_padding),
          IValue::Payload(c.groups)};
}

Stack backward_args(Inputs& in, const ConvCall& c, Shape mask = {1, 1, 1}) {
  Stack s = conv_args(in, c);
  Stack out = {IValue::Payload(in.make(output_shape(c)))};
  out.push_back(s[0]);
  out.push_back(s[1]);
  for (size_t i = 3; i < s.size(); ++i) out.push_back(s[i]);
  out.push_back(IValue::Payload(mask));
  return out;
}

// The valid calls both ops are sampled with.
std::vector<std::pair<std::string, ConvCall>> valid_calls() {
  return {
      {"conv2d", {.x = {2, 3, 5, 6}, .w = {4, 3, 3, 3}, .bias = true, .padding = {1}}},
      {"batch1_nonsquare_strided", {.x = {1, 2, 6, 5}, .w = {3, 2, 2, 3}, .stride = {2, 1}, .padding = {1, 2}}},
      {"padding3_dilation2", {.x = {2, 2, 5, 4}, .w = {2, 2, 2, 3}, .bias = true, .padding = {3}, .dilation = {2}}},
      {"groups", {.x = {2, 4, 4, 5}, .w = {6, 2, 3, 2}, .bias = true, .padding = {1, 0}, .groups = 2}},
      {"depthwise", {.x = {1, 3, 5, 5}, .w = {6, 1, 3, 3}, .stride = {2}, .padding = {1}, .groups = 3}},
      {"strided_input", {.x = {2, 3, 5, 6}, .w = {2, 3, 3, 2}, .bias = true, .strided_input = true}},
      {"pointwise", {.x = {2, 3, 4, 3}, .w = {5, 3, 1, 1}, .bias = true}},
      {"conv1d", {.x = {2, 3, 7}, .w = {4, 3, 3}, .bias = true, .stride = {2}, .padding = {1}}},
      {"conv1d_dilated_groups", {.x = {1, 4, 9}, .w = {4, 2, 2}, .padding = {2}, .dilation = {3}, .groups = 2}},
      {"transposed",
       {.x = {2, 3, 3, 4},
        .w = {3, 2, 3, 3},
        .bias = true,
        .stride = {2},
        .padding = {1},
        .transposed = true,
        .output_padding = {1}}},
      {"transposed_groups_dilated",
       {.x = {1, 4, 3, 3},
        .w = {4, 1, 2, 3},
        .bias = true,
        .stride = {1, 2},
        .padding = {0, 1},
        .dilation = {2, 1},
        .transposed = true,
        .output_padding = {1, 1},
        .groups = 2}},
      {"transposed_conv1d",
       {.x = {2, 3, 4}, .w = {3, 2, 3}, .stride = {3}, .padding = {1}, .transposed = true, .output_padding = {2}}},
      // More than 8 output channels per group: the GEMM forward, not the direct one.
      {"wide", {.x = {2, 3, 5, 6}, .w = {10, 3, 3, 3}, .bias = true, .padding = {1}}},
      {"wide_groups_dilated",
       {.x = {1, 4, 6, 6}, .w = {18, 2, 3, 2}, .bias = true, .padding = {2, 1}, .dilation = {2, 1}, .groups = 2}},
      {"empty_batch", {.x = {0, 3, 5, 5}, .w = {2, 3, 3, 3}, .bias = true}},
      {"conv3d", {.x = {2, 3, 4, 5, 4}, .w = {4, 3, 3, 2, 3}, .bias = true, .padding = {1, 0, 1}}},
      {"conv3d_strided_dilated_groups",
       {.x = {1, 4, 5, 6, 5},
        .w = {6, 2, 2, 3, 2},
        .stride = {2, 1, 2},
        .padding = {1},
        .dilation = {1, 2, 1},
        .groups = 2}},
      {"conv3d_wide", {.x = {1, 2, 3, 4, 4}, .w = {10, 2, 2, 2, 2}, .bias = true}},
      {"conv3d_pointwise", {.x = {2, 3, 2, 3, 4}, .w = {5, 3, 1, 1, 1}}},
      {"conv3d_strided_input", {.x = {2, 2, 3, 4, 5}, .w = {3, 2, 2, 2, 2}, .bias = true, .strided_input = true}},
      {"transposed_conv3d",
       {.x = {1, 3, 2, 3, 3},
        .w = {3, 2, 2, 3, 2},
        .bias = true,
        .stride = {2},
        .padding = {1, 0, 1},
        .transposed = true,
        .output_padding = {1}}},
  };
}

// Bad arguments and a part of the error each must raise.
std::vector<std::tuple<std::string, ConvCall, std::string>> bad_calls() {
  return {
      {"wrong_channels", {.x = {2, 3, 5, 5}, .w = {4, 2, 3, 3}}, "channels"},
      {"wrong_channels_groups", {.x = {2, 4, 5, 5}, .w = {4, 1, 3, 3}, .groups = 2}, "channels"},
      {"transposed_wrong_channels", {.x = {2, 3, 5, 5}, .w = {4, 2, 3, 3}, .transposed = true}, "channels"},
      {"groups_not_dividing_input", {.x = {2, 3, 5, 5}, .w = {4, 1, 3, 3}, .groups = 2}, "groups (2) must divide"},
      {"groups_not_dividing_output", {.x = {2, 4, 5, 5}, .w = {3, 2, 3, 3}, .groups = 2}, "groups (2) must divide"},
      {"groups_zero", {.x = {2, 4, 5, 5}, .w = {4, 4, 3, 3}, .groups = 0}, "groups > 0"},
      {"kernel_too_large", {.x = {1, 2, 3, 3}, .w = {1, 2, 5, 5}, .padding = {0}}, "larger than the padded input"},
      {"weight_not_4d", {.x = {1, 2, 5, 5}, .w = {2, 2, 3}}, "4-D weight"},
      {"input_2d", {.x = {2, 5}, .w = {2, 2, 3}}, "3-D (N, C, L), 4-D (N, C, H, W) or 5-D"},
      {"conv3d_kernel_too_large", {.x = {1, 2, 3, 3, 3}, .w = {1, 2, 4, 2, 2}}, "kernel size (4x2x2"},
      {"conv3d_stride_two_values", {.x = {1, 2, 4, 4, 4}, .w = {2, 2, 2, 2, 2}, .stride = {1, 2}},
       "stride to have 1 or 3 values"},
      {"stride_zero", {.x = {1, 2, 5, 5}, .w = {2, 2, 3, 3}, .stride = {0}}, "stride > 0"},
      {"dilation_negative", {.x = {1, 2, 5, 5}, .w = {2, 2, 3, 3}, .dilation = {1, -1}}, "dilation > 0"},
      {"negative_padding", {.x = {1, 2, 5, 5}, .w = {2, 2, 3, 3}, .padding = {-1}}, "padding >= 0"},
      {"padding_three_values", {.x = {1, 2, 5, 5}, .w = {2, 2, 3, 3}, .padding = {1, 1, 1}}, "padding"},
      {"output_padding_too_large",
       {.x = {1, 2, 5, 5}, .w = {2, 2, 3, 3}, .stride = {2}, .transposed = true, .output_padding = {2}},
       "output_padding"},
      {"output_padding_not_transposed",
       {.x = {1, 2, 5, 5}, .w = {2, 2, 3, 3}, .output_padding = {1}},
       "output_padding"},
  };
}

// ---------------------------------------------------------------------------
// The reference

struct RefGeometry {
  int64_t batch, groups, cx, cy;              // x has cx channels, y cy (forward-convolution terms)
  std::array<int64_t, 3> xs, ys, k, s, p, d;  // (depth, height, width) of x, y, the kernel and the arguments
};

// Calls f(xi, yi, wi) for every product x[xi] * w[wi] that contributes to y[yi].
template <class F>
void for_each_tap(const RefGeometry& g, F f) {
  const int64_t cxg = g.cx / g.groups, cyg = g.cy / g.groups;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t gr = 0; gr < g.groups; ++gr)
      for (int64_t o = 0; o < cyg; ++o)
        for_each_index({g.ys[0], g.ys[1], g.ys[2]}, [&](const Shape& yo, int64_t y_at) {
          for (int64_t c = 0; c < cxg; ++c)
            for_each_index({g.k[0], g.k[1], g.k[2]}, [&](const Shape& tap, int64_t tap_at) {
              Shape xo(3);
              for (size_t a = 0; a < 3; ++a) {
                xo[a] = yo[a] * g.s[a] - g.p[a] + tap[a] * g.d[a];
                if (xo[a] < 0 || xo[a] >= g.xs[a]) return;
              }
              const int64_t x_plane = g.xs[0] * g.xs[1] * g.xs[2], y_plane = g.ys[0] * g.ys[1] * g.ys[2];
              const int64_t xi = (n * g.cx + gr * cxg + c) * x_plane + linear_index(xo, {g.xs[0], g.xs[1], g.xs[2]});
              const int64_t yi = (n * g.cy + gr * cyg + o) * y_plane + y_at;
              const int64_t wi = ((gr * cyg + o) * cxg + c) * (g.k[0] * g.k[1] * g.k[2]) + tap_at;
              f(xi, yi, wi);
            });
        });
}

// Geometry of a call given the op's input and weight (positions of the args as in `convolution`).
RefGeometry ref_geometry(const HostTensor& input, const HostTensor& weight, const RefArgs& a, size_t stride_arg) {
  const size_t spatial = static_cast<size_t>(input.dim() - 2);
  const bool transposed = a.flag(stride_arg + 3);
  ConvCall c{.x = input.shape,
             .w = weight.shape,
             .stride = a.ints(stride_arg),
             .padding = a.ints(stride_arg + 1),
             .dilation = a.ints(stride_arg + 2),
             .transposed = transposed,
             .output_padding = a.ints(stride_arg + 4),
             .groups = a.integer(stride_arg + 5)};
  const Shape out = output_shape(c);
  const Shape& xs = transposed ? out : input.shape;  // forward-convolution x
  const Shape& ys = transposed ? input.shape : out;
  auto sizes = [&](const Shape& t) { return dhw(Shape(t.begin() + 2, t.end()), spatial, 1); };
  return {xs[0],
          c.groups,
          xs[1],
          ys[1],
          sizes(xs),
          sizes(ys),
          sizes(weight.shape),
          dhw(c.stride, spatial, 1),
          dhw(c.padding, spatial, 0),
          dhw(c.dilation, spatial, 1)};
}

Expected convolution_ref(const RefArgs& a) {
  const HostTensor input = a.tensor(0), weight = a.tensor(1);
  const RefGeometry g = ref_geometry(input, weight, a, 3);
  const bool transposed = a.flag(6);
  ConvCall c{.x = input.shape,
             .w = weight.shape,
             .stride = a.ints(3),
             .padding = a.ints(4),
             .dilation = a.ints(5),
             .transposed = transposed,
             .output_padding = a.ints(7),
             .groups = a.integer(8)};
  HostTensor out(output_shape(c), a.out);
  const auto& sp = transposed ? g.xs : g.ys;
  const int64_t pixels = sp[0] * sp[1] * sp[2], channels = out.shape[1];
  if (!a.is_none(2)) {
    const HostTensor bias = a.tensor(2);
    for (int64_t k = 0; k < out.numel(); ++k) out.f[k] = bias.f[(k / pixels) % channels];
  }
  for_each_tap(g, [&](int64_t xi, int64_t yi, int64_t wi) {
    if (transposed)
      out.f[xi] += input.f[yi] * weight.f[wi];
    else
      out.f[yi] += input.f[xi] * weight.f[wi];
  });
  return {{out}, false, ""};
}

// convolution_backward(grad_output, input, weight, stride, padding, dilation, transposed, output_padding, groups, mask)
Expected convolution_backward_ref(const RefArgs& a) {
  const HostTensor gy = a.tensor(0), input = a.tensor(1), weight = a.tensor(2);
  const RefGeometry g = ref_geometry(input, weight, a, 3);
  const bool transposed = a.flag(6);
  const Shape mask = a.ints(9);
  HostTensor gi(input.shape, a.out), gw(weight.shape, a.out), gb({gy.shape[1]}, a.out);
  for_each_tap(g, [&](int64_t xi, int64_t yi, int64_t wi) {
    // Ordinary: y[yi] += x[xi] w[wi]; transposed: out[xi] += in[yi] w[wi].
    const int64_t in_i = transposed ? yi : xi, out_i = transposed ? xi : yi;
    gi.f[in_i] += gy.f[out_i] * weight.f[wi];
    gw.f[wi] += gy.f[out_i] * input.f[in_i];
  });
  const int64_t pixels = gy.numel() / std::max<int64_t>(1, gy.shape[0] * gy.shape[1]);
  for (int64_t k = 0; k < gy.numel(); ++k) gb.f[(k / pixels) % gy.shape[1]] += gy.f[k];
  std::vector<HostTensor> outs = {gi, gw, gb};
  for (size_t k = 0; k < 3; ++k) {
    if (mask[k] == 0) outs[k] = HostTensor({0}, a.out);
  }
  return {outs, false, ""};
}

// ---------------------------------------------------------------------------
// Samples

std::vector<Sample> convolution_samples(DType t, SampleSize size) {
  Inputs in(t, 4100 + static_cast<uint64_t>(t) * 31 + (size == SampleSize::Large ? 7 : 0));
  if (size == SampleSize::Large) {
    return {{"large", conv_args(in, {.x = {4, 8, 40, 40}, .w = {16, 8, 3, 3}, .bias = true, .padding = {1}})},
            {"large_transposed", conv_args(in, {.x = {4, 16, 20, 20},
                                                .w = {16, 8, 3, 3},
                                                .bias = true,
                                                .stride = {2},
                                                .padding = {1},
                                                .transposed = true,
                                                .output_padding = {1}})},
            {"large_3d", conv_args(in, {.x = {2, 4, 8, 12, 12}, .w = {8, 4, 3, 3, 3}, .bias = true, .padding = {1}})}};
  }
  std::vector<Sample> out;
  for (const auto& [name, call] : valid_calls()) out.push_back({name, conv_args(in, call)});
  for (const auto& [name, call, part] : bad_calls()) out.push_back({name, conv_args(in, call), {}, part});
  Stack mixed = conv_args(in, {.x = {1, 2, 4, 4}, .w = {2, 2, 3, 3}});
  mixed[1] = IValue::Payload(mixed[1].tensor().to(t == DType::Float64 ? DType::Float32 : DType::Float64));
  out.push_back({"mixed_dtypes", mixed, {}, "same dtype"});
  Stack bad_bias = conv_args(in, {.x = {1, 2, 4, 4}, .w = {4, 2, 3, 3}});
  bad_bias[2] = IValue::Payload(in.make({3}));
  out.push_back({"bias_wrong_size", bad_bias, {}, "bias of shape [4]"});
  return out;
}

std::vector<Sample> convolution_backward_samples(DType t, SampleSize size) {
  Inputs in(t, 5200 + static_cast<uint64_t>(t) * 31 + (size == SampleSize::Large ? 7 : 0));
  if (size == SampleSize::Large) {
    // Batch 10: three chunks of the weight-gradient sum.
    return {{"large", backward_args(in, {.x = {10, 4, 24, 24}, .w = {8, 4, 3, 3}, .padding = {1}})},
            {"large_transposed", backward_args(in, {.x = {10, 8, 12, 12},
                                                    .w = {8, 4, 3, 3},
                                                    .stride = {2},
                                                    .padding = {1},
                                                    .transposed = true,
                                                    .output_padding = {1}})},
            {"large_3d", backward_args(in, {.x = {5, 4, 6, 8, 8}, .w = {4, 4, 3, 3, 3}, .padding = {1}})}};
  }
  std::vector<Sample> out;
  for (const auto& [name, call] : valid_calls()) out.push_back({name, backward_args(in, call)});
  const ConvCall basic = {.x = {2, 3, 5, 6}, .w = {4, 3, 3, 3}, .padding = {1}};
  out.push_back({"only_weight_and_bias", backward_args(in, basic, {0, 1, 1})});
  out.push_back({"only_input", backward_args(in, basic, {1, 0, 0})});
  for (const auto& [name, call, part] : bad_calls()) {
    if (name == "input_2d" || name == "weight_not_4d") continue;  // no output shape to make a grad_output of
    Stack s = conv_args(in, call);
    Stack b = {IValue::Payload(in.make({1})), s[0], s[1]};
    for (size_t i = 3; i < s.size(); ++i) b.push_back(s[i]);
    b.push_back(IValue::Payload(Shape{1, 1, 1}));
    out.push_back({name, b, {}, part});
  }
  Stack wrong_grad = backward_args(in, basic);
  wrong_grad[0] = IValue::Payload(in.make({2, 4, 5, 5}));
  out.push_back({"grad_output_wrong_shape", wrong_grad, {}, "grad_output of shape [2, 4, 5, 6]"});
  Stack short_mask = backward_args(in, basic);
  short_mask[9] = IValue::Payload(Shape{1, 1});
  out.push_back({"mask_of_two", short_mask, {}, "output_mask of 3 values"});
  return out;
}

// K (Note [Tolerances]): an output element sums C_in / groups x kernel volume
// products; the backward pass sums grad_input over C_out / groups x kernel
// volume and grad_weight, grad_bias over the batch and the output positions.
int64_t convolution_length(const Sample& s, bool backward) {
  const Shape x = arg_sizes(s, backward ? 1 : 0), w = arg_sizes(s, backward ? 2 : 1);
  if (x.size() < 3 || w.size() < 3 || x[1] == 0) return 1;
  const bool transposed = std::get<bool>(s.args[6].payload());  // the same place in both ops' arguments
  const int64_t groups = std::get<int64_t>(s.args[8].payload());
  const int64_t out_channels = transposed ? w[1] * groups : w[0];
  if (!backward) return std::max<int64_t>(1, numel_of(w) / std::max<int64_t>(out_channels, 1));
  const Shape g = arg_sizes(s, 0);
  const int64_t positions = std::max(numel_of(g) / std::max<int64_t>(g.size() > 1 ? g[1] : 1, 1),
                                     numel_of(x) / x[1]);
  return std::max(numel_of(w) / x[1], positions);
}

const std::vector<DType> kConvDTypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

}  // namespace

void add_conv_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "convolution",
                  .dtypes = kConvDTypes,
                  .out_dtype = same_dtype,
                  .samples = convolution_samples,
                  .reference = convolution_ref,
                  .accumulation = [](const Sample& s) { return convolution_length(s, false); },
                  .differentiable = true});
  rows.push_back({.name = "convolution_backward",
                  .dtypes = kConvDTypes,
                  .out_dtype = same_dtype,
                  .samples = convolution_backward_samples,
                  .reference = convolution_backward_ref,
                  .accumulation = [](const Sample& s) { return convolution_length(s, true); },
                  .differentiable = true});
}

}  // namespace ember::testing
