// Derivatives of the convolution ops (Note [Writing a derivative formula]).
//
// convolution's backward is the kernel op convolution_backward (the fast
// GEMM-based gradients). That op has a formula of its own, written with the
// two convolution ops, so second derivatives (gradgradcheck of conv2d) work.
//
// Its derivation: y = conv(x, w) + b is bilinear in (x, w). Its backward
// returns gx = J_x(w)^T gy, gw = J_w(x)^T gy, gb = sum(gy). Given the
// gradients ggx, ggw, ggb of those three results,
//   d/d gy: <ggx, J_x^T gy> + <ggw, J_w^T gy> + <ggb, sum gy>
//           = <conv(ggx, w) + conv(x, ggw) + ggb, gy>
//   d/d x:  <ggw, J_w(x)^T gy> = <conv(x, ggw), gy>, linear in x: its gradient
//           is the input gradient of a convolution with weight ggw;
//   d/d w:  <ggx, J_x(w)^T gy> = <conv(ggx, w), gy>: the weight gradient of a
//           convolution of ggx.
// The same holds for transposed convolutions with conv read as convT.
//
// im2col and col2im (unfold and fold) are linear and each other's adjoint:
// each one's derivative is the other, so every order is available.
#include "autograd/formula.h"
#include "core/op_decls_conv.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// The non-tensor arguments shared by both ops, read from a node.
struct ConvArgs {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

// `first` is the schema position of `stride` (the rest follow it in order).
ConvArgs conv_args(const GradContext& ctx, size_t first) {
  return {ctx.ints(first),     ctx.ints(first + 1), ctx.ints(first + 2),
          ctx.ints(first + 4), ctx.flag(first + 3), ctx.int_arg(first + 5)};
}

Tensor convolution(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias, const ConvArgs& a) {
  return op::convolution.call(x, w, bias, a.stride, a.padding, a.dilation, a.transposed, a.output_padding, a.groups);
}

TensorTriple convolution_backward(const Tensor& gy, const Tensor& x, const Tensor& w, const ConvArgs& a,
                                  IntArrayRef mask) {
  return op::convolution_backward.call(gy, x, w, a.stride, a.padding, a.dilation, a.transposed, a.output_padding,
                                       a.groups, mask);
}

// convolution(input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
TensorList convolution_formula(const GradContext& ctx, const TensorList& grads) {
  TensorList out(3);
  const std::vector<int64_t> mask = {ctx.needs_grad(0), ctx.needs_grad(1), ctx.needs_grad(2)};
  if (!mask[0] && !mask[1] && !mask[2]) return out;
  auto [gx, gw, gb] = convolution_backward(grads[0], ctx.saved(0), ctx.saved(1), conv_args(ctx, 3), mask);
  if (mask[0]) out[0] = gx;
  if (mask[1]) out[1] = gw;
  if (mask[2]) out[2] = gb;
  return out;
}

// convolution_backward(grad_output, input, weight, stride, padding, dilation, transposed, output_padding,
// groups, output_mask) -> (grad_input, grad_weight, grad_bias); see the derivation at the top.
TensorList convolution_backward_formula(const GradContext& ctx, const TensorList& grads) {
  const ConvArgs a = conv_args(ctx, 3);
  const std::vector<int64_t> mask = ctx.ints(9);
  const bool has_gx = mask.at(0) != 0, has_gw = mask.at(1) != 0, has_gb = mask.at(2) != 0;
  const Tensor& ggx = grads[0];
  const Tensor& ggw = grads[1];
  const Tensor& ggb = grads[2];
  TensorList out(3);
  if (ctx.needs_grad(0)) {
    Tensor g;
    if (has_gx) g = convolution(ggx, ctx.saved(2), has_gb ? std::optional<Tensor>(ggb) : std::nullopt, a);
    if (has_gw) {
      Tensor t = convolution(ctx.saved(1), ggw, !has_gx && has_gb ? std::optional<Tensor>(ggb) : std::nullopt, a);
      g = g.defined() ? g + t : t;
    }
    if (!g.defined() && has_gb) {
      const TensorMeta& m = ctx.meta(0);
      std::vector<int64_t> shape(m.sizes.size(), 1);
      shape[1] = ggb.size(0);
      g = zeros(m.sizes, TensorOptions(m.dtype).device(m.device)) + ggb.view(shape);
    }
    out[0] = g;
  }
  if (ctx.needs_grad(1) && has_gw)
    out[1] = std::get<0>(convolution_backward(ctx.saved(0), ctx.saved(1), ggw, a, {1, 0, 0}));
  if (ctx.needs_grad(2) && has_gx)
    out[2] = std::get<1>(convolution_backward(ctx.saved(0), ggx, ctx.saved(2), a, {0, 1, 0}));
  return out;
}

// im2col(self, kernel_size, dilation, padding, stride): its adjoint, col2im
// back into the input's spatial size.
TensorList im2col_formula(const GradContext& ctx, const TensorList& grads) {
  const TensorMeta& in = ctx.meta(0);
  const std::vector<int64_t> image = {in.sizes[in.sizes.size() - 2], in.sizes[in.sizes.size() - 1]};
  return {reduce_to(op::col2im.call(grads[0], image, ctx.ints(1), ctx.ints(2), ctx.ints(3), ctx.ints(4)), in)};
}

// col2im(self, output_size, kernel_size, dilation, padding, stride): its adjoint, im2col.
TensorList col2im_formula(const GradContext& ctx, const TensorList& grads) {
  return {reduce_to(op::im2col.call(grads[0], ctx.ints(2), ctx.ints(3), ctx.ints(4), ctx.ints(5)), ctx.meta(0))};
}

}  // namespace

void register_conv_formulas() {
  register_formula(op::im2col.entry(), Formula{{}, false, &im2col_formula});
  register_formula(op::col2im.entry(), Formula{{}, false, &col2im_formula});
  register_formula(op::convolution.entry(), {.save = {0, 1}, .backward = convolution_formula});
  register_formula(op::convolution_backward.entry(), {.save = {0, 1, 2}, .backward = convolution_backward_formula});
}

}  // namespace ember::autograd
