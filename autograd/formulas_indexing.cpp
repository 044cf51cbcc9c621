// Derivatives of gather, scatter, index_select, masked_select, repeat, flip
// and roll (Note [Writing a derivative formula] in autograd/formula.h).
//
// Each backward is another op of the family, so second derivatives work:
// gather and scatter_add are each other's backward, as are index_select and
// index_add; flip and roll move the gradient back; repeat sums the copies.
// Gathers whose ids repeat add up in a fixed order (Note [One loop for gather
// and scatter], kernels/cpu/index/gather_scatter.cpp): the gradients are the same
// for any thread count. Index tensors and masks get no gradient.
#include "autograd/formula.h"
#include "core/op_decls_indexing.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

Tensor zeros_of(const TensorMeta& m) { return zeros(m.sizes, TensorOptions(m.dtype).device(m.device)); }

// gather(grad, dim, index) as the gradient of a src larger than index: the
// elements index does not reach get zero.
Tensor gathered_to(const Tensor& grad, int64_t dim, const Tensor& index, const TensorMeta& src) {
  Tensor g = op::gather.call(grad, dim, index);
  if (g.sizes() == IntArrayRef(src.sizes)) return g;
  Tensor out = zeros_of(src);
  Tensor part = out;
  for (int64_t d = 0; d < g.dim(); ++d) part = part.slice(d, 0, g.size(d));
  part.copy_(g);
  return out;
}

// gather(self, dim, index)
TensorList gather_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  out[c.slot(0)] = op::scatter_add.call(zeros_of(c.meta(0)), c.int_arg(1), c.saved(2), grads[0]);
  return out;
}

// scatter(self, dim, index, src): overwritten positions lose self's gradient.
TensorList scatter_backward(const GradContext& c, const TensorList& grads) {
  const int64_t dim = c.int_arg(1);
  const Tensor index = c.saved(2);
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = op::scatter_value.call(grads[0], dim, index, Scalar(0));
  if (c.needs_grad(3)) out[c.slot(3)] = gathered_to(grads[0], dim, index, c.meta(3));
  return out;
}

// scatter_value(self, dim, index, value)
TensorList scatter_value_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  out[c.slot(0)] = op::scatter_value.call(grads[0], c.int_arg(1), c.saved(2), Scalar(0));
  return out;
}

// scatter_add(self, dim, index, src)
TensorList scatter_add_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = grads[0];
  if (c.needs_grad(3)) out[c.slot(3)] = gathered_to(grads[0], c.int_arg(1), c.saved(2), c.meta(3));
  return out;
}

// index_select(self, dim, index)
TensorList index_select_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  out[c.slot(0)] = op::index_add.call(zeros_of(c.meta(0)), c.int_arg(1), c.saved(2), grads[0], Scalar(1));
  return out;
}

// index_add(self, dim, index, source, alpha)
TensorList index_add_backward(const GradContext& c, const TensorList& grads) {
  TensorList out(c.num_slots());
  if (c.needs_grad(0)) out[c.slot(0)] = grads[0];
  if (c.needs_grad(3)) {
    Tensor g = op::index_select.call(grads[0], c.int_arg(1), c.saved(2));
    const Scalar alpha = c.scalar(4);
    out[c.slot(3)] = alpha.to_double() == 1.0 ? g : g * alpha;
  }
  return out;
}

// masked_select(self, mask): the gradient goes back to the selected positions
// of the broadcast shape (through index_put_, flattened so a 0-d shape works),
// then is summed over the dims broadcasting added.
TensorList masked_select_backward(const GradContext& c, const TensorList& grads) {
  const Tensor mask = c.saved(1);
  const DimVector shape = broadcast_shapes(c.meta(0).sizes, mask.sizes(), "masked_select");
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  Tensor flat = zeros({n}, grads[0].options());
  flat = op::index_put_.call(flat, {mask.expand(shape).reshape({n})}, grads[0], false);
  TensorList out(c.num_slots());
  out[c.slot(0)] = reduce_to(flat.reshape(shape), c.meta(0));
  return out;
}

// repeat(self, repeats): grad viewed as [r0, s0, r1, s1, ...] (self's shape
// padded with leading 1s), summed over the r's.
TensorList repeat_backward(const GradContext& c, const TensorList& grads) {
  const std::vector<int64_t> repeats = c.ints(1);
  const TensorMeta& self = c.meta(0);
  const size_t nd = repeats.size(), lead = nd - self.sizes.size();
  TensorList out(c.num_slots());
  if (nd == 0) {
    out[c.slot(0)] = grads[0];
    return out;
  }
  std::vector<int64_t> split, summed;
  for (size_t d = 0; d < nd; ++d) {
    summed.push_back(static_cast<int64_t>(split.size()));
    split.push_back(repeats[d]);
    split.push_back(d < lead ? 1 : self.sizes[d - lead]);
  }
  out[c.slot(0)] = grads[0].reshape(split).sum(summed).reshape(self.sizes);
  return out;
}

// flip(self, dims)
TensorList flip_backward(const GradContext& c, const TensorList& grads) {
  return {op::flip.call(grads[0], c.ints(1))};
}

// roll(self, shifts, dims)
TensorList roll_backward(const GradContext& c, const TensorList& grads) {
  std::vector<int64_t> back = c.ints(1);
  for (int64_t& s : back) s = -s;
  return {op::roll.call(grads[0], back, c.ints(2))};
}

}  // namespace

void register_indexing_formulas() {
  register_formula(op::gather.entry(), Formula{{2}, false, &gather_backward});
  register_formula(op::scatter.entry(), Formula{{2}, false, &scatter_backward});
  register_formula(op::scatter_value.entry(), Formula{{2}, false, &scatter_value_backward});
  register_formula(op::scatter_add.entry(), Formula{{2}, false, &scatter_add_backward});
  register_formula(op::index_select.entry(), Formula{{2}, false, &index_select_backward});
  register_formula(op::index_add.entry(), Formula{{2}, false, &index_add_backward});
  register_formula(op::masked_select.entry(), Formula{{1}, false, &masked_select_backward});
  register_formula(op::repeat.entry(), Formula{{}, false, &repeat_backward});
  register_formula(op::flip.entry(), Formula{{}, false, &flip_backward});
  register_formula(op::roll.entry(), Formula{{}, false, &roll_backward});
}

}  // namespace ember::autograd
