// Op-info rows: triangles, one-hot, sorting, cat (Note [The op-info table] in tests/op_info.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "tests/op_info.h"
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
      s("bad_dim", make_input({3, 6}, t), 2, false)};
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

}  // namespace

void add_shape_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "tril", .dtypes = kAll, .out_dtype = same_dtype, .samples = triangle_samples,
                  .reference = triangle_ref(true)});
  rows.push_back({.name = "triu", .dtypes = kAll, .out_dtype = same_dtype, .samples = triangle_samples,
                  .reference = triangle_ref(false)});
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
                  }});
  rows.push_back({.name = "topk", .dtypes = kAll, .out_dtype = same_dtype, .samples = topk_samples,
                  .reference = [](const RefArgs& a) { return ordered_ref(a, a.integer(2), a.integer(1), a.flag(3)); }});
  rows.push_back({.name = "cat", .dtypes = kAll, .out_dtype = same_dtype, .samples = cat_samples,
                  .reference = cat_ref});
}

}  // namespace ember::testing
