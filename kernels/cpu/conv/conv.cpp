// CPU kernels of the convolution ops: convolution and convolution_backward
// (core/op_decls_conv.h), for conv1d, conv2d, conv3d and conv_transpose2d.
//
// Note [One convolution op]
// As in PyTorch, one op covers every convolution: a 3-D input (N, C, L) is
// computed as a 2-D convolution with a unit height (a contiguous (N, C, L)
// buffer *is* a (N, C, 1, L) one), a 4-D one as a 3-D convolution with a unit
// depth, and a transposed convolution is the input
// gradient of the ordinary convolution that maps its output back to its input.
// So every case reduces to a ConvGeometry in "forward convolution" terms and
// the three GEMM-based routines of conv_gemm.{h,cpp}:
//
//   op                          ordinary conv (x conv w = y)   transposed (t = convT(u, w))
//   convolution                 conv_forward(x, w) + bias        conv_input_grad(u, w) + bias
//   backward: input gradient    conv_input_grad(grad_y, w)       conv_forward(grad_t, w)
//   backward: weight gradient   conv_weight_grad(grad_y, x)      conv_weight_grad(u, grad_t)
//   backward: bias gradient     channel sums of grad_y           channel sums of grad_t
//
// bfloat16 operands stay bfloat16 where the CPU has the bf16 GEMM
// (kernels/cpu/linalg/gemm_bf16.h) and the GEMMs are deep enough for it
// (compute_dtype): the routines unfold them in bf16 and multiply them into
// float32 results, rounded to bf16 once. float16, and other bfloat16
// convolutions, are widened to float32, computed there and rounded once, as
// PyTorch's CPU kernels do. Every argument check lives in check_convolution,
// which both ops (and so the functional and the boxed path) go through.
#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <string>

#include "core/dtype_dispatch.h"
#include "core/op_decls_conv.h"
#include "core/tensor_util.h"
#include "kernels/cpu/conv/conv_gemm.h"
#include "kernels/cpu/linalg/gemm_bf16.h"

namespace ember {
namespace {

using cpu::ConvGeometry;

// One value per spatial dim (depth, height, width); a 2-D convolution has
// depth 1, a 1-D one height 1 too.
using Triple = std::array<int64_t, 3>;

// An int[] argument with one entry, or one per spatial dim, as (depth, height,
// width); `neutral` fills the dims the input lacks (1 for stride, 0 for padding).
Triple spatial_triple(const char* op, const char* name, IntArrayRef v, int64_t spatial, int64_t neutral,
                      const Tensor& input) {
  EMBER_CHECK(v.size() == 1 || static_cast<int64_t>(v.size()) == spatial, op, ": expected ", name, " to have 1 or ",
              spatial, " values for an input of shape ", input.sizes(), ", got ", v);
  Triple out{neutral, neutral, neutral};
  for (int64_t d = 0; d < spatial; ++d) out[3 - spatial + d] = v.size() == 1 ? v[0] : v[d];
  return out;
}

// The spatial sizes of a 3-D, 4-D or 5-D tensor as (depth, height, width), 1 where it has none.
Triple spatial_sizes(const Tensor& t) {
  Triple out{1, 1, 1};
  const int64_t spatial = t.dim() - 2;
  for (int64_t d = 0; d < spatial; ++d) out[3 - spatial + d] = t.size(2 + d);
  return out;
}

// The last `spatial` values of v joined by "x": "5x5".
std::string joined(const Triple& v, int64_t spatial) {
  std::string out;
  for (int64_t d = 3 - spatial; d < 3; ++d) out += (out.empty() ? "" : "x") + std::to_string(v[d]);
  return out;
}

// What check_convolution derives from valid arguments.
struct ConvSetup {
  ConvGeometry geometry;   // in forward-convolution terms (see the Note)
  DimVector output_sizes;  // of the op's result, 3-D, 4-D or 5-D like the input
  int64_t output_channels = 0;
};

// Checks the arguments of a convolution (ordinary or transposed) and derives
// its geometry. Messages name the op, the shapes and what was expected.
ConvSetup check_convolution(const char* op, const Tensor& input, const Tensor& weight,
                            const std::optional<Tensor>& bias, IntArrayRef stride_arg, IntArrayRef padding_arg,
                            IntArrayRef dilation_arg, bool transposed, IntArrayRef output_padding_arg, int64_t groups) {
  EMBER_CHECK(input.dim() >= 3 && input.dim() <= 5, op,
              ": expected a 3-D (N, C, L), 4-D (N, C, H, W) or 5-D (N, C, D, H, W) input, got shape ", input.sizes());
  EMBER_CHECK(weight.dim() == input.dim(), op, ": expected a ", input.dim(), "-D weight for the ", input.dim(),
              "-D input of shape ", input.sizes(), ", got weight of shape ", weight.sizes());
  EMBER_CHECK(input.device().is_cpu() && weight.device().is_cpu(), op, ": the CPU kernel got input on ", input.device(),
              " and weight on ", weight.device());
  EMBER_CHECK(input.dtype() == weight.dtype(), op, ": expected input and weight to have the same dtype, got ",
              input.dtype(), " and ", weight.dtype());
  EMBER_CHECK(groups > 0, op, ": expected groups > 0, got ", groups);
  const int64_t spatial = input.dim() - 2;
  const Triple stride = spatial_triple(op, "stride", stride_arg, spatial, 1, input);
  const Triple padding = spatial_triple(op, "padding", padding_arg, spatial, 0, input);
  const Triple dilation = spatial_triple(op, "dilation", dilation_arg, spatial, 1, input);
  const Triple output_padding = spatial_triple(op, "output_padding", output_padding_arg, spatial, 0, input);
  for (int d = 0; d < 3; ++d) {
    EMBER_CHECK(stride[d] > 0, op, ": expected stride > 0, got ", stride_arg);
    EMBER_CHECK(dilation[d] > 0, op, ": expected dilation > 0, got ", dilation_arg);
    EMBER_CHECK(padding[d] >= 0, op, ": expected padding >= 0, got ", padding_arg);
    if (transposed) {
      EMBER_CHECK(output_padding[d] >= 0 && output_padding[d] < std::max(stride[d], dilation[d]), op,
                  ": expected 0 <= output_padding < max(stride, dilation) in each dim, got output_padding ",
                  output_padding_arg, " with stride ", stride_arg, " and dilation ", dilation_arg);
    } else {
      EMBER_CHECK(output_padding[d] == 0, op, ": output_padding is only for transposed convolutions, got ",
                  output_padding_arg);
    }
  }

  const int64_t in_ch = input.size(1);
  EMBER_CHECK(weight.size(0) % groups == 0, op, ": groups (", groups, ") must divide the weight's first dim ",
              "(weight of shape ", weight.sizes(), ")");
  EMBER_CHECK(in_ch % groups == 0, op, ": groups (", groups, ") must divide the input channels (input of shape ",
              input.sizes(), ")");
  int64_t out_ch = 0;
  if (transposed) {
    EMBER_CHECK(in_ch == weight.size(0), op, ": expected the input to have weight.size(0) = ", weight.size(0),
                " channels for a transposed convolution (weight of shape ", weight.sizes(),
                "), but got input of shape ", input.sizes(), " with ", in_ch, " channels");
    out_ch = weight.size(1) * groups;
  } else {
    EMBER_CHECK(in_ch == weight.size(1) * groups, op,
                ": expected the input to have weight.size(1) * groups = ", weight.size(1) * groups,
                " channels (weight of shape ", weight.sizes(), ", groups ", groups, "), but got input of shape ",
                input.sizes(), " with ", in_ch, " channels");
    out_ch = weight.size(0);
  }
  if (bias) {
    EMBER_CHECK(bias->dtype() == input.dtype(), op, ": expected bias to have the input's dtype ", input.dtype(),
                ", got ", bias->dtype());
    EMBER_CHECK(bias->dim() == 1 && bias->size(0) == out_ch, op, ": expected a bias of shape [", out_ch,
                "] (the output channels), got shape ", bias->sizes());
  }

  const Triple in_size = spatial_sizes(input), kernel = spatial_sizes(weight);
  EMBER_CHECK(kernel[0] > 0 && kernel[1] > 0 && kernel[2] > 0, op,
              ": expected a non-empty kernel, got weight of shape ", weight.sizes());
  const Triple padded_size = {in_size[0] + 2 * padding[0], in_size[1] + 2 * padding[1], in_size[2] + 2 * padding[2]};
  Triple out_size{};
  for (int d = 0; d < 3; ++d) {
    const int64_t extent = dilation[d] * (kernel[d] - 1) + 1;  // the kernel's reach, dilation included
    if (transposed) {
      out_size[d] = (in_size[d] - 1) * stride[d] - 2 * padding[d] + extent + output_padding[d];
      EMBER_CHECK(out_size[d] > 0, op, ": the transposed convolution of input ", input.sizes(), " with weight ",
                  weight.sizes(), ", stride ", stride_arg, ", padding ", padding_arg, " and dilation ", dilation_arg,
                  " has a non-positive output size ", out_size[d]);
    } else {
      EMBER_CHECK(padded_size[d] >= extent, op, ": the kernel size (", joined(kernel, spatial), ", dilation ",
                  dilation_arg, ") is larger than the padded input size (", joined(padded_size, spatial), "; input ",
                  input.sizes(), ", padding ", padding_arg, ")");
      out_size[d] = (padded_size[d] - extent) / stride[d] + 1;
    }
  }

  ConvSetup s;
  ConvGeometry& g = s.geometry;
  g.batch = input.size(0);
  g.groups = groups;
  // Forward-convolution terms: a transposed convolution's output is the x of the convolution it transposes.
  g.in_channels = transposed ? out_ch : in_ch;
  g.out_channels = transposed ? in_ch : out_ch;
  const Triple x_size = transposed ? out_size : in_size, y_size = transposed ? in_size : out_size;
  g.in_d = x_size[0], g.in_h = x_size[1], g.in_w = x_size[2];
  g.out_d = y_size[0], g.out_h = y_size[1], g.out_w = y_size[2];
  g.kernel_d = kernel[0], g.kernel_h = kernel[1], g.kernel_w = kernel[2];
  g.stride_d = stride[0], g.stride_h = stride[1], g.stride_w = stride[2];
  g.pad_d = padding[0], g.pad_h = padding[1], g.pad_w = padding[2];
  g.dilation_d = dilation[0], g.dilation_h = dilation[1], g.dilation_w = dilation[2];
  s.output_channels = out_ch;
  s.output_sizes = {input.size(0), out_ch};
  for (int64_t d = 3 - spatial; d < 3; ++d) s.output_sizes.push_back(out_size[d]);
  return s;
}

// The bf16 GEMM multiplies 32 values of k at a time (a shallower product is
// padded with zeros) and packs its operands on every call, so a GEMM of
// depth below 32 runs faster widened to float32 (the forward of the demo
// CNN's 1 -> 32 channel 3x3 layer, depth 9, took 1.1x as long in bf16).
constexpr int64_t kMinBf16GemmDepth = 32;

// The dtype the routines of a convolution of `t` read, where `gemm_depth` is
// the smallest depth (k) of the GEMMs it runs: float32 and float64 stay,
// bfloat16 stays where the bf16 GEMM runs and is deep enough, the rest widen
// to float32.
DType compute_dtype(DType t, int64_t gemm_depth) {
  if (t == DType::Float64) return t;
  if (t == DType::BFloat16 && gemm_depth >= kMinBf16GemmDepth && cpu::gemm_bf16_available()) return t;
  return DType::Float32;
}

// The dtype they write results in (and read the bias in): cpu::ConvAcc of the compute dtype.
DType result_dtype(DType ct) { return ct == DType::BFloat16 ? DType::Float32 : ct; }

// t as a contiguous tensor of dtype ct (no copy when it already is one).
Tensor prepared(const Tensor& t, DType ct) { return (t.dtype() == ct ? t : t.to(ct)).contiguous(); }

// Calls f.template operator()<T>() with T = float, double or BFloat16 for the compute dtype.
template <class F>
void dispatch_compute(DType ct, F&& f) {
  if (ct == DType::Float64)
    f.template operator()<double>();
  else if (ct == DType::BFloat16)
    f.template operator()<BFloat16>();
  else
    f.template operator()<float>();
}

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                       IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                       int64_t groups) {
  const ConvSetup s = check_convolution("convolution", input, weight, bias, stride, padding, dilation, transposed,
                                        output_padding, groups);
  const ConvGeometry& g = s.geometry;
  // conv_forward multiplies over (c, ki, kj), conv_input_grad over the output channels of a group.
  const int64_t depth = transposed ? g.out_per_group() : g.col_rows();
  const DType ct = compute_dtype(input.dtype(), depth), rt = result_dtype(ct);
  const Tensor x = prepared(input, ct), w = prepared(weight, ct);
  const Tensor b = bias ? prepared(*bias, rt) : Tensor();
  Tensor out = make_empty(s.output_sizes, rt, input.device());
  if (out.numel() > 0) {
    dispatch_compute(ct, [&]<class T>() {
      using R = cpu::ConvAcc<T>;
      const R* pb = b.defined() ? b.data_ptr<R>() : nullptr;
      if (!transposed) {
        cpu::conv_forward<T>(g, x.data_ptr<T>(), w.data_ptr<T>(), pb, out.data_ptr<R>());
      } else {
        cpu::conv_input_grad<T>(g, x.data_ptr<T>(), w.data_ptr<T>(), out.data_ptr<R>());
        if (pb != nullptr) cpu::add_channel_bias<R>(out.data_ptr<R>(), pb, g.batch, g.in_channels, g.in_pixels());
      }
    });
  }
  return rt == input.dtype() ? out : out.to(input.dtype());
}

TensorTriple convolution_backward_cpu(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                      IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                      IntArrayRef output_padding, int64_t groups, IntArrayRef output_mask) {
  const ConvSetup s = check_convolution("convolution_backward", input, weight, std::nullopt, stride, padding, dilation,
                                        transposed, output_padding, groups);
  EMBER_CHECK(output_mask.size() == 3, "convolution_backward: expected an output_mask of 3 values, got ", output_mask);
  EMBER_CHECK(grad_output.dtype() == input.dtype(), "convolution_backward: expected grad_output to have the input's ",
              "dtype ", input.dtype(), ", got ", grad_output.dtype());
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(s.output_sizes), "convolution_backward: expected grad_output of ",
              "shape ", IntArrayRef(s.output_sizes), " (the convolution's output), got ", grad_output.sizes());
  const ConvGeometry& g = s.geometry;
  // The input gradient multiplies as the convolution op's transpose does; the weight gradient over pixels.
  int64_t depth = std::numeric_limits<int64_t>::max();
  if (output_mask[0]) depth = transposed ? g.col_rows() : g.out_per_group();
  if (output_mask[1]) depth = std::min(depth, g.out_pixels());
  const DType ct = compute_dtype(input.dtype(), depth), rt = result_dtype(ct);
  const Tensor gy = prepared(grad_output, ct), x = prepared(input, ct), w = prepared(weight, ct);
  // Results not asked for are empty (the autograd layer needs every result defined).
  Tensor grad_input = make_empty(output_mask[0] ? input.sizes() : IntArrayRef{0}, rt, input.device());
  Tensor grad_weight = make_empty(output_mask[1] ? weight.sizes() : IntArrayRef{0}, rt, input.device());
  Tensor grad_bias = make_empty({output_mask[2] ? s.output_channels : 0}, rt, input.device());
  dispatch_compute(ct, [&]<class T>() {
    using R = cpu::ConvAcc<T>;
    // In forward-convolution terms (see the Note): conv_x is the x, conv_y the y of the convolution.
    const Tensor& conv_x = transposed ? gy : x;
    const Tensor& conv_y = transposed ? x : gy;
    if (output_mask[0] && grad_input.numel() > 0) {
      if (!transposed)
        cpu::conv_input_grad<T>(g, gy.data_ptr<T>(), w.data_ptr<T>(), grad_input.data_ptr<R>());
      else
        cpu::conv_forward<T>(g, gy.data_ptr<T>(), w.data_ptr<T>(), nullptr, grad_input.data_ptr<R>());
    }
    if (output_mask[1] && grad_weight.numel() > 0) {
      cpu::conv_weight_grad<T>(g, conv_y.data_ptr<T>(), conv_x.data_ptr<T>(), grad_weight.data_ptr<R>());
    }
    if (output_mask[2] && grad_bias.numel() > 0) {
      const int64_t pixels = transposed ? g.in_pixels() : g.out_pixels();
      cpu::channel_sums<T>(gy.data_ptr<T>(), g.batch, s.output_channels, pixels, grad_bias.data_ptr<R>());
    }
  });
  if (rt != input.dtype()) {
    grad_input = grad_input.to(input.dtype());
    grad_weight = grad_weight.to(input.dtype());
    grad_bias = grad_bias.to(input.dtype());
  }
  return {grad_input, grad_weight, grad_bias};
}

}  // namespace

void register_cpu_conv_kernels() {
  op::convolution.impl(DispatchKey::CPU, kFloatingDTypes, &convolution_cpu, "cpu::convolution");
  op::convolution_backward.impl(DispatchKey::CPU, kFloatingDTypes, &convolution_backward_cpu,
                                "cpu::convolution_backward");
}

}  // namespace ember
