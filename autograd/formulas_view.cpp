// Derivatives of the view ops (Note [Writing a derivative formula]).
//
// A view moves no data, so its backward only has to put the gradient back
// where the view's elements sit in the input: undo a reshuffle of dims
// (view, permute, transpose, squeeze, unsqueeze), sum what expand repeated,
// or write the gradient into the matching view of a zero tensor shaped like
// the input (slice, select, diagonal). The last uses copy_ into a view, which
// autograd records like any in-place op on a view, so second derivatives work.
#include "autograd/formula.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// Zeros shaped like the input, with `grad` written into `region_of(zeros)`.
template <class Region>
Tensor into_zeros(const Tensor& grad, const TensorMeta& input, Region region_of) {
  Tensor z = zeros(input.sizes, grad.options());
  region_of(z).copy_(grad);
  return z;
}

// view, squeeze, squeeze_dim, unsqueeze: same elements, other shape.
TensorList reshape_backward(const GradContext& ctx, const TensorList& grads) {
  return {grads[0].reshape(ctx.meta(0).sizes)};
}

// permute(self, dims): the inverse permutation puts every dim back.
TensorList permute_backward(const GradContext& ctx, const TensorList& grads) {
  const std::vector<int64_t> dims = ctx.ints(1);
  const int64_t n = static_cast<int64_t>(dims.size());
  DimVector inverse(n);
  for (int64_t i = 0; i < n; ++i) inverse[wrap_dim(dims[i], n, "permute backward")] = i;
  return {grads[0].permute(inverse)};
}

// transpose(self, dim0, dim1) is its own inverse.
TensorList transpose_backward(const GradContext& ctx, const TensorList& grads) {
  return {grads[0].transpose(ctx.int_arg(1), ctx.int_arg(2))};
}

// slice(self, dim, start, end, step)
TensorList slice_backward(const GradContext& ctx, const TensorList& grads) {
  const int64_t dim = ctx.int_arg(1), step = ctx.int_arg(4);
  const std::optional<int64_t> start = ctx.opt_int(2), end = ctx.opt_int(3);
  return {into_zeros(grads[0], ctx.meta(0), [&](const Tensor& z) { return z.slice(dim, start, end, step); })};
}

// select(self, dim, index)
TensorList select_backward(const GradContext& ctx, const TensorList& grads) {
  const int64_t dim = ctx.int_arg(1), index = ctx.int_arg(2);
  return {into_zeros(grads[0], ctx.meta(0), [&](const Tensor& z) { return z.select(dim, index); })};
}

// expand(self, size): every repeat of an element adds to its gradient.
TensorList expand_backward(const GradContext& ctx, const TensorList& grads) {
  return {sum_to(grads[0], ctx.meta(0).sizes)};
}

// diagonal(self, offset, dim1, dim2)
TensorList diagonal_backward(const GradContext& ctx, const TensorList& grads) {
  const int64_t offset = ctx.int_arg(1), dim1 = ctx.int_arg(2), dim2 = ctx.int_arg(3);
  return {into_zeros(grads[0], ctx.meta(0), [&](const Tensor& z) { return z.diagonal(offset, dim1, dim2); })};
}

// as_strided(self, size, stride, storage_offset): any geometry, overlapping
// ones included, so the gradient goes through the storage (formula.cpp).
TensorList as_strided_backward_formula(const GradContext& ctx, const TensorList& grads) {
  const TensorMeta& input = ctx.meta(0);
  const std::vector<int64_t> sizes = ctx.ints(1), strides = ctx.ints(2);
  const int64_t offset = ctx.opt_int(3).value_or(input.storage_offset);
  return {as_strided_backward(grads[0], input, sizes, strides, offset)};
}

}  // namespace

void register_view_formulas() {
  register_formula(op::view.entry(), Formula{{}, false, &reshape_backward});
  register_formula(op::squeeze.entry(), Formula{{}, false, &reshape_backward});
  register_formula(op::squeeze_dim.entry(), Formula{{}, false, &reshape_backward});
  register_formula(op::unsqueeze.entry(), Formula{{}, false, &reshape_backward});
  register_formula(op::permute.entry(), Formula{{}, false, &permute_backward});
  register_formula(op::transpose.entry(), Formula{{}, false, &transpose_backward});
  register_formula(op::slice.entry(), Formula{{}, false, &slice_backward});
  register_formula(op::select.entry(), Formula{{}, false, &select_backward});
  register_formula(op::expand.entry(), Formula{{}, false, &expand_backward});
  register_formula(op::diagonal.entry(), Formula{{}, false, &diagonal_backward});
  register_formula(op::as_strided.entry(), Formula{{}, false, &as_strided_backward_formula});
}

}  // namespace ember::autograd
