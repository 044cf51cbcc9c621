// Op-info rows: advanced indexing (index, index_put_) (Note [The op-info table] in tests/op_info.h).
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

// Where each element of self[indices] comes from (Note [Advanced indexing] in
// kernels/cpu/index/advanced_index.cpp states the rules; they are NumPy's).
struct IndexPlan {
  Shape out_shape;
  std::vector<int64_t> src;  // per output element, the linear index into self
  bool error = false;
};

IndexPlan index_plan(const HostTensor& self, const std::vector<std::optional<HostTensor>>& indices) {
  IndexPlan plan;
  std::vector<std::optional<HostTensor>> idx;  // one entry per dim of self: an int index or none
  for (const std::optional<HostTensor>& e : indices) {
    if (!e || (e->dtype != DType::Bool && e->dtype != DType::UInt8)) {
      idx.push_back(e);
      continue;
    }
    // A mask over dims d..d+k-1 becomes k index tensors: its nonzero positions, row-major.
    const size_t d = idx.size();
    if (d + e->shape.size() > self.shape.size()) return {{}, {}, true};
    for (size_t j = 0; j < e->shape.size(); ++j) {
      if (e->shape[j] != self.shape[d + j]) return {{}, {}, true};
    }
    std::vector<Shape> pos;
    for_each_index(e->shape, [&](const Shape& p, int64_t k) {
      if (e->i[k]) pos.push_back(p);
    });
    for (size_t j = 0; j < e->shape.size(); ++j) {
      HostTensor t({static_cast<int64_t>(pos.size())}, DType::Int64);
      for (size_t p = 0; p < pos.size(); ++p) t.i[p] = pos[p][j];
      idx.push_back(t);
    }
  }
  if (idx.size() > self.shape.size()) return {{}, {}, true};
  idx.resize(self.shape.size());
  std::vector<size_t> indexed, rest;
  for (size_t d = 0; d < idx.size(); ++d) (idx[d] ? indexed : rest).push_back(d);
  Shape b;
  for (size_t d : indexed) {
    const std::optional<Shape> s = broadcast(b, idx[d]->shape);
    if (!s) return {{}, {}, true};
    b = *s;
  }
  // Adjacent indexed dims: B replaces them in place; separated: B goes first.
  const bool adjacent = indexed.empty() || indexed.back() - indexed.front() + 1 == indexed.size();
  const size_t first = adjacent && !indexed.empty() ? indexed.front() : 0;
  for (size_t k = 0; k < first; ++k) plan.out_shape.push_back(self.shape[rest[k]]);
  if (!indexed.empty()) plan.out_shape.insert(plan.out_shape.end(), b.begin(), b.end());
  for (size_t k = first; k < rest.size(); ++k) plan.out_shape.push_back(self.shape[rest[k]]);
  const size_t nb = indexed.empty() ? 0 : b.size();
  for_each_index(plan.out_shape, [&](const Shape& o, int64_t) {
    Shape s(self.shape.size());
    const Shape bidx(o.begin() + static_cast<int64_t>(first), o.begin() + static_cast<int64_t>(first + nb));
    for (size_t k = 0; k < rest.size(); ++k) s[rest[k]] = o[k < first ? k : k + nb];
    for (size_t d : indexed) {
      int64_t v = idx[d]->at_int(source_index(bidx, idx[d]->shape));
      const int64_t n = self.shape[d];
      if (v < -n || v >= n) plan.error = true;
      s[d] = v < 0 ? v + n : v;
    }
    plan.src.push_back(plan.error ? 0 : linear_index(s, self.shape));
  });
  return plan;
}

Tensor undefined() { return Tensor(); }

std::vector<Sample> index_samples(DType t, SampleSize size, bool put) {
  std::vector<Sample> out;
  // index: (self, indices); index_put_: (self, indices, values of the result's shape, accumulate).
  auto add = [&](std::string name, const Tensor& self, TensorList idx, Shape values = {}, bool acc = false,
                 std::string error = "") {
    Stack a = {arg(self), arg(idx)};
    if (put) a.insert(a.end(), {arg(make_input(values, t)), bool_arg(acc)});
    out.push_back({std::move(name), std::move(a), {}, std::move(error)});
  };
  const Tensor none = undefined();
  if (size == SampleSize::Large) {
    std::vector<double> rows;
    for (int64_t k = 0; k < 300; ++k) rows.push_back(static_cast<double>((k * 7) % 400));  // distinct
    add("large", make_input({400, 256}, t), {int64_values({300}, rows)}, {300, 256});
    if (put) {
      add("large_accumulate", make_input({400, 256}, t), {int64_values({300}, {3, 1, 4, 1, 5, 9, 2, 6})}, {300, 256},
          true);
    }
    return out;
  }
  add("dim0", make_input({5, 4}, t), {int64_values({3}, {4, 0, -1})}, {3, 4});
  add("dim1", make_input({5, 4}, t), {none, int64_values({2, 2}, {1, 3, 0, -4})}, {5, 2, 2});
  add("two_adjacent", make_input({5, 4, 3}, t), {int64_values({3}, {0, 2, 4}), int64_values({3}, {1, 2, -1})}, {3, 3});
  add("broadcast_indices", make_input({5, 4}, t), {int64_values({2, 1}, {0, 4}), int64_values({3}, {0, 1, 3})}, {2, 3});
  add("separated", make_input({5, 4, 3}, t), {int64_values({2}, {1, 3}), none, int64_values({2}, {0, 2})}, {2, 4});
  add("int32_index", make_input({5, 4}, t, kSliced), {from_values({2}, DType::Int32, {1, 2})}, {2, 4});
  add("mask", make_input({3, 4}, t), {from_values({3, 4}, DType::Bool, {1, 0, 0, 1, 1})}, {7});
  add("mask_dim1", make_input({3, 4}, t, kTransposed), {none, from_values({4}, DType::Bool, {0, 1, 1, 0})}, {3, 2});
  add("transposed", make_input({4, 5}, t, kTransposed), {int64_values({2}, {3, 1})}, {2, 5});
  add("empty_index", make_input({5, 4}, t), {int64_values({0}, {0})}, {0, 4});
  add("empty_self", make_input({0, 4}, t), {none, int64_values({1}, {2})}, {0, 1});
  add("out_of_range", make_input({5, 4}, t), {int64_values({2}, {1, 5})}, {2, 4}, false, "index");
  add("too_many", make_input({5}, t), {int64_values({1}, {1}), int64_values({1}, {0})}, {1}, false, "too many");
  if (put) {
    add("broadcast_values", make_input({5, 4}, t), {int64_values({2}, {1, 3})}, {4});
    add("scalar_value", make_input({3, 4}, t), {from_values({3, 4}, DType::Bool, {0, 1, 1})}, {});
    add("accumulate_repeated", make_input({5, 4}, t), {int64_values({4}, {1, 1, 3, 1})}, {4, 4}, true);
    add("accumulate_mask", make_input({3, 4}, t, kTransposed), {from_values({3, 4}, DType::Bool, {1, 0, 1})}, {}, true);
    add("bad_values", make_input({5, 4}, t), {int64_values({2}, {1, 3})}, {3}, false, "shape mismatch");
  }
  return out;
}

Expected index_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0);
  const IndexPlan plan = index_plan(self, a.tensors(1));
  if (plan.error) return Expected::raises("");
  HostTensor r(plan.out_shape, a.out);
  for (size_t k = 0; k < plan.src.size(); ++k) {
    if (self.floating()) r.set(static_cast<int64_t>(k), self.f[plan.src[k]]);
    else r.set_int(static_cast<int64_t>(k), self.i[plan.src[k]]);
  }
  return {{r}, false, ""};
}

// self[indices] = values (broadcast to the result's shape); repeated
// positions take the last value, or the sum of all with accumulate.
Expected index_put_ref(const RefArgs& a) {
  HostTensor r = a.tensor(0);
  const HostTensor values = a.tensor(2);
  const bool acc = a.flag(3);
  const IndexPlan plan = index_plan(r, a.tensors(1));
  if (plan.error) return Expected::raises("");
  const std::optional<Shape> s = broadcast(plan.out_shape, values.shape);
  if (!s || *s != plan.out_shape) return Expected::raises("");
  for_each_index(plan.out_shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = plan.src[k], v = source_index(idx, values.shape);
    if (r.floating()) r.set(j, acc ? r.f[j] + values.f[v] : values.f[v]);
    else r.set_int(j, acc ? r.i[j] + values.i[v] : values.i[v]);
  });
  return {{r}, false, ""};
}

}  // namespace

void add_advanced_index_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "index", .dtypes = kAll, .out_dtype = same_dtype,
                  .samples = [](DType t, SampleSize size) { return index_samples(t, size, false); },
                  .reference = index_ref, .exact = true});
  rows.push_back({.name = "index_put_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = [](DType t, SampleSize size) { return index_samples(t, size, true); },
                  .reference = index_put_ref, .accumulation = largest_arg_numel});
  rows.push_back({
      .name = "nonzero", .dtypes = kAll, .out_dtype = int64_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = unary_samples(t, size, Domain::Unit);
        if (size == SampleSize::Small) {
          s.push_back({"all_zero", {arg(ember::zeros({2, 3}, t))}, {}, ""});
          s = joined(s, unary_error_samples(t, Domain::Unit, false));
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        const HostTensor in = a.tensor(0);
        std::vector<Shape> pos;
        for_each_index(in.shape, [&](const Shape& p, int64_t k) {
          if (in.at(k) != 0 || std::isnan(in.at(k))) pos.push_back(p);
        });
        HostTensor r({static_cast<int64_t>(pos.size()), in.dim()}, DType::Int64);
        for (size_t p = 0; p < pos.size(); ++p) {
          for (int64_t d = 0; d < in.dim(); ++d) r.i[p * in.dim() + d] = pos[p][d];
        }
        return {{r}, false, ""};
      },
  });
}

}  // namespace ember::testing
