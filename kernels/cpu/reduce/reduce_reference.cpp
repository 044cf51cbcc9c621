// The reduction references (reduce_reference.h): gather each output
// element's group of inputs, then fold it with a plain loop.
#include "kernels/cpu/reduce/reduce_reference.h"

#include <cmath>
#include <limits>

#include "kernels/reference_values.h"

namespace ember::cpu {
namespace {

using reference::Values;

// The inputs of every output element: groups[o] lists, in input order, the
// positions of the elements that output element o reduces.
struct Groups {
  std::vector<int64_t> out_sizes;
  std::vector<std::vector<int64_t>> groups;
};

Groups group_elements(const Values& x, const std::vector<bool>& reduced, bool keepdim) {
  Groups g;
  std::vector<int64_t> kept_sizes;  // the output dims without the kept 1s
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (!reduced[d]) kept_sizes.push_back(x.size(d));
    if (!reduced[d] || keepdim) g.out_sizes.push_back(reduced[d] ? 1 : x.size(d));
  }
  g.groups.resize(reference::numel_of(kept_sizes));
  std::vector<int64_t> idx(x.dim(), 0);
  for (int64_t k = 0; k < x.numel(); ++k) {
    int64_t o = 0;  // the row-major position of idx's kept dims
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (!reduced[d]) o = o * x.size(d) + idx[d];
    }
    g.groups[o].push_back(k);
    for (int64_t d = x.dim() - 1; d >= 0; --d) {
      if (++idx[d] < x.size(d)) break;
      idx[d] = 0;
    }
  }
  return g;
}

std::vector<bool> reduced_dims(const std::vector<int64_t>& dims, int64_t n, std::string_view op) {
  std::vector<bool> reduced(n, dims.empty());
  for (int64_t d : dims) {
    const int64_t w = reference::wrap_dim(d, n, op);
    if (n == 0) continue;  // a 0-d tensor reduces over dim 0 to itself
    EMBER_CHECK(!reduced[w], op, ": dim ", d, " appears twice in ", IntArrayRef(dims));
    reduced[w] = true;
  }
  return reduced;
}

// The position in `group` of its largest (kMax) or smallest value: NaN wins, then the first of ties.
template <bool kMax>
size_t extreme(const Values& x, const std::vector<int64_t>& group) {
  size_t best = 0;
  for (size_t j = 0; j < group.size(); ++j) {
    const double v = x.v[group[j]], b = x.v[group[best]];
    if (std::isnan(v)) return j;
    if (kMax ? v > b : v < b) best = j;
  }
  return best;
}

bool is_max(std::string_view op) { return op == "amax" || op == "max_dim" || op == "argmax"; }

}  // namespace

Tensor reduce_reference(std::string_view op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
                        std::optional<DType> dtype) {
  reference::check_dtype(x, op);
  const Values v = reference::read(x, op);
  const Groups g = group_elements(v, reduced_dims(dims, v.dim(), op), keepdim);
  std::vector<double> out(g.groups.size());
  for (size_t o = 0; o < out.size(); ++o) {
    const std::vector<int64_t>& group = g.groups[o];
    long double acc = op == "prod" ? 1 : 0;
    if (op == "sum" || op == "mean") {
      for (int64_t k : group) acc += v.v[k];
      if (op == "mean") acc /= static_cast<long double>(group.size());  // 0 / 0: an empty mean is NaN
    } else if (op == "prod") {
      for (int64_t k : group) acc *= v.v[k];
    } else if (op == "amax" || op == "amin") {
      EMBER_CHECK(!group.empty(), op, ": cannot reduce an empty dim of an input of shape ", IntArrayRef(v.sizes),
                  " (the operation has no identity)");
      acc = v.v[group[op == "amax" ? extreme<true>(v, group) : extreme<false>(v, group)]];
    } else {
      EMBER_FAIL("reduce_reference: no reference for the op ", op);
    }
    out[o] = static_cast<double>(acc);
  }
  const DType out_dtype = dtype.value_or(x.dtype());
  EMBER_CHECK(out_dtype == DType::Float32 || out_dtype == DType::Float64, op,
              ": the reference covers float32 and float64 results, got ", out_dtype);
  return reference::write(g.out_sizes, out, out_dtype);
}

std::vector<Tensor> extreme_dim_reference(std::string_view op, const Tensor& x, int64_t dim, bool keepdim) {
  reference::check_dtype(x, op);
  const Values v = reference::read(x, op);
  const Groups g = group_elements(v, reduced_dims({dim}, v.dim(), op), keepdim);
  std::vector<double> values(g.groups.size()), indices(g.groups.size());
  const int64_t d = reference::wrap_dim(dim, v.dim(), op);
  const int64_t stride = v.dim() == 0 ? 1 : reference::contiguous_strides(v.sizes)[d];
  for (size_t o = 0; o < values.size(); ++o) {
    const std::vector<int64_t>& group = g.groups[o];
    EMBER_CHECK(!group.empty(), op, ": cannot reduce an empty dim of an input of shape ", IntArrayRef(v.sizes));
    const size_t j = is_max(op) ? extreme<true>(v, group) : extreme<false>(v, group);
    values[o] = v.v[group[j]];
    indices[o] = static_cast<double>((group[j] - group[0]) / stride);  // the position along `dim`
  }
  return {reference::write(g.out_sizes, values, x.dtype()), reference::write(g.out_sizes, indices, DType::Int64)};
}

Tensor arg_extreme_reference(std::string_view op, const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (dim) return extreme_dim_reference(op, x, *dim, keepdim)[1];
  reference::check_dtype(x, op);
  const Values v = reference::read(x, op);
  EMBER_CHECK(v.numel() > 0, op, ": cannot take the ", op, " of an empty tensor of shape ", IntArrayRef(v.sizes));
  std::vector<int64_t> all(v.numel());
  for (int64_t k = 0; k < v.numel(); ++k) all[k] = k;
  const size_t j = is_max(op) ? extreme<true>(v, all) : extreme<false>(v, all);
  const std::vector<int64_t> sizes(keepdim ? v.dim() : 0, 1);
  return reference::write(sizes, {static_cast<double>(j)}, DType::Int64);
}

}  // namespace ember::cpu
