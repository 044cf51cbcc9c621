// Op-info rows: views; each reference maps an output index to an input
// index. Note [The op-info table] is in tests/op_info.h.
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

// out[idx] = in[src(idx)], where src gives a multi-index into `in`.
template <class Src>
Expected gather(const HostTensor& in, const Shape& out_shape, DType out, Src src) {
  HostTensor r(out_shape, out);
  for_each_index(out_shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = linear_index(src(idx), in.shape);
    if (in.floating()) r.set(k, in.f[j]);
    else r.set_int(k, in.i[j]);
  });
  return {{r}, false, ""};
}

Sample view_sample(std::string name, const Tensor& self, Stack rest, std::string error = "") {
  return {std::move(name), concat({arg(self)}, rest), {}, std::move(error)};
}

Expected view_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  Shape size = a.ints(1);
  int64_t known = 1, infer = -1;
  for (size_t d = 0; d < size.size(); ++d) {
    if (size[d] == -1) infer = static_cast<int64_t>(d);
    else known *= size[d];
  }
  if (infer >= 0 && known != 0) size[infer] = in.numel() / known;
  if (numel_of(size) != in.numel()) return Expected::raises("");
  return gather(in, size, a.out, [&](const Shape& idx) {  // the same row-major order
    Shape src(in.shape.size());
    int64_t k = linear_index(idx, size);
    for (int64_t d = in.dim() - 1; d >= 0; --d) {
      src[d] = k % in.shape[d];
      k /= in.shape[d];
    }
    return src;
  });
}

Expected permute_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const Shape dims = a.ints(1);
  if (static_cast<int64_t>(dims.size()) != in.dim()) return Expected::raises("");
  Shape perm, out_shape;
  std::vector<bool> seen(dims.size(), false);
  for (int64_t d : dims) {
    const std::optional<int64_t> w = wrap(d, in.dim());
    if (!w || seen[*w]) return Expected::raises("");
    seen[*w] = true;
    perm.push_back(*w);
    out_shape.push_back(in.shape[*w]);
  }
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src(in.shape.size());
    for (size_t i = 0; i < perm.size(); ++i) src[perm[i]] = idx[i];
    return src;
  });
}

Expected transpose_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d0 = wrap(a.integer(1), in.dim()), d1 = wrap(a.integer(2), in.dim());
  if (!d0 || !d1) return Expected::raises("");
  if (in.dim() == 0) return {{in}, false, ""};
  Shape out_shape = in.shape;
  std::swap(out_shape[*d0], out_shape[*d1]);
  return gather(in, out_shape, a.out, [&](Shape idx) {
    std::swap(idx[*d0], idx[*d1]);
    return idx;
  });
}

// Python's slicing: bounds clamp to the dim, step > 0.
Expected slice_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const int64_t step = a.integer(4);
  if (in.dim() == 0 || step <= 0) return Expected::raises("");
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
  if (!d) return Expected::raises("");
  const int64_t n = in.shape[*d];
  int64_t s = a.is_none(2) ? 0 : a.integer(2), e = a.is_none(3) ? n : a.integer(3);
  if (s < 0) s += n;
  if (e < 0) e += n;
  s = std::clamp<int64_t>(s, 0, n);
  e = std::clamp<int64_t>(e, s, n);
  Shape out_shape = in.shape;
  out_shape[*d] = (e - s + step - 1) / step;
  return gather(in, out_shape, a.out, [&](Shape idx) {
    idx[*d] = s + idx[*d] * step;
    return idx;
  });
}

Expected select_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  if (in.dim() == 0) return Expected::raises("");
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
  if (!d) return Expected::raises("");
  const int64_t n = in.shape[*d];
  int64_t index = a.integer(2);
  if (index < -n || index >= n) return Expected::raises("out of range");
  if (index < 0) index += n;
  Shape out_shape = in.shape;
  out_shape.erase(out_shape.begin() + *d);
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src = idx;
    src.insert(src.begin() + *d, index);
    return src;
  });
}

// Drops the size-1 dims in `drop` (all size-1 dims when it is empty and `all`).
Expected squeeze_ref(const HostTensor& in, DType out, std::optional<int64_t> only) {
  Shape out_shape;
  std::vector<bool> dropped(in.shape.size(), false);
  for (size_t d = 0; d < in.shape.size(); ++d) {
    dropped[d] = in.shape[d] == 1 && (!only || *only == static_cast<int64_t>(d));
    if (!dropped[d]) out_shape.push_back(in.shape[d]);
  }
  return gather(in, out_shape, out, [&](const Shape& idx) {
    Shape src(in.shape.size(), 0);
    size_t k = 0;
    for (size_t d = 0; d < in.shape.size(); ++d) src[d] = dropped[d] ? 0 : idx[k++];
    return src;
  });
}

Expected unsqueeze_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim() + 1);
  if (!d) return Expected::raises("");
  Shape out_shape = in.shape;
  out_shape.insert(out_shape.begin() + *d, 1);
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src = idx;
    src.erase(src.begin() + *d);
    return src;
  });
}

Expected expand_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const Shape size = a.ints(1);
  if (size.size() < in.shape.size()) return Expected::raises("");
  const size_t lead = size.size() - in.shape.size();
  Shape out_shape(size.size());
  for (size_t d = 0; d < size.size(); ++d) {
    const int64_t cur = d < lead ? 1 : in.shape[d - lead];
    int64_t want = size[d];
    if (want == -1) {
      if (d < lead) return Expected::raises("");
      want = cur;
    }
    if (want != cur && cur != 1) return Expected::raises("");
    out_shape[d] = want;
  }
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src(in.shape.size());
    for (size_t d = 0; d < src.size(); ++d) src[d] = in.shape[d] == 1 ? 0 : idx[d + lead];
    return src;
  });
}

Expected diagonal_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  if (in.dim() < 2) return Expected::raises("");
  const int64_t off = a.integer(1);
  const std::optional<int64_t> d1 = wrap(a.integer(2), in.dim()), d2 = wrap(a.integer(3), in.dim());
  if (!d1 || !d2 || *d1 == *d2) return Expected::raises("");
  const int64_t n1 = in.shape[*d1], n2 = in.shape[*d2];
  const int64_t len = std::max<int64_t>(0, off >= 0 ? std::min(n1, n2 - off) : std::min(n1 + off, n2));
  Shape out_shape;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (d != *d1 && d != *d2) out_shape.push_back(in.shape[d]);
  }
  out_shape.push_back(len);
  return gather(in, out_shape, a.out, [&](const Shape& idx) {
    Shape src(in.shape.size());
    size_t k = 0;
    for (int64_t d = 0; d < in.dim(); ++d) {
      if (d != *d1 && d != *d2) src[d] = idx[k++];
    }
    const int64_t i = idx.back();
    src[*d1] = i + (off < 0 ? -off : 0);
    src[*d2] = i + (off > 0 ? off : 0);
    return src;
  });
}

// as_strided reads the storage; the samples' inputs are fresh contiguous tensors, so storage = values.
Expected as_strided_ref(const RefArgs& a) {
  const HostTensor in = a.tensor(0);
  const Shape size = a.ints(1), stride = a.ints(2);
  const int64_t off = a.is_none(3) ? 0 : a.integer(3);
  if (size.size() != stride.size()) return Expected::raises("");
  int64_t last = off;
  for (size_t d = 0; d < size.size(); ++d) last += (size[d] - 1) * stride[d];
  if (numel_of(size) > 0 && last >= in.numel()) return Expected::raises("");
  HostTensor r(size, a.out);
  for_each_index(size, [&](const Shape& idx, int64_t k) {
    int64_t j = off;
    for (size_t d = 0; d < size.size(); ++d) j += idx[d] * stride[d];
    if (in.floating()) r.set(k, in.f[j]);
    else r.set_int(k, in.i[j]);
  });
  return {{r}, false, ""};
}

}  // namespace

void add_view_rows(std::vector<OpInfo>& rows) {
  auto view_row = [&](std::string name, std::function<std::vector<Sample>(DType)> small,
                      std::function<Sample(DType)> large, std::function<Expected(const RefArgs&)> ref,
                      std::vector<Divergence> divergences = {}) {
    rows.push_back({.name = std::move(name), .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::View,
                    .samples = [small, large](DType t, SampleSize size) {
                      return size == SampleSize::Large ? std::vector<Sample>{large(t)} : small(t);
                    },
                    .reference = std::move(ref), .exact = true, .divergences = std::move(divergences)});
  };
  view_row("view", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({2, 3, 4}, t), {ints_arg({6, 4})}),
            view_sample("infer", make_input({2, 3, 4}, t), {ints_arg({-1, 3})}),
            view_sample("flatten", make_input({2, 3, 4}, t), {ints_arg({24})}),
            view_sample("transposed_split", make_input({3, 4}, t, kTransposed), {ints_arg({3, 2, 2})}),
            view_sample("sliced_split", make_input({3, 4}, t, kSliced), {ints_arg({3, 2, 2})}),
            view_sample("empty", make_input({0, 4}, t), {ints_arg({4, 0})}),
            view_sample("empty_infer", make_input({0, 4}, t), {ints_arg({-1})}),
            view_sample("0d", make_input({}, t), {ints_arg({1})}),
            view_sample("to_0d", make_input({1}, t), {ints_arg({})}),
            view_sample("transposed_flatten", make_input({3, 4}, t, kTransposed), {ints_arg({12})}, "view"),
            view_sample("bad_numel", make_input({2, 3}, t), {ints_arg({4})}, "view")};
  }, [=](DType t) { return view_sample("large", make_input({256, 400}, t), {ints_arg({400, -1})}); }, view_ref);
  view_row("permute", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({2, 3, 4}, t), {ints_arg({2, 0, 1})}),
            view_sample("negative", make_input({2, 3, 4}, t), {ints_arg({-1, 0, 1})}),
            view_sample("transposed", make_input({3, 4}, t, kTransposed), {ints_arg({1, 0})}),
            view_sample("empty", make_input({0, 2, 3}, t), {ints_arg({2, 0, 1})}),
            view_sample("0d", make_input({}, t), {ints_arg({})}),
            view_sample("repeated", make_input({2, 3, 4}, t), {ints_arg({0, 0, 1})}, "permute"),
            view_sample("too_few", make_input({2, 3, 4}, t), {ints_arg({0, 1})}, "permute")};
  }, [=](DType t) { return view_sample("large", make_input({64, 40, 40}, t), {ints_arg({2, 0, 1})}); }, permute_ref);
  view_row("transpose", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({2, 3, 4}, t), {int_arg(0), int_arg(2)}),
            view_sample("negative", make_input({2, 3, 4}, t), {int_arg(-1), int_arg(-2)}),
            view_sample("same_dim", make_input({2, 3}, t), {int_arg(1), int_arg(1)}),
            view_sample("sliced", make_input({3, 4}, t, kSliced), {int_arg(0), int_arg(1)}),
            view_sample("empty", make_input({0, 3}, t), {int_arg(0), int_arg(1)}),
            view_sample("0d", make_input({}, t), {int_arg(0), int_arg(-1)}),
            view_sample("0d_bad_dim", make_input({}, t), {int_arg(0), int_arg(1)}, "transpose"),
            view_sample("bad_dim", make_input({2, 3}, t), {int_arg(0), int_arg(2)}, "transpose")};
  }, [=](DType t) { return view_sample("large", make_input({256, 400}, t), {int_arg(0), int_arg(1)}); }, transpose_ref);
  view_row("slice", [=](DType t) -> std::vector<Sample> {
    auto s = [&](std::string n, const Tensor& x, int64_t d, std::optional<int64_t> b, std::optional<int64_t> e,
                 int64_t st, std::string err = "") {
      return view_sample(std::move(n), x, {int_arg(d), opt_int_arg(b), opt_int_arg(e), int_arg(st)}, std::move(err));
    };
    return {s("step2", make_input({5, 6}, t), 1, 1, 5, 2),
            s("all", make_input({5, 6}, t), 0, std::nullopt, std::nullopt, 1),
            s("negative", make_input({5, 6}, t), -1, -4, -1, 1),
            s("end_beyond", make_input({5, 6}, t), 0, 2, 100, 3),
            s("start_after_end", make_input({5, 6}, t), 1, 4, 2, 1),
            s("transposed", make_input({5, 6}, t, kTransposed), 0, 1, std::nullopt, 2),
            s("empty", make_input({0, 6}, t), 0, 0, 1, 1),
            s("0d", make_input({}, t), 0, 0, 1, 1, "slice"),
            s("zero_step", make_input({5, 6}, t), 0, 0, 4, 0, "slice")};
  }, [=](DType t) {
    return view_sample("large", make_input({256, 800}, t), {int_arg(1), int_arg(1), none_arg(), int_arg(2)});
  }, slice_ref);
  view_row("select", [=](DType t) -> std::vector<Sample> {
    return {view_sample("dim0", make_input({3, 4}, t), {int_arg(0), int_arg(1)}),
            view_sample("negative_index", make_input({3, 4}, t), {int_arg(1), int_arg(-1)}),
            view_sample("transposed", make_input({3, 4}, t, kTransposed), {int_arg(-1), int_arg(3)}),
            view_sample("to_0d", make_input({4}, t), {int_arg(0), int_arg(2)}),
            view_sample("empty", make_input({0, 4}, t), {int_arg(1), int_arg(2)}),
            view_sample("out_of_range", make_input({3, 4}, t), {int_arg(0), int_arg(3)}, "select"),
            view_sample("0d", make_input({}, t), {int_arg(0), int_arg(0)}, "select")};
  }, [=](DType t) { return view_sample("large", make_input({4, 256, 400}, t), {int_arg(0), int_arg(2)}); }, select_ref);
  view_row("squeeze", [=](DType t) -> std::vector<Sample> {
    return {view_sample("contiguous", make_input({1, 3, 1, 4}, t), {}),
            view_sample("all_ones", make_input({1, 1}, t), {}),
            view_sample("transposed", make_input({1, 4}, t, kTransposed), {}),
            view_sample("empty", make_input({0, 1}, t), {}),
            view_sample("0d", make_input({}, t), {}),
            undefined_input(view_sample("valid", make_input({1, 3}, t), {}), 0)};
  }, [=](DType t) { return view_sample("large", make_input({1, 256, 1, 400}, t), {}); },
           [](const RefArgs& a) { return squeeze_ref(a.tensor(0), a.out, std::nullopt); });
  view_row("squeeze_dim", [=](DType t) -> std::vector<Sample> {
    return {view_sample("dim0", make_input({1, 3, 1}, t), {int_arg(0)}),
            view_sample("negative", make_input({1, 3, 1}, t), {int_arg(-1)}),
            view_sample("not_one", make_input({1, 3, 1}, t), {int_arg(1)}),
            view_sample("empty", make_input({0, 1}, t), {int_arg(1)}),
            view_sample("0d", make_input({}, t), {int_arg(-1)}),
            view_sample("bad_dim", make_input({1, 3, 1}, t), {int_arg(3)}, "squeeze"),
            view_sample("bad_negative_dim", make_input({1, 3, 1}, t), {int_arg(-4)}, "squeeze")};
  }, [=](DType t) { return view_sample("large", make_input({256, 1, 400}, t), {int_arg(1)}); },
           [](const RefArgs& a) -> Expected {
             const HostTensor in = a.tensor(0);
             const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
             if (!d) return Expected::raises("");
             return squeeze_ref(in, a.out, in.dim() == 0 ? std::nullopt : d);
           });
  view_row("unsqueeze", [=](DType t) -> std::vector<Sample> {
    return {view_sample("dim0", make_input({3, 4}, t), {int_arg(0)}),
            view_sample("middle", make_input({3, 4}, t, kTransposed), {int_arg(1)}),
            view_sample("last", make_input({3, 4}, t, kSliced), {int_arg(2)}),
            view_sample("negative", make_input({3, 4}, t), {int_arg(-1)}),
            view_sample("negative_first", make_input({3, 4}, t), {int_arg(-3)}),
            view_sample("empty", make_input({0, 4}, t), {int_arg(1)}),
            view_sample("0d", make_input({}, t), {int_arg(0)}),
            view_sample("bad_dim", make_input({3, 4}, t), {int_arg(3)}, "unsqueeze")};
  }, [=](DType t) { return view_sample("large", make_input({256, 400}, t), {int_arg(1)}); }, unsqueeze_ref);
  view_row("expand", [=](DType t) -> std::vector<Sample> {
    return {view_sample("new_dims", make_input({3, 1}, t), {ints_arg({2, 3, 4})}),
            view_sample("keep", make_input({3, 1}, t), {ints_arg({-1, 5})}),
            view_sample("vector", make_input({4}, t, kSliced), {ints_arg({3, 4})}),
            view_sample("0d", make_input({}, t), {ints_arg({2, 2})}),
            view_sample("empty", make_input({0, 1}, t), {ints_arg({0, 3})}),
            view_sample("to_empty", make_input({1, 3}, t), {ints_arg({0, 3})}),
            view_sample("not_one", make_input({3, 2}, t), {ints_arg({3, 4})}, "expand"),
            view_sample("infer_new_dim", make_input({3}, t), {ints_arg({-1, 3})}, "expand")};
  }, [=](DType t) { return view_sample("large", make_input({256, 1}, t), {ints_arg({256, 400})}); }, expand_ref);
  view_row("diagonal", [=](DType t) -> std::vector<Sample> {
    auto s = [&](std::string n, const Tensor& x, int64_t off, int64_t d1, int64_t d2, std::string err = "") {
      return view_sample(std::move(n), x, {int_arg(off), int_arg(d1), int_arg(d2)}, std::move(err));
    };
    return {s("main", make_input({4, 5}, t), 0, 0, 1), s("above", make_input({4, 5}, t), 1, 0, 1),
            s("below", make_input({4, 5}, t), -2, 0, 1), s("swapped_dims", make_input({4, 5}, t, kTransposed), 2, 1, 0),
            s("batched", make_input({2, 3, 4}, t), 0, 1, 2),
            s("outer_dims", make_input({2, 3, 4}, t, kSliced), 1, -1, 0),
            s("beyond", make_input({4, 5}, t), 7, 0, 1), s("empty", make_input({0, 3}, t), 0, 0, 1),
            s("1d", make_input({4}, t), 0, 0, 1, "diagonal"),
            s("same_dims", make_input({4, 5}, t), 0, 1, 1, "diagonal")};
  }, [=](DType t) { return view_sample("large", make_input({400, 400}, t), {int_arg(1), int_arg(0), int_arg(1)}); },
           diagonal_ref);
  view_row("as_strided", [=](DType t) -> std::vector<Sample> {
    auto s = [&](std::string n, Shape shape, Shape size, Shape stride, std::optional<int64_t> off,
                 std::string err = "") {
      return view_sample(std::move(n), make_input(shape, t), {ints_arg(size), ints_arg(stride), opt_int_arg(off)},
                         std::move(err));
    };
    return {s("rows", {4, 5}, {3, 3}, {5, 1}, std::nullopt), s("columns", {4, 5}, {2, 2}, {1, 5}, 3),
            s("overlapping", {4, 5}, {3, 3}, {1, 1}, 2), s("zero_stride", {4, 5}, {2, 3}, {0, 1}, 1),
            s("empty", {4, 5}, {0, 3}, {1, 1}, 0), s("0d", {4, 5}, {}, {}, 7),
            s("beyond_storage", {4, 5}, {5, 5}, {5, 1}, 1, "as_strided"),
            s("rank_mismatch", {4, 5}, {2, 2}, {1}, 0, "as_strided")};
  }, [=](DType t) {
    return view_sample("large", make_input({256, 400}, t), {ints_arg({255, 400}), ints_arg({400, 1}), int_arg(400)});
  }, as_strided_ref);
}

}  // namespace ember::testing
