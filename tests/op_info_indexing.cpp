// Op-info rows of the indexing family (Note [The op-info table], tests/op_info.h):
// gather, scatter, scatter_value, scatter_add, index_select, index_add,
// masked_select, repeat, flip, roll. References are plain loops over
// multi-indices, from the raw values.
#include <algorithm>
#include <optional>

#include "tests/op_info_indexing_inputs.h"

namespace ember::testing {

namespace {

using namespace family;

const std::vector<DType> kAll = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                 DType::Int32,   DType::Int64,   DType::UInt8,   DType::Bool};

Shape nonempty(const Shape& s) { return s.empty() ? Shape{1} : s; }
int64_t wrap(int64_t dim, size_t nd) { return dim < 0 ? dim + static_cast<int64_t>(std::max<size_t>(nd, 1)) : dim; }

// ids in [0, n), distinct along `dim` for each position of the other dims
// (needs shape[dim] <= n): scatter without repeats has one defined result.
Tensor distinct_ids(const Shape& shape, int64_t dim, int64_t n) {
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for_each_index(shape, [&](const Shape& p, int64_t k) {
    int64_t outer = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (static_cast<int64_t>(d) != dim) outer = outer * 7 + p[d];
    }
    v[k] = static_cast<double>((p[dim] + 3 * outer) % n);
  });
  return from_values(shape, DType::Int64, v);
}

// The value a Scalar argument of dtype t's samples takes.
Scalar value_for(DType t, double v) {
  if (t == DType::Bool) return Scalar(v != 0);
  if (!is_floating_point(t)) return Scalar(static_cast<int64_t>(v));
  return Scalar(v);
}

// r[j] += alpha * s[k], as the kernel computes it in the dtype.
void add_to(HostTensor& r, int64_t j, const HostTensor& s, int64_t k, double alpha) {
  if (r.dtype == DType::Bool) {
    r.i[j] = r.i[j] || (s.i[k] && alpha != 0);
  } else if (!r.floating()) {
    r.set_int(j, r.i[j] + static_cast<int64_t>(alpha) * s.i[k]);
  } else if (r.dtype == DType::Float64) {
    r.f[j] += alpha * s.f[k];
  } else {
    const float a = static_cast<float>(alpha);
    r.f[j] = round_to(r.dtype, static_cast<float>(r.f[j]) + a * static_cast<float>(s.f[k]));
  }
}

Sample sample(std::string name, Stack args, std::string error = "") {
  return {std::move(name), std::move(args), {}, std::move(error)};
}

// ---- gather ----

std::vector<Sample> gather_samples(DType t, SampleSize size) {
  auto s = [&](std::string name, const Tensor& self, int64_t dim, const Tensor& index, std::string error = "") {
    return sample(std::move(name), {arg(self), int_arg(dim), arg(index)}, std::move(error));
  };
  if (size == SampleSize::Large) {
    return {s("large_dim1", input({400, 256}, t), 1, ids({400, 250}, 256)),
            s("large_dim0", input({400, 256}, t, Layout::Transposed), 0, ids({300, 256}, 400))};
  }
  return {
      s("dim0", input({4, 3}, t), 0, ids({2, 3}, 4)),
      s("dim1_longer_index", input({3, 5}, t, Layout::Transposed), 1, ids({3, 7}, 5)),
      s("smaller_index", input({4, 5}, t), 1, ids({2, 3}, 5)),
      s("3d_middle", input({2, 4, 3}, t), 1, ids({2, 5, 3}, 4)),
      s("negative_dim", input({3, 4}, t, Layout::Sliced), -1, ids({3, 2}, 4)),
      s("batch1", input({1, 6}, t), 1, ids({1, 6}, 6)),
      s("index_transposed", input({4, 4}, t), 0, ids({4, 4}, 4).t()),
      s("0d", input({}, t), 0, from_values({}, DType::Int64, {0})),
      s("empty_index", input({4, 3}, t), 0, ids({0, 3}, 4)),
      s("out_of_range", input({4, 3}, t), 0, from_values({1, 3}, DType::Int64, {0, 4, 1}), "out of bounds"),
      s("negative_index", input({4, 3}, t), 1, from_values({1, 2}, DType::Int64, {-1, 0}), "out of bounds"),
      s("int32_index", input({4, 3}, t), 0, ids({2, 3}, 4, DType::Int32), "int64"),
      s("rank_mismatch", input({4, 3}, t), 1, ids({3}, 3), "as many dims"),
      s("index_too_large", input({4, 3}, t), 1, ids({5, 3}, 3), "must not be larger"),
      s("bad_dim", input({4, 3}, t), 2, ids({4, 3}, 3), "out of range"),
  };
}

Expected gather_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0), index = a.tensor(2);
  const int64_t dim = wrap(a.integer(1), self.shape.size());
  const Shape ss = nonempty(self.shape), is = nonempty(index.shape);
  HostTensor r(index.shape, a.out);
  for_each_index(is, [&](const Shape& p, int64_t k) {
    Shape q = p;
    q[dim] = index.i[k];
    copy_element(r, k, self, linear_index(q, ss));
  });
  return {{r}, false, ""};
}

// ---- scatter, scatter_value, scatter_add ----

enum class ScatterKind : uint8_t { Src, Value, Add };

std::vector<Sample> scatter_samples(ScatterKind kind, DType t, SampleSize size) {
  const Scalar value = value_for(t, 2.5);
  auto s = [&](std::string name, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               std::string error = "") {
    Stack args = {arg(self), int_arg(dim), arg(index)};
    args.push_back(kind == ScatterKind::Value ? arg(value) : arg(src));
    return sample(std::move(name), std::move(args), std::move(error));
  };
  const bool add = kind == ScatterKind::Add;
  // scatter_add may repeat ids (they add up in order); the others get distinct ones.
  auto idx = [&](const Shape& shape, int64_t dim, int64_t n) { return add ? ids(shape, n) : distinct_ids(shape, dim, n); };
  if (size == SampleSize::Large) {
    if (add) return {s("large_repeats", input({400, 256}, t), 0, ids({400, 256}, 50), input({400, 256}, t))};
    return {s("large", input({400, 256}, t), 1, idx({400, 200}, 1, 256), input({400, 200}, t))};
  }
  std::vector<Sample> out = {
      s("dim0", input({4, 3}, t), 0, idx({3, 3}, 0, 4), input({3, 3}, t)),
      s("dim1", input({3, 5}, t, Layout::Transposed), 1, idx({3, 4}, 1, 5), input({3, 4}, t)),
      s("src_larger", input({4, 5}, t), 1, idx({2, 3}, 1, 5), input({3, 4}, t, Layout::Sliced)),
      s("3d_middle", input({2, 4, 3}, t), 1, idx({2, 3, 3}, 1, 4), input({2, 3, 3}, t)),
      s("negative_dim", input({1, 6}, t), -1, idx({1, 4}, 1, 6), input({1, 4}, t)),
      s("0d", input({}, t), 0, from_values({}, DType::Int64, {0}), input({}, t)),
      s("empty_index", input({4, 3}, t), 0, ids({0, 3}, 4), input({0, 3}, t)),
      s("out_of_range", input({4, 3}, t), 0, from_values({1, 3}, DType::Int64, {0, 4, 1}), input({1, 3}, t),
        "out of bounds"),
      s("int32_index", input({4, 3}, t), 0, ids({2, 3}, 4, DType::Int32), input({2, 3}, t), "int64"),
      s("rank_mismatch", input({4, 3}, t), 0, ids({3}, 4), input({3}, t), "as many dims"),
      s("index_too_large", input({4, 3}, t), 0, ids({2, 4}, 4), input({2, 4}, t), "must not be larger"),
  };
  if (add) out.push_back(s("repeated_ids", input({3, 4}, t), 1, from_values({3, 5}, DType::Int64, {1, 1, 3, 1, 0}),
                           input({3, 5}, t)));
  if (kind != ScatterKind::Value) {
    out.push_back(s("src_smaller", input({4, 3}, t), 0, ids({2, 3}, 4), input({2, 2}, t), "must not be larger"));
    const DType other = t == DType::Float64 ? DType::Float32 : DType::Float64;
    out.push_back(s("src_dtype", input({4, 3}, t), 0, ids({2, 3}, 4), input({2, 3}, other), "same dtype"));
  }
  return out;
}

Expected scatter_ref(ScatterKind kind, const RefArgs& a) {
  HostTensor r = a.tensor(0);
  const HostTensor index = a.tensor(2);
  const int64_t dim = wrap(a.integer(1), r.shape.size());
  const Shape rs = nonempty(r.shape), is = nonempty(index.shape);
  std::optional<HostTensor> src;
  if (kind != ScatterKind::Value) src = a.tensor(3);
  for_each_index(is, [&](const Shape& p, int64_t k) {
    Shape q = p;
    q[dim] = index.i[k];
    const int64_t j = linear_index(q, rs);
    if (kind == ScatterKind::Value) {
      r.set(j, a.number(3));
      return;
    }
    const int64_t from = linear_index(p, nonempty(src->shape));
    if (kind == ScatterKind::Add) add_to(r, j, *src, from, 1.0);
    else copy_element(r, j, *src, from);
  });
  return {{r}, false, ""};
}

// ---- index_select, index_add ----

std::vector<Sample> index_select_samples(DType t, SampleSize size) {
  auto s = [&](std::string name, const Tensor& self, int64_t dim, const Tensor& index, std::string error = "") {
    return sample(std::move(name), {arg(self), int_arg(dim), arg(index)}, std::move(error));
  };
  if (size == SampleSize::Large) return {s("large", input({400, 256}, t, Layout::Transposed), 0, ids({300}, 400))};
  return {
      s("dim0", input({5, 4}, t), 0, from_values({4}, DType::Int64, {4, 0, 4, 2})),
      s("dim1", input({3, 5}, t, Layout::Transposed), 1, ids({7}, 5)),
      s("3d_last", input({2, 3, 4}, t, Layout::Sliced), -1, ids({3}, 4)),
      s("int32_index", input({5, 4}, t), 0, ids({3}, 5, DType::Int32)),
      s("0d_index", input({5, 4}, t), 1, from_values({}, DType::Int64, {2})),
      s("0d_self", input({}, t), 0, from_values({1}, DType::Int64, {0})),
      s("empty_index", input({5, 4}, t), 0, ids({0}, 5)),
      s("out_of_range", input({5, 4}, t), 0, from_values({2}, DType::Int64, {1, 5}), "out of bounds"),
      s("negative_index", input({5, 4}, t), 0, from_values({1}, DType::Int64, {-1}), "out of bounds"),
      s("float_index", input({5, 4}, t), 0, from_values({1}, DType::Float32, {1}), "int64"),
      s("2d_index", input({5, 4}, t), 0, ids({1, 2}, 5), "vector"),
  };
}

Expected index_select_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0), index = a.tensor(2);
  const int64_t dim = wrap(a.integer(1), self.shape.size());
  Shape shape = self.shape;
  if (!shape.empty()) shape[dim] = index.numel();
  HostTensor r(shape, a.out);
  for_each_index(nonempty(shape), [&](const Shape& p, int64_t k) {
    Shape q = p;
    q[dim] = index.i[p[dim]];
    copy_element(r, k, self, linear_index(q, nonempty(self.shape)));
  });
  return {{r}, false, ""};
}

std::vector<Sample> index_add_samples(DType t, SampleSize size) {
  auto s = [&](std::string name, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
               Scalar alpha = 1, std::string error = "") {
    return sample(std::move(name), {arg(self), int_arg(dim), arg(index), arg(source), arg(alpha)}, std::move(error));
  };
  if (size == SampleSize::Large) return {s("large_repeats", input({100, 256}, t), 0, ids({400}, 100), input({400, 256}, t))};
  std::vector<Sample> out = {
      s("dim0_repeats", input({5, 4}, t), 0, from_values({4}, DType::Int64, {4, 0, 4, 2}), input({4, 4}, t)),
      s("dim1", input({3, 5}, t, Layout::Transposed), 1, ids({7}, 5), input({3, 7}, t, Layout::Sliced)),
      s("int32_index", input({5, 4}, t), 0, ids({3}, 5, DType::Int32), input({3, 4}, t)),
      s("0d", input({}, t), 0, from_values({1}, DType::Int64, {0}), input({}, t)),
      s("empty_index", input({5, 4}, t), 0, ids({0}, 5), input({0, 4}, t)),
      s("out_of_range", input({5, 4}, t), 0, from_values({2}, DType::Int64, {1, 5}), input({2, 4}, t), 1,
        "out of bounds"),
      s("count_mismatch", input({5, 4}, t), 0, ids({3}, 5), input({2, 4}, t), 1, "number of indices"),
      s("shape_mismatch", input({5, 4}, t), 0, ids({2}, 5), input({2, 3}, t), 1, "must match"),
      s("2d_index", input({5, 4}, t), 0, ids({1, 2}, 5), input({2, 4}, t), 1, "vector"),
  };
  if (t != DType::Bool) out.push_back(s("alpha", input({5, 4}, t), 1, ids({6}, 4), input({5, 6}, t), value_for(t, 2.5)));
  return out;
}

Expected index_add_ref(const RefArgs& a) {
  HostTensor r = a.tensor(0);
  const HostTensor index = a.tensor(2), source = a.tensor(3);
  const int64_t dim = wrap(a.integer(1), r.shape.size());
  const double alpha = a.number(4);
  for_each_index(nonempty(source.shape), [&](const Shape& p, int64_t k) {
    Shape q = p;
    q[dim] = index.i[p[dim]];
    add_to(r, linear_index(q, nonempty(r.shape)), source, k, alpha);
  });
  return {{r}, false, ""};
}

// ---- masked_select ----

std::vector<Sample> masked_select_samples(DType t, SampleSize size) {
  auto s = [&](std::string name, const Tensor& self, const Tensor& mask, std::string error = "") {
    return sample(std::move(name), {arg(self), arg(mask)}, std::move(error));
  };
  if (size == SampleSize::Large) return {s("large", input({400, 256}, t), input({400, 256}, DType::Bool))};
  return {
      s("same_shape", input({3, 5}, t), input({3, 5}, DType::Bool)),
      s("mask_broadcast", input({3, 5}, t, Layout::Transposed), input({1, 5}, DType::Bool)),
      s("self_broadcast", input({3, 1}, t), input({3, 4}, DType::Bool, Layout::Transposed)),
      s("mask_sliced", input({2, 3, 4}, t), input({3, 4}, DType::Bool, Layout::Sliced)),
      s("0d_self", input({}, t), from_values({2}, DType::Bool, {1, 0})),
      s("all_false", input({2, 3}, t), from_values({2, 3}, DType::Bool, {0})),
      s("empty", input({0, 3}, t), input({3}, DType::Bool)),
      s("int_mask", input({3, 5}, t), input({3, 5}, DType::Int64), "bool mask"),
      s("not_broadcastable", input({2, 3}, t), input({4, 1}, DType::Bool), "cannot be broadcast"),
  };
}

// The index into `shape` that the broadcast position p (of `b`) reads.
int64_t broadcast_source(const Shape& p, const Shape& b, const Shape& shape) {
  Shape q(shape.size());
  const size_t lead = b.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) q[d] = shape[d] == 1 ? 0 : p[d + lead];
  return linear_index(q, shape);
}

Expected masked_select_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0), mask = a.tensor(1);
  Shape b(std::max(self.shape.size(), mask.shape.size()), 1);
  for (const Shape* s : {&self.shape, &mask.shape}) {
    for (size_t d = 0; d < s->size(); ++d) {
      int64_t& e = b[b.size() - s->size() + d];
      if ((*s)[d] != 1) e = (*s)[d];
    }
  }
  std::vector<int64_t> picked;
  for_each_index(b, [&](const Shape& p, int64_t) {
    if (mask.i[broadcast_source(p, b, mask.shape)]) picked.push_back(broadcast_source(p, b, self.shape));
  });
  HostTensor r({static_cast<int64_t>(picked.size())}, a.out);
  for (size_t k = 0; k < picked.size(); ++k) copy_element(r, static_cast<int64_t>(k), self, picked[k]);
  return {{r}, false, ""};
}

// ---- repeat, flip, roll ----

std::vector<Sample> repeat_samples(DType t, SampleSize size) {
  auto s = [&](std::string name, const Tensor& self, Shape repeats, std::string error = "") {
    return sample(std::move(name), {arg(self), ints_arg(std::move(repeats))}, std::move(error));
  };
  if (size == SampleSize::Large) return {s("large", input({100, 50}, t, Layout::Transposed), {4, 5})};
  return {
      s("2d", input({2, 3}, t), {2, 3}),
      s("ones", input({2, 3}, t, Layout::Transposed), {1, 1}),
      s("new_dims", input({2, 3}, t, Layout::Sliced), {2, 1, 3}),
      s("zero", input({2, 3}, t), {2, 0}),
      s("0d_self", input({}, t), {2, 3}),
      s("0d_none", input({}, t), {}),
      s("batch1", input({1, 4}, t), {3, 1}),
      s("too_few", input({2, 3}, t), {2}, "must not be smaller"),
      s("negative", input({2, 3}, t), {2, -1}, "negative"),
  };
}

Expected repeat_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0);
  const Shape reps = a.ints(1);
  Shape padded(reps.size(), 1), shape;
  for (size_t d = 0; d < self.shape.size(); ++d) padded[reps.size() - self.shape.size() + d] = self.shape[d];
  for (size_t d = 0; d < reps.size(); ++d) shape.push_back(padded[d] * reps[d]);
  HostTensor r(shape, a.out);
  for_each_index(shape, [&](const Shape& p, int64_t k) {
    Shape q = p;
    for (size_t d = 0; d < q.size(); ++d) q[d] %= padded[d];
    copy_element(r, k, self, linear_index(q, padded));
  });
  return {{r}, false, ""};
}

std::vector<Sample> flip_samples(DType t, SampleSize size) {
  auto s = [&](std::string name, const Tensor& self, Shape dims, std::string error = "") {
    return sample(std::move(name), {arg(self), ints_arg(std::move(dims))}, std::move(error));
  };
  if (size == SampleSize::Large) return {s("large", input({400, 256}, t, Layout::Transposed), {0, 1})};
  return {
      s("dim0", input({4, 3}, t), {0}),
      s("last", input({3, 5}, t, Layout::Transposed), {-1}),
      s("both", input({3, 4}, t, Layout::Sliced), {0, 1}),
      s("3d_outer", input({2, 3, 4}, t), {0, 2}),
      s("none", input({2, 3}, t), {}),
      s("0d", input({}, t), {0}),
      s("empty", input({0, 3}, t), {1}),
      s("repeated", input({2, 3}, t), {0, -2}, "more than once"),
      s("bad_dim", input({2, 3}, t), {2}, "out of range"),
  };
}

Expected flip_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0);
  std::vector<bool> flipped(std::max<size_t>(self.shape.size(), 1), false);
  for (int64_t d : a.ints(1)) flipped[wrap(d, self.shape.size())] = true;
  HostTensor r(self.shape, a.out);
  const Shape shape = nonempty(self.shape);
  for_each_index(shape, [&](const Shape& p, int64_t k) {
    Shape q = p;
    for (size_t d = 0; d < q.size(); ++d) {
      if (flipped[d]) q[d] = shape[d] - 1 - q[d];
    }
    copy_element(r, k, self, linear_index(q, shape));
  });
  return {{r}, false, ""};
}

std::vector<Sample> roll_samples(DType t, SampleSize size) {
  auto s = [&](std::string name, const Tensor& self, Shape shifts, Shape dims, std::string error = "") {
    return sample(std::move(name), {arg(self), ints_arg(std::move(shifts)), ints_arg(std::move(dims))}, std::move(error));
  };
  if (size == SampleSize::Large) return {s("large", input({400, 256}, t, Layout::Transposed), {7, -3}, {0, 1})};
  return {
      s("dim0", input({4, 3}, t), {1}, {0}),
      s("last_negative", input({3, 5}, t, Layout::Transposed), {-2}, {1}),
      s("both", input({3, 4}, t, Layout::Sliced), {2, 7}, {0, -1}),
      s("flattened", input({3, 4}, t, Layout::Transposed), {5}, {}),
      s("repeated_dim", input({6}, t), {1, 2}, {0, 0}),
      s("3d_middle", input({2, 3, 4}, t), {-4}, {1}),
      s("0d", input({}, t), {3}, {}),
      s("empty", input({0, 3}, t), {1}, {0}),
      s("no_shifts", input({2, 3}, t), {}, {}, "must not be empty"),
      s("length_mismatch", input({2, 3}, t), {1, 2}, {0}, "same length"),
      s("flattened_two_shifts", input({2, 3}, t), {1, 2}, {}, "one value"),
      s("bad_dim", input({2, 3}, t), {1}, {3}, "out of range"),
  };
}

int64_t mod(int64_t a, int64_t n) { return n == 0 ? 0 : ((a % n) + n) % n; }

Expected roll_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0);
  const Shape shifts = a.ints(1), dims = a.ints(2);
  HostTensor r(self.shape, a.out);
  if (dims.empty()) {
    const int64_t n = self.numel();
    for (int64_t k = 0; k < n; ++k) copy_element(r, k, self, mod(k - shifts[0], n));
    return {{r}, false, ""};
  }
  const Shape shape = nonempty(self.shape);
  Shape shift(shape.size(), 0);
  for (size_t k = 0; k < dims.size(); ++k) shift[wrap(dims[k], self.shape.size())] += shifts[k];
  for_each_index(shape, [&](const Shape& p, int64_t k) {
    Shape q = p;
    for (size_t d = 0; d < q.size(); ++d) q[d] = mod(q[d] - shift[d], shape[d]);
    copy_element(r, k, self, linear_index(q, shape));
  });
  return {{r}, false, ""};
}

using SampleFn = std::vector<Sample> (*)(DType, SampleSize);
using RefFn = Expected (*)(const RefArgs&);

// A row of every dtype whose samples are seeded by the op's name and the dtype.
// All but the two that add move values, and compare exactly (Note [Tolerances]).
OpInfo row(const char* name, SampleFn samples, RefFn reference) {
  const bool adds = std::string_view(name) == "scatter_add" || std::string_view(name) == "index_add";
  return {.name = name, .dtypes = kAll, .out_dtype = same_dtype,
          .samples = [name, samples](DType t, SampleSize size) {
            reseed(name, t);
            return samples(t, size);
          },
          .reference = reference, .exact = !adds, .accumulation = largest_arg_numel, .differentiable = true};
}

}  // namespace

void add_indexing_rows(std::vector<OpInfo>& rows) {
  rows.push_back(row("gather", gather_samples, gather_ref));
  rows.push_back(row("scatter", [](DType t, SampleSize s) { return scatter_samples(ScatterKind::Src, t, s); },
                     [](const RefArgs& a) { return scatter_ref(ScatterKind::Src, a); }));
  rows.push_back(row("scatter_value", [](DType t, SampleSize s) { return scatter_samples(ScatterKind::Value, t, s); },
                     [](const RefArgs& a) { return scatter_ref(ScatterKind::Value, a); }));
  rows.push_back(row("scatter_add", [](DType t, SampleSize s) { return scatter_samples(ScatterKind::Add, t, s); },
                     [](const RefArgs& a) { return scatter_ref(ScatterKind::Add, a); }));
  rows.push_back(row("index_select", index_select_samples, index_select_ref));
  rows.push_back(row("index_add", index_add_samples, index_add_ref));
  rows.push_back(row("masked_select", masked_select_samples, masked_select_ref));
  rows.push_back(row("repeat", repeat_samples, repeat_ref));
  rows.push_back(row("flip", flip_samples, flip_ref));
  rows.push_back(row("roll", roll_samples, roll_ref));
}

}  // namespace ember::testing
