// Op-info rows: triangles, one-hot, sorting, cat (Note [The op-info table] in tests/op_info.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "tests/op_info.h"
#include "tests/op_info_error_inputs.h"
#include "tests/op_info_inputs.h"

namespace ember::testing {
namespace {

std::function<Expected(const RefArgs&)> triangle_ref(bool lower) {
  return [lower](const RefArgs& a) -> Expected {
    const HostTensor in = a.tensor(0);
    if (in.dim() < 2) return Expected::raises("");
    const int64_t diag = a.integer(1);
    HostTensor r(in.shape, a.out);
    for_each_index(in.shape, [&](const Shape& idx, int64_t k) {
      const int64_t off = idx[idx.size() - 1] - idx[idx.size() - 2];  // column - row
      const bool keep = lower ? off <= diag : off >= diag;
      if (!keep) return;
      if (in.floating()) r.set(k, in.f[k]);
      else r.set_int(k, in.i[k]);
    });
    return {{r}, false, ""};
  };
}

std::vector<Sample> triangle_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& x, int64_t diag, std::string err = "") -> Sample {
    return {std::move(n), {arg(x), int_arg(diag)}, {}, std::move(err)};
  };
  if (size == SampleSize::Large) return {s("large", make_input({256, 400}, t), 3)};
  return {s("main", make_input({4, 5}, t), 0),          s("above", make_input({4, 5}, t), 1),
          s("below", make_input({4, 5}, t), -2),        s("beyond", make_input({4, 5}, t), 10),
          s("below_all", make_input({4, 5}, t), -10),   s("batched", make_input({2, 3, 4}, t), 0),
          s("transposed", make_input({4, 5}, t, kTransposed), 1), s("sliced", make_input({4, 5}, t, kSliced), 0),
          s("empty", make_input({0, 3}, t), 0),         s("1d", make_input({4}, t), 0, "")};
}

// Orders (value, index) pairs as sort and topk do: NaN above every number,
// equal values by index.
bool ascending_before(double a, int64_t ia, double b, int64_t ib) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? ia < ib : std::isnan(b);
  return a < b || (a == b && ia < ib);
}
bool descending_before(double a, int64_t ia, double b, int64_t ib) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? ia < ib : std::isnan(a);
  return a > b || (a == b && ia < ib);
}

// values and int64 indices of the first k of each row along `dim`, ordered by `before`.
Expected ordered_ref(const RefArgs& a, int64_t dim, int64_t k, bool descending) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d = wrap(dim, in.dim());
  if (!d) return Expected::raises("dim");
  const int64_t n = in.dim() == 0 ? 1 : in.shape[*d];
  if (k < 0 || k > n) return Expected::raises("");
  Shape out_shape = in.shape;
  if (in.dim() > 0) out_shape[*d] = k;
  HostTensor values(out_shape, a.out), indices(out_shape, DType::Int64);
  Shape rows = in.shape;
  if (in.dim() > 0) rows[*d] = 1;
  for_each_index(rows, [&](const Shape& row, int64_t) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto at = [&](int64_t j) {
      Shape p = row;
      if (in.dim() > 0) p[*d] = j;
      return linear_index(p, in.shape);
    };
    std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return descending ? descending_before(in.at(at(x)), x, in.at(at(y)), y)
                        : ascending_before(in.at(at(x)), x, in.at(at(y)), y);
    });
    for (int64_t j = 0; j < (in.dim() == 0 ? 1 : k); ++j) {
      Shape p = row;
      if (in.dim() > 0) p[*d] = j;
      const int64_t o = linear_index(p, out_shape), src = at(order[j]);
      if (in.floating()) values.set(o, in.f[src]);
      else values.set_int(o, in.i[src]);
      indices.set_int(o, order[j]);
    }
  });
  return {{values, indices}, false, ""};
}

Tensor with_ties(const Shape& shape, DType t) {
  return from_values(shape, t, {2, 1, 2, 0, 1, 2, 0, 0, 3});
}

std::vector<Sample> sort_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& x, int64_t dim, bool desc, bool stable = false) -> Sample {
    return {std::move(n), {arg(x), int_arg(dim), bool_arg(desc), bool_arg(stable)}, {}, ""};
  };
  if (size == SampleSize::Large) {
    return {s("large", make_input({256, 400}, t), -1, false), s("large_dim0", make_input({256, 400}, t), 0, true)};
  }
  std::vector<Sample> out = {
      s("last_dim", make_input({3, 6}, t), -1, false),   s("dim0", make_input({4, 3}, t), 0, false),
      s("descending", make_input({3, 6}, t), 1, true),   s("stable", make_input({3, 6}, t), 1, false, true),
      s("ties", with_ties({3, 6}, t), 1, false, true),   s("ties_descending", with_ties({6, 3}, t), 0, true, true),
      s("transposed", make_input({3, 6}, t, kTransposed), 1, false),
      s("sliced", make_input({3, 6}, t, kSliced), 0, true),
      s("empty", make_input({0, 3}, t), 1, false),       s("0d", make_input({}, t), 0, false),
      s("bad_dim", make_input({3, 6}, t), 2, false),     s("bad_negative_dim", make_input({3, 6}, t), -3, false)};
  if (is_floating_point(t)) {
    out.push_back(s("special", from_values({12}, t, kSpecials), 0, false));
    out.push_back(s("special_descending", from_values({2, 12}, t, kSpecials), 1, true));
  }
  return out;
}

std::vector<Sample> topk_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& x, int64_t k, int64_t dim, bool largest, std::string err = "") -> Sample {
    return {std::move(n), {arg(x), int_arg(k), int_arg(dim), bool_arg(largest), bool_arg(true)}, {}, std::move(err)};
  };
  if (size == SampleSize::Large)
    return {s("large", make_input({256, 400}, t), 5, -1, true),
            s("large_many", make_input({256, 400}, t), 100, 0, false)};
  std::vector<Sample> out = {
      s("largest", make_input({4, 6}, t), 3, -1, true),  s("smallest", make_input({4, 6}, t), 3, 1, false),
      s("dim0", make_input({4, 6}, t), 2, 0, true),      s("k0", make_input({4, 6}, t), 0, 1, true),
      s("all", make_input({4, 6}, t), 6, 1, false),      s("ties", with_ties({3, 6}, t), 4, 1, true),
      s("ties_smallest", with_ties({3, 6}, t), 4, 1, false),
      s("transposed", make_input({4, 6}, t, kTransposed), 2, 1, true),
      s("sliced", make_input({4, 6}, t, kSliced), 5, 0, false),
      s("empty", make_input({0, 4}, t), 2, 1, true),     s("0d", make_input({}, t), 1, 0, true),
      s("k_too_large", make_input({4, 6}, t), 7, 1, true, "topk")};
  if (is_floating_point(t)) {
    out.push_back(s("special", from_values({12}, t, kSpecials), 5, 0, true));
    out.push_back(s("special_smallest", from_values({12}, t, kSpecials), 5, 0, false));
  }
  return out;
}

std::vector<Sample> cat_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, TensorList xs, int64_t dim, std::optional<DType> out = std::nullopt,
               std::string err = "") -> Sample { return {std::move(n), {arg(xs), int_arg(dim)}, out, std::move(err)}; };
  if (size == SampleSize::Large)
    return {s("large", {make_input({256, 200}, t), make_input({256, 200}, t, kTransposed)}, 1)};
  return {s("dim0", {make_input({2, 3}, t), make_input({4, 3}, t)}, 0),
          s("dim1", {make_input({2, 3}, t), make_input({2, 1}, t), make_input({2, 4}, t)}, 1),
          s("neg_dim", {make_input({2, 3, 2}, t), make_input({2, 3, 1}, t)}, -1),
          s("with_empty", {make_input({2, 3}, t), make_input({0, 3}, t)}, 0),
          s("noncontiguous", {make_input({2, 3}, t, kTransposed), make_input({2, 3}, t, kSliced)}, 0),
          s("single", {make_input({2, 3}, t)}, 1),
          s("mixed_dtype", {make_input({2, 3}, t), make_input({1, 3}, DType::Float64)}, 0,
            promote_types(t, DType::Float64)),
          s("0d", {make_input({}, t), make_input({}, t)}, 0, std::nullopt, "zero-dim"),
          s("size_mismatch", {make_input({2, 3}, t), make_input({2, 4}, t)}, 0, std::nullopt, "cat"),
          s("bad_dim", {make_input({2, 3}, t), make_input({2, 3}, t)}, 2, std::nullopt, "cat")};
}

Expected cat_ref(const RefArgs& a) {
  const std::vector<std::optional<HostTensor>> xs = a.tensors(0);
  if (xs.empty()) return Expected::raises("");
  const HostTensor& first = *xs[0];
  const std::optional<int64_t> d = wrap(a.integer(1), first.dim());
  if (!d || first.dim() == 0) return Expected::raises("");
  Shape out_shape = first.shape;
  out_shape[*d] = 0;
  for (const auto& x : xs) {
    if (x->dim() != first.dim()) return Expected::raises("");
    for (int64_t j = 0; j < first.dim(); ++j) {
      if (j != *d && x->shape[j] != first.shape[j]) return Expected::raises("");
    }
    out_shape[*d] += x->shape[*d];
  }
  HostTensor r(out_shape, a.out);
  int64_t start = 0;
  for (const auto& x : xs) {
    for_each_index(x->shape, [&](const Shape& idx, int64_t k) {
      Shape o = idx;
      o[*d] += start;
      const int64_t j = linear_index(o, out_shape);
      if (x->floating()) r.set(j, x->f[k]);
      else r.set_int(j, x->i[k]);
    });
    start += x->shape[*d];
  }
  return {{r}, false, ""};
}

// unique(self, sorted, return_inverse, return_counts).
std::vector<Sample> unique_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& x, bool inverse = true, bool counts = true, bool sorted = true) -> Sample {
    return {std::move(n), {arg(x), bool_arg(sorted), bool_arg(inverse), bool_arg(counts)}, {}, ""};
  };
  if (size == SampleSize::Large) return {s("large", make_input({256, 400}, t))};
  std::vector<Sample> out = {s("ties", with_ties({3, 6}, t)),
                             s("random", make_input({4, 5}, t)),
                             s("values_only", with_ties({2, 9}, t), false, false),
                             s("counts_only", with_ties({9}, t), false, true),
                             s("unsorted", with_ties({3, 3}, t), true, true, false),
                             s("transposed", make_input({4, 5}, t, kTransposed)),
                             s("sliced", with_ties({3, 6}, t).slice(1, 1, std::nullopt, 2)),
                             s("empty", make_input({0, 3}, t)),
                             s("0d", make_input({}, t))};
  if (is_floating_point(t)) out.push_back(s("special", from_values({2, kNumSpecials}, t, kSpecials)));
  out.push_back(undefined_input(out.front(), 0));
  return out;
}

// Distinct values ascending (NaN last, each NaN its own, -0 == 0 shown as its first occurrence).
Expected unique_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const bool inverse = a.flag(2), counts = a.flag(3);
  const int64_t n = in.numel();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
    return !std::isnan(in.at(i)) && (std::isnan(in.at(j)) || in.at(i) < in.at(j));
  });
  std::vector<int64_t> firsts, sizes;
  HostTensor inv(inverse ? in.shape : Shape{0}, DType::Int64);
  for (int64_t k = 0; k < n; ++k) {
    if (k == 0 || !(in.at(order[k - 1]) == in.at(order[k]))) {
      firsts.push_back(order[k]);
      sizes.push_back(0);
    }
    ++sizes.back();
    if (inverse) inv.i[order[k]] = static_cast<int64_t>(firsts.size()) - 1;
  }
  const int64_t groups = static_cast<int64_t>(firsts.size());
  HostTensor values({groups}, a.out), cnt({counts ? groups : 0}, DType::Int64);
  for (int64_t g = 0; g < groups; ++g) {
    if (values.floating()) values.set(g, in.f[firsts[g]]);
    else values.set_int(g, in.i[firsts[g]]);
    if (counts) cnt.i[g] = sizes[g];
  }
  return {{values, inv, cnt}, false, ""};
}

// A sorted 1-D tensor of n values of the dtype's domain (with repeats for integers).
Tensor sorted_values(int64_t n, DType t) {
  HostTensor h = to_host(make_input({n}, t));
  std::vector<double> v;
  for (int64_t k = 0; k < n; ++k) v.push_back(h.at(k));
  std::sort(v.begin(), v.end());
  return from_values({n}, t, v);
}

// Rows sorted along the last dim: (rows, n).
Tensor sorted_rows(int64_t rows, int64_t n, DType t) {
  TensorList parts;
  for (int64_t r = 0; r < rows; ++r) parts.push_back(sorted_values(n, t).unsqueeze(0));
  return ember::cat(parts, 0);
}

// searchsorted(sorted_sequence, self, out_int32, right).
std::vector<Sample> searchsorted_samples(DType t, SampleSize size) {
  auto s = [&](std::string n, const Tensor& seq, const Tensor& v, bool right, bool int32 = false,
               std::string err = "") -> Sample {
    return {std::move(n), {arg(seq), arg(v), bool_arg(int32), bool_arg(right)},
            int32 ? std::optional<DType>(DType::Int32) : std::nullopt, std::move(err)};
  };
  if (size == SampleSize::Large) {
    return {s("large", sorted_values(1000, t), make_input({256, 400}, t), false),
            s("large_rows", sorted_rows(256, 50, t), make_input({256, 400}, t), true)};
  }
  const Tensor ties = from_values({7}, t, {0, 1, 1, 1, 2, 3, 3});
  const Tensor on_ties = from_values({2, 3}, t, {1, 3, 0, 2, 1, 4});
  std::vector<Sample> out = {
      s("left", sorted_values(8, t), make_input({3, 5}, t), false),
      s("right", sorted_values(8, t), make_input({3, 5}, t), true),
      s("ties_left", ties, on_ties, false),
      s("ties_right", ties, on_ties, true),
      s("rows", sorted_rows(3, 6, t), make_input({3, 4}, t), false),
      s("rows_right", sorted_rows(2, 5, t), make_input({2, 7}, t, kTransposed), true),
      s("sliced_sequence", sorted_values(12, t).slice(0, 1, std::nullopt, 2), make_input({5}, t, kSliced), false),
      s("int32", sorted_values(8, t), make_input({2, 3}, t), false, true),
      s("mixed_dtype", sorted_values(8, t), make_input({4}, t == DType::Int64 ? DType::Float64 : DType::Int64), true),
      s("empty_values", sorted_values(4, t), make_input({0, 3}, t), false),
      s("empty_sequence", make_input({0}, t), make_input({3}, t), false),
      s("0d_values", sorted_values(5, t), make_input({}, t), false),
      s("0d_sequence", make_input({}, t), make_input({3}, t), false, false, "searchsorted"),
      s("rows_mismatch", sorted_rows(3, 6, t), make_input({2, 4}, t), false, false, "searchsorted")};
  if (is_floating_point(t)) {
    const Tensor seq = from_values({5}, t, {-kInf, -1, 0, 1, kInf});
    out.push_back(s("special", seq, from_values({kNumSpecials}, t, kSpecials), false));
    out.push_back(s("special_right", seq, from_values({kNumSpecials}, t, kSpecials), true));
  }
  return out;
}

// PyTorch's search: step right while !(seq[mid] >= v) (left) or !(seq[mid] > v) (right).
Expected searchsorted_ref(const RefArgs& a) {
  const HostTensor seq = a.tensor(0), v = a.tensor(1);
  const bool right = a.flag(3);
  if (seq.dim() == 0) return Expected::raises("");
  const int64_t n = seq.shape.back();
  if (seq.dim() > 1) {
    if (v.dim() != seq.dim()) return Expected::raises("");
    for (int64_t d = 0; d + 1 < seq.dim(); ++d) {
      if (seq.shape[d] != v.shape[d]) return Expected::raises("");
    }
  }
  HostTensor r(v.shape, a.out);
  const int64_t per_row = seq.dim() == 1 ? std::max<int64_t>(v.numel(), 1) : v.shape.back();
  for (int64_t k = 0; k < v.numel(); ++k) {
    const int64_t base = seq.dim() == 1 ? 0 : (k / per_row) * n;
    const double x = v.at(k);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      const double m = seq.at(base + mid);
      if (right ? !(m > x) : !(m >= x)) lo = mid + 1;
      else hi = mid;
    }
    r.set_int(k, lo);
  }
  return {{r}, false, ""};
}

}  // namespace

void add_shape_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "tril", .dtypes = kAll, .out_dtype = same_dtype, .samples = triangle_samples,
                  .reference = triangle_ref(true), .exact = true});
  rows.push_back({.name = "triu", .dtypes = kAll, .out_dtype = same_dtype, .samples = triangle_samples,
                  .reference = triangle_ref(false), .exact = true});
  rows.push_back({
      .name = "one_hot", .dtypes = {DType::Int64}, .out_dtype = int64_dtype,
      .samples = [](DType, SampleSize size) -> std::vector<Sample> {
        auto s = [](std::string n, const Tensor& x, int64_t classes, std::string err = "") -> Sample {
          return {std::move(n), {arg(x), int_arg(classes)}, {}, std::move(err)};
        };
        if (size == SampleSize::Large) {
          return {s("large", make_input({4000}, DType::Int64, Domain::Positive), 25)};
        }
        return {s("inferred", int64_values({5}, {0, 3, 1, 1, 2}), -1),
                s("given", int64_values({2, 3}, {4, 0, 5}), 6),
                s("transposed", int64_values({3, 2}, {2, 0, 1}).transpose(0, 1), 3),
                s("0d", int64_values({}, {2}), 4),
                s("empty", int64_values({0}, {0}), 3),
                s("empty_inferred", int64_values({0}, {0}), -1, "one_hot"),
                s("negative", int64_values({2}, {1, -1}), 3, "one_hot"),
                s("too_large", int64_values({2}, {1, 5}), 3, "one_hot")};
      },
      .reference = [](const RefArgs& a) -> Expected {
        const HostTensor in = a.tensor(0);
        const int64_t given = a.integer(1);
        int64_t mx = -1;
        for (int64_t v : in.i) mx = std::max(mx, v);
        const int64_t classes = given == -1 ? mx + 1 : given;
        Shape shape = in.shape;
        shape.push_back(classes);
        HostTensor r(shape, DType::Int64);
        for (int64_t k = 0; k < in.numel(); ++k) r.i[k * classes + in.i[k]] = 1;
        return {{r}, false, ""};
      },
  });
  rows.push_back({.name = "sort", .dtypes = kAll, .out_dtype = same_dtype, .samples = sort_samples,
                  .reference = [](const RefArgs& a) -> Expected {
                    const HostTensor in = a.tensor(0);
                    const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
                    if (!d) return Expected::raises("dim");
                    return ordered_ref(a, a.integer(1), in.dim() == 0 ? 1 : in.shape[*d], a.flag(2));
                  },
                  .exact = true});
  rows.push_back({.name = "topk", .dtypes = kAll, .out_dtype = same_dtype, .samples = topk_samples,
                  .reference = [](const RefArgs& a) { return ordered_ref(a, a.integer(2), a.integer(1), a.flag(3)); },
                  .exact = true});
  rows.push_back({.name = "unique", .dtypes = kAll, .out_dtype = same_dtype, .samples = unique_samples,
                  .reference = unique_ref, .exact = true});
  rows.push_back({.name = "searchsorted", .dtypes = kNumeric, .out_dtype = int64_dtype,
                  .samples = searchsorted_samples, .reference = searchsorted_ref});
  rows.push_back({.name = "cat", .dtypes = kAll, .out_dtype = same_dtype, .samples = cat_samples,
                  .reference = cat_ref, .exact = true});
}

}  // namespace ember::testing
