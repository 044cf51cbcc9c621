// Derivative formulas of the pooling family (Note [Writing a derivative
// formula] in autograd/formula.h): max/avg/adaptive pooling (2-D and 3-D),
// padding and upsampling.
//
// Each forward op's gradient is its backward op, which is linear in the
// gradient; the backward op's own derivative (with respect to that gradient)
// is the forward op applied to the incoming gradient: the adjoint of an
// adjoint. max_pool2d's backward scatters through the saved indices, so its
// derivative gathers through them (an `index` call, itself differentiable).
// Every order of derivative is therefore available.
#include <algorithm>
#include <cstddef>

#include "autograd/formula.h"
#include "core/op_decls.h"
#include "core/op_decls_pooling.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// Output of size [..., h, w] of a 2-D op (or [..., d, h, w] of a 3-D one):
// the last `dims` dims of a tensor's meta.
std::vector<int64_t> spatial_of(const TensorMeta& m, size_t dims = 2) {
  return {m.sizes.end() - static_cast<std::ptrdiff_t>(dims), m.sizes.end()};
}

// The derivative of max_pool{2,3}d_with_indices_backward(grad_output, indices, input_size)
// for grad_output: the incoming gradient (shaped like the input) gathered at
// the indices, which are flat positions in the last `dims` dims.
TensorList gather_at_indices(const GradContext& c, const TensorList& grads, int64_t dims) {
  TensorList out(c.num_slots());
  if (!c.needs_grad(0)) return out;
  const Tensor indices = c.saved(1);
  const TensorMeta& g = c.meta(0);
  const Tensor& gg = grads[0];
  int64_t volume = 1;
  for (int64_t d = 1; d <= dims; ++d) volume *= gg.size(-d);
  const int64_t planes = gg.numel() / std::max<int64_t>(1, volume);
  const Tensor flat = gg.reshape({planes, volume});
  const Tensor rows = arange(planes, TensorOptions(kInt64).device(gg.device())).unsqueeze(1);
  const Tensor picked = op::index.call(flat, TensorList{rows, indices.reshape({planes, -1})});
  out[c.slot(0)] = reduce_to(picked.reshape(g.sizes), g);
  return out;
}

// ---- max_pool2d ----

// max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) -> (values, indices)
TensorList max_pool2d_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::max_pool2d_with_indices_backward.call(grads[0], c.result(1), in.sizes), in)};
}

// max_pool2d(self, kernel_size, stride, padding, dilation, ceil_mode): the
// forward kept no indices, so they are found again from the saved input.
TensorList max_pool2d_values_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  const Tensor indices = std::get<1>(
      op::max_pool2d_with_indices.call(c.saved(0).detach(), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.flag(5)));
  return {reduce_to(op::max_pool2d_with_indices_backward.call(grads[0], indices, in.sizes), in)};
}

// max_pool2d_with_indices_backward(grad_output, indices, input_size): d/d grad_output
// gathers the incoming gradient (shaped like the input) at the indices.
TensorList max_pool2d_backward_backward(const GradContext& c, const TensorList& grads) {
  return gather_at_indices(c, grads, 2);
}

// ---- avg_pool2d ----

// avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
TensorList avg_pool2d_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::avg_pool2d_backward.call(grads[0], in.sizes, c.ints(1), c.ints(2), c.ints(3), c.flag(4),
                                                 c.flag(5), c.opt_int(6)),
                    in)};
}

// avg_pool2d_backward(grad_output, input_size, kernel_size, stride, padding, ceil_mode,
//                     count_include_pad, divisor_override)
TensorList avg_pool2d_backward_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::avg_pool2d.call(grads[0], c.ints(2), c.ints(3), c.ints(4), c.flag(5), c.flag(6), c.opt_int(7)),
                    c.meta(0))};
}

// ---- adaptive_avg_pool2d ----

// adaptive_avg_pool2d(self, output_size)
TensorList adaptive_avg_pool2d_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::adaptive_avg_pool2d_backward.call(grads[0], in.sizes), in)};
}

// adaptive_avg_pool2d_backward(grad_output, input_size)
TensorList adaptive_avg_pool2d_backward_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& g = c.meta(0);
  return {reduce_to(op::adaptive_avg_pool2d.call(grads[0], spatial_of(g)), g)};
}

// ---- 3-D pooling: the 2-D formulas with one more dim ----

// max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) -> (values, indices)
TensorList max_pool3d_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::max_pool3d_with_indices_backward.call(grads[0], c.result(1), in.sizes), in)};
}

// max_pool3d_with_indices_backward(grad_output, indices, input_size)
TensorList max_pool3d_backward_backward(const GradContext& c, const TensorList& grads) {
  return gather_at_indices(c, grads, 3);
}

// avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
TensorList avg_pool3d_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::avg_pool3d_backward.call(grads[0], in.sizes, c.ints(1), c.ints(2), c.ints(3), c.flag(4),
                                                 c.flag(5), c.opt_int(6)),
                    in)};
}

// avg_pool3d_backward(grad_output, input_size, kernel_size, stride, padding, ceil_mode,
//                     count_include_pad, divisor_override)
TensorList avg_pool3d_backward_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::avg_pool3d.call(grads[0], c.ints(2), c.ints(3), c.ints(4), c.flag(5), c.flag(6), c.opt_int(7)),
                    c.meta(0))};
}

// adaptive_avg_pool3d(self, output_size)
TensorList adaptive_avg_pool3d_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::adaptive_avg_pool3d_backward.call(grads[0], in.sizes), in)};
}

// adaptive_avg_pool3d_backward(grad_output, input_size)
TensorList adaptive_avg_pool3d_backward_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& g = c.meta(0);
  return {reduce_to(op::adaptive_avg_pool3d.call(grads[0], spatial_of(g, 3)), g)};
}

// ---- padding ----

// constant_pad_nd(self, pad, value): the gradient crops what padding added
// (and pads with zeros what a negative padding cropped).
TensorList constant_pad_grad(const GradContext& c, const TensorList& grads) {
  std::vector<int64_t> negated = c.ints(1);
  for (int64_t& p : negated) p = -p;
  return {reduce_to(op::constant_pad_nd.call(grads[0], negated, Scalar(0)), c.meta(0))};
}

// reflection_pad(self, pad) / replication_pad(self, pad)
TensorList reflection_pad_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::reflection_pad_backward.call(grads[0], c.meta(0).sizes, c.ints(1)), c.meta(0))};
}
TensorList replication_pad_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::replication_pad_backward.call(grads[0], c.meta(0).sizes, c.ints(1)), c.meta(0))};
}

// circular_pad(self, pad)
TensorList circular_pad_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::circular_pad_backward.call(grads[0], c.meta(0).sizes, c.ints(1)), c.meta(0))};
}

// reflection_pad_backward(grad_output, input_size, pad) / replication_pad_backward(...) / circular_pad_backward(...)
TensorList reflection_pad_backward_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::reflection_pad.call(grads[0], c.ints(2)), c.meta(0))};
}
TensorList replication_pad_backward_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::replication_pad.call(grads[0], c.ints(2)), c.meta(0))};
}
TensorList circular_pad_backward_grad(const GradContext& c, const TensorList& grads) {
  return {reduce_to(op::circular_pad.call(grads[0], c.ints(2)), c.meta(0))};
}

// ---- upsampling ----

// upsample_nearest2d(self, output_size, scales_h, scales_w)
TensorList upsample_nearest2d_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::upsample_nearest2d_backward.call(grads[0], in.sizes, c.real(2), c.real(3)), in)};
}

// upsample_nearest2d_backward(grad_output, input_size, scales_h, scales_w)
TensorList upsample_nearest2d_backward_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& g = c.meta(0);
  return {reduce_to(op::upsample_nearest2d.call(grads[0], spatial_of(g), c.real(2), c.real(3)), g)};
}

// upsample_bilinear2d(self, output_size, align_corners, scales_h, scales_w)
TensorList upsample_bilinear2d_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(op::upsample_bilinear2d_backward.call(grads[0], in.sizes, c.flag(2), c.real(3), c.real(4)), in)};
}

// upsample_bilinear2d_backward(grad_output, input_size, align_corners, scales_h, scales_w)
TensorList upsample_bilinear2d_backward_grad(const GradContext& c, const TensorList& grads) {
  const TensorMeta& g = c.meta(0);
  return {reduce_to(op::upsample_bilinear2d.call(grads[0], spatial_of(g), c.flag(2), c.real(3), c.real(4)), g)};
}

}  // namespace

void register_pooling_formulas() {
  register_formula(op::max_pool2d.entry(), Formula{{0}, false, &max_pool2d_values_backward});
  register_formula(op::max_pool2d_with_indices.entry(), Formula{{}, true, &max_pool2d_backward});
  register_formula(op::max_pool2d_with_indices_backward.entry(), Formula{{1}, false, &max_pool2d_backward_backward});
  register_formula(op::avg_pool2d.entry(), Formula{{}, false, &avg_pool2d_grad});
  register_formula(op::avg_pool2d_backward.entry(), Formula{{}, false, &avg_pool2d_backward_grad});
  register_formula(op::adaptive_avg_pool2d.entry(), Formula{{}, false, &adaptive_avg_pool2d_grad});
  register_formula(op::adaptive_avg_pool2d_backward.entry(), Formula{{}, false, &adaptive_avg_pool2d_backward_grad});
  register_formula(op::max_pool3d_with_indices.entry(), Formula{{}, true, &max_pool3d_backward});
  register_formula(op::max_pool3d_with_indices_backward.entry(), Formula{{1}, false, &max_pool3d_backward_backward});
  register_formula(op::avg_pool3d.entry(), Formula{{}, false, &avg_pool3d_grad});
  register_formula(op::avg_pool3d_backward.entry(), Formula{{}, false, &avg_pool3d_backward_grad});
  register_formula(op::adaptive_avg_pool3d.entry(), Formula{{}, false, &adaptive_avg_pool3d_grad});
  register_formula(op::adaptive_avg_pool3d_backward.entry(), Formula{{}, false, &adaptive_avg_pool3d_backward_grad});
  register_formula(op::constant_pad_nd.entry(), Formula{{}, false, &constant_pad_grad});
  register_formula(op::reflection_pad.entry(), Formula{{}, false, &reflection_pad_grad});
  register_formula(op::reflection_pad_backward.entry(), Formula{{}, false, &reflection_pad_backward_grad});
  register_formula(op::replication_pad.entry(), Formula{{}, false, &replication_pad_grad});
  register_formula(op::replication_pad_backward.entry(), Formula{{}, false, &replication_pad_backward_grad});
  register_formula(op::circular_pad.entry(), Formula{{}, false, &circular_pad_grad});
  register_formula(op::circular_pad_backward.entry(), Formula{{}, false, &circular_pad_backward_grad});
  register_formula(op::upsample_nearest2d.entry(), Formula{{}, false, &upsample_nearest2d_grad});
  register_formula(op::upsample_nearest2d_backward.entry(), Formula{{}, false, &upsample_nearest2d_backward_grad});
  register_formula(op::upsample_bilinear2d.entry(), Formula{{}, false, &upsample_bilinear2d_grad});
  register_formula(op::upsample_bilinear2d_backward.entry(), Formula{{}, false, &upsample_bilinear2d_backward_grad});
}

}  // namespace ember::autograd
