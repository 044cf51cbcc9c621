// Derivative formulas of the reductions and scans (Note [Writing a
// derivative formula] in autograd/formula.h): sum, mean, prod, amax, amin,
// max/min over a dim, var, std, norm, logsumexp, cumsum, cumprod. argmax,
// argmin, all and any are non-differentiable.
//
// A reduction's gradient has the result's shape; `restore_dims` puts the
// reduced dims back (size 1) so it broadcasts over the input again. ember has
// no flip op: `reverse` reverses a dim with an index tensor instead (index is
// differentiable, so the formulas stay twice differentiable).
#include <algorithm>
#include <cmath>

#include "autograd/formula.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/autograd.h"
#include "ember/indexing.h"
#include "ember/ops.h"

namespace ember::autograd {

namespace {

// `t` shaped like a reduction's result, with the reduced `dims` (all when
// empty) re-inserted as size 1. A 0-d input reduced nothing.
Tensor restore_dims(const Tensor& t, const TensorMeta& input, IntArrayRef dims, bool keepdim) {
  if (input.sizes.empty()) return t;
  return unsqueeze_reduced(t, input.sizes, dims, keepdim);
}

// How many input elements went into each result element.
int64_t reduced_count(const TensorMeta& input, IntArrayRef dims) {
  const int64_t n = static_cast<int64_t>(input.sizes.size());
  int64_t count = 1;
  if (dims.empty() || n == 0) {
    for (int64_t s : input.sizes) count *= s;
    return count;
  }
  for (int64_t d : dims) count *= input.sizes[wrap_dim(d, n, "reduction backward")];
  return count;
}

// `t` read backwards along `dim`.
Tensor reverse(const Tensor& t, int64_t dim) {
  const int64_t n = t.size(dim);
  std::vector<TensorIndex> index(static_cast<size_t>(dim), Slice());
  index.emplace_back(arange(n - 1, -1, -1, TensorOptions(kInt64).device(t.device())));
  return t.index(index);
}

// r[i] = sum of t[j] for j >= i along `dim`.
Tensor reverse_cumsum(const Tensor& t, int64_t dim) { return reverse(reverse(t, dim).cumsum(dim), dim); }

// [1, x0, x0 x1, ...] along the last dim: the product of the elements before each one.
Tensor exclusive_cumprod(const Tensor& x) {
  DimVector column(x.sizes());
  column.back() = 1;
  return cat({ones(column, x.options()), x.narrow(-1, 0, x.size(-1) - 1)}, -1).cumprod(-1);
}

// For each element of `x`, the product of the other elements of its
// reduction over `dims` (all when empty), computed without dividing, so zeros
// are exact: the reduced dims are moved last and flattened, and each product
// is (product before) * (product after).
Tensor product_of_others(const Tensor& x, IntArrayRef dims) {
  const int64_t n = x.dim();
  std::vector<bool> reduced(static_cast<size_t>(n), dims.empty());
  for (int64_t d : dims) reduced[wrap_dim(d, n, "prod backward")] = true;
  DimVector perm, moved_sizes, flat_sizes;
  int64_t span = 1;
  for (int pass = 0; pass < 2; ++pass) {  // the kept dims first, then the reduced ones
    for (int64_t d = 0; d < n; ++d) {
      if (reduced[d] != (pass == 1)) continue;
      perm.push_back(d);
      moved_sizes.push_back(x.size(d));
      if (pass == 0) flat_sizes.push_back(x.size(d));
      else span *= x.size(d);
    }
  }
  flat_sizes.push_back(span);
  const Tensor rows = x.permute(perm).reshape(flat_sizes);  // (kept..., span)
  const int64_t last = rows.dim() - 1;
  const Tensor others = exclusive_cumprod(rows) * reverse(exclusive_cumprod(reverse(rows, last)), last);
  DimVector inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return others.reshape(moved_sizes).permute(inverse);
}

bool has_zero(const Tensor& x) { return x.eq(0).any().item<bool>(); }

// The input cast to the result's dtype (sum/prod/cumsum/cumprod take a dtype).
Tensor as_result_dtype(const Tensor& x, const GradContext& c) {
  const DType t = c.result_meta(0).dtype;
  return x.dtype() == t ? x : x.to(t);
}

// ---- sum, mean, prod ----

TensorList sum_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  return {reduce_to(restore_dims(grads[0], in, c.ints(1), c.flag(2)).expand(in.sizes), in)};
}

TensorList mean_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  const std::vector<int64_t> dims = c.ints(1);
  const Tensor g = restore_dims(grads[0], in, dims, c.flag(2));
  return {reduce_to((g / reduced_count(in, dims)).expand(in.sizes), in)};
}

// Each element's gradient is the product of the others. PyTorch divides the
// result by the element when there are no zeros; the product taken directly
// is exact with zeros and with underflow, needs no device sync to look for
// zeros, and its own derivative is exact (every gradient is free of its element).
TensorList prod_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  if (in.sizes.empty()) return {reduce_to(grads[0], in)};
  const std::vector<int64_t> dims = c.ints(1);
  const Tensor x = as_result_dtype(c.saved(0), c);
  if (x.numel() == 0) return {reduce_to(zeros(in.sizes, x.options()), in)};
  const Tensor g = restore_dims(grads[0], in, dims, c.flag(2));
  return {reduce_to(g * product_of_others(x, dims), in)};
}

// ---- extrema ----

// amax/amin: ties share the gradient evenly, as PyTorch.
TensorList extremum_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  const std::vector<int64_t> dims = c.ints(1);
  const bool keepdim = c.flag(2);
  const Tensor at_extremum = c.saved(0).eq(restore_dims(c.result(), in, dims, keepdim));
  const Tensor share = restore_dims(grads[0], in, dims, keepdim) / at_extremum.sum(dims, true);
  return {reduce_to(where(at_extremum, share, 0), in)};
}

// max/min over a dim: only the element at the returned index gets the gradient.
TensorList extremum_dim_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  if (in.sizes.empty()) return {reduce_to(grads[0], in)};
  const int64_t n = static_cast<int64_t>(in.sizes.size());
  const int64_t dim = wrap_dim(c.int_arg(1), n, "max/min backward");
  const bool keepdim = c.flag(2);
  DimVector along(static_cast<size_t>(n), 1);
  along[dim] = in.sizes[dim];
  const Tensor positions = arange(in.sizes[dim], TensorOptions(kInt64).device(in.device)).reshape(along);
  const Tensor chosen = positions.eq(restore_dims(c.result(1), in, {dim}, keepdim));
  return {reduce_to(where(chosen, restore_dims(grads[0], in, {dim}, keepdim), 0), in)};
}

// ---- var, std, norm, logsumexp ----

// d var / dx = 2 (x - mean) / (N - correction), with `g` already restored.
Tensor var_input_grad(const Tensor& x, const Tensor& g, IntArrayRef dims, int64_t count, int64_t correction) {
  // The forward divides by max(0, N - correction); so does the gradient.
  const double scale = 2.0 / static_cast<double>(std::max<int64_t>(0, count - correction));
  return (x - x.mean(dims, true)) * g * scale;
}

TensorList var_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  const std::vector<int64_t> dims = c.ints(1);
  const Tensor g = restore_dims(grads[0], in, dims, c.flag(3));
  return {reduce_to(var_input_grad(c.saved(0), g, dims, reduced_count(in, dims), c.int_arg(2)), in)};
}

// std = sqrt(var): d std = d var / (2 std), taken as 0 where std == 0 (as PyTorch).
TensorList std_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  const std::vector<int64_t> dims = c.ints(1);
  const bool keepdim = c.flag(3);
  const Tensor s = restore_dims(c.result(), in, dims, keepdim);
  const Tensor g = where(s.eq(0), 0, restore_dims(grads[0], in, dims, keepdim) / (s * 2));
  return {reduce_to(var_input_grad(c.saved(0), g, dims, reduced_count(in, dims), c.int_arg(2)), in)};
}

// The vector p-norm, case by case as PyTorch: p = 0 is piecewise constant, the
// inf-norms act like amax/amin of |x|, other p differentiate
// (sum |x|^p)^(1/p), with the subgradient 0 where the norm is 0.
TensorList norm_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  const double p = c.scalar(1).to_double();
  if (p == 0) return {Tensor()};
  const std::vector<int64_t> dims = c.ints(2);
  const bool keepdim = c.flag(3);
  const Tensor x = c.saved(0);
  const Tensor g = restore_dims(grads[0], in, dims, keepdim);
  const Tensor norm = restore_dims(c.result(), in, dims, keepdim);
  Tensor d;
  if (p == 1) {
    d = g * x.sign();
  } else if (p == 2) {
    d = g * where(norm.eq(0), 0, x / norm);
  } else if (std::isinf(p)) {
    const Tensor at_extremum = x.abs().eq(norm);
    d = where(at_extremum, x.sign() * (g / at_extremum.sum(dims, true)), 0);
  } else if (p < 1) {
    const Tensor scaled = where(x.eq(0), 0, x.sign() * x.abs().pow(p - 1));
    d = scaled * g * norm.pow(1 - p);
  } else {
    // x |x|^(p-2); below p = 2 that is 0 * inf at x == 0, so write it sign(x) |x|^(p-1).
    const Tensor scaled = p < 2 ? x.sign() * x.abs().pow(p - 1) : x * x.abs().pow(p - 2);
    d = scaled * where(norm.eq(0), 0, g / norm.pow(p - 1));
  }
  return {reduce_to(d, in)};
}

TensorList logsumexp_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  const std::vector<int64_t> dims = c.ints(1);
  const bool keepdim = c.flag(2);
  const Tensor softmax = (c.saved(0) - restore_dims(c.result(), in, dims, keepdim)).exp();
  return {reduce_to(restore_dims(grads[0], in, dims, keepdim) * softmax, in)};
}

// ---- scans ----

TensorList cumsum_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  if (in.sizes.empty()) return {reduce_to(grads[0], in)};
  const int64_t dim = wrap_dim(c.int_arg(1), static_cast<int64_t>(in.sizes.size()), "cumsum backward");
  return {reduce_to(reverse_cumsum(grads[0], dim), in)};
}

// d sum(g * y) / dx for y = cumprod(x) along `dim`.
// y_k = x_0 ... x_k, so dL/dx_i = sum_{k >= i} g_k y_k / x_i when x_i != 0.
// With zeros, let z be the first zero along the dim: positions before z use
// that formula; position z gets sum_{k >= z} g_k y'_k, y' the cumprod of x'
// (x with x_z replaced by 1); after z every product holds x_z, so the
// gradient there is 0. Its derivative w.r.t. x_z is not 0, so a recorded
// backward (create_graph) writes it as x_z times the gradient of cumprod(x')
// there (recursing once per zero of a row).
Tensor cumprod_grad(const Tensor& g, const Tensor& x, const Tensor& y, int64_t dim) {
  const Tensor weighted = reverse_cumsum(g * y, dim);
  if (x.numel() == 0 || !has_zero(x)) return weighted / x;
  const Tensor is_zero = x.eq(0);
  const Tensor zeros_so_far = is_zero.cumsum(dim);
  const Tensor before_zero = zeros_so_far.eq(0);
  const Tensor first_zero = is_zero.logical_and(zeros_so_far.eq(1));
  const Tensor x1 = where(first_zero, 1, x);
  const Tensor y1 = x1.cumprod(dim);
  // Dividing by 1 off the "before" positions keeps masked values (and their
  // derivatives) finite.
  const Tensor before = weighted / where(before_zero, x, 1);
  const Tensor at_zero = reverse_cumsum(g * y1, dim);
  Tensor after = zeros({}, x.options());
  if (is_grad_enabled()) after = where(first_zero, x, 0).sum(dim, true) * cumprod_grad(g, x1, y1, dim);
  return where(before_zero, before, where(first_zero, at_zero, after));
}

TensorList cumprod_backward(const GradContext& c, const TensorList& grads) {
  const TensorMeta& in = c.meta(0);
  if (in.sizes.empty()) return {reduce_to(grads[0], in)};
  const int64_t dim = wrap_dim(c.int_arg(1), static_cast<int64_t>(in.sizes.size()), "cumprod backward");
  return {reduce_to(cumprod_grad(grads[0], as_result_dtype(c.saved(0), c), c.result(), dim), in)};
}

}  // namespace

void register_reduction_formulas() {
  register_formula(op::sum.entry(), Formula{{}, false, &sum_backward});
  register_formula(op::mean.entry(), Formula{{}, false, &mean_backward});
  register_formula(op::prod.entry(), Formula{{0}, false, &prod_backward});
  register_formula(op::amax.entry(), Formula{{0}, true, &extremum_backward});
  register_formula(op::amin.entry(), Formula{{0}, true, &extremum_backward});
  register_formula(op::max_dim.entry(), Formula{{}, true, &extremum_dim_backward});
  register_formula(op::min_dim.entry(), Formula{{}, true, &extremum_dim_backward});
  register_formula(op::var.entry(), Formula{{0}, false, &var_backward});
  register_formula(op::std_dev.entry(), Formula{{0}, true, &std_backward});
  register_formula(op::norm.entry(), Formula{{0}, true, &norm_backward});
  register_formula(op::logsumexp.entry(), Formula{{0}, true, &logsumexp_backward});
  register_formula(op::cumsum.entry(), Formula{{}, false, &cumsum_backward});
  register_formula(op::cumprod.entry(), Formula{{0}, true, &cumprod_backward});
  for (const OpEntry* op : {&op::argmax.entry(), &op::argmin.entry(), &op::all.entry(), &op::any.entry()}) {
    register_non_differentiable(*op);
  }
}

}  // namespace ember::autograd
