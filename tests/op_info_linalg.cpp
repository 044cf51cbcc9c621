// Op-info rows: linear algebra (Note [The op-info table] in tests/op_info.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "tests/op_info.h"
#include "tests/op_info_inputs.h"

namespace ember::testing {
namespace {

// (n, k) @ (k, m) in double, or int64 for integer dtypes; beta * self + alpha * product for addmm.
HostTensor matmul_ref(const HostTensor& a, const HostTensor& b, DType out, int64_t batch_a, int64_t batch_b,
                      int64_t n, int64_t k, int64_t m, Shape out_shape) {
  HostTensor r(std::move(out_shape), out);
  const int64_t batches = n * m == 0 ? 0 : numel_of(r.shape) / (n * m);
  for (int64_t bt = 0; bt < batches; ++bt) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double ds = 0;
        int64_t is = 0;
        for (int64_t p = 0; p < k; ++p) {
          const int64_t x = bt * batch_a + i * k + p, y = bt * batch_b + p * m + j;
          if (r.floating()) ds += a.at(x) * b.at(y);
          else is += a.at_int(x) * b.at_int(y);
        }
        const int64_t o = bt * n * m + i * m + j;
        if (r.floating()) r.set(o, ds);
        else r.set_int(o, is);
      }
    }
  }
  return r;
}

Expected mm_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 2 || y.dim() != 2 || x.shape[1] != y.shape[0] || x.dtype != y.dtype) return Expected::raises("");
  return {{matmul_ref(x, y, a.out, 0, 0, x.shape[0], x.shape[1], y.shape[1], {x.shape[0], y.shape[1]})}, false, ""};
}

Expected bmm_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 3 || y.dim() != 3 || x.shape[0] != y.shape[0] || x.shape[2] != y.shape[1]) return Expected::raises("");
  const int64_t n = x.shape[1], k = x.shape[2], m = y.shape[2];
  return {{matmul_ref(x, y, a.out, n * k, k * m, n, k, m, {x.shape[0], n, m})}, false, ""};
}

Expected addmm_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0), x = a.tensor(1), y = a.tensor(2);
  if (x.dim() != 2 || y.dim() != 2 || x.shape[1] != y.shape[0]) return Expected::raises("");
  const Shape out_shape = {x.shape[0], y.shape[1]};
  const std::optional<Shape> s = broadcast(out_shape, self.shape);
  if (!s || *s != out_shape) return Expected::raises("");
  const HostTensor p = matmul_ref(x, y, a.out, 0, 0, x.shape[0], x.shape[1], y.shape[1], out_shape);
  const double beta = a.number(3), alpha = a.number(4);
  const int64_t ibeta = a.integer(3), ialpha = a.integer(4);
  HostTensor r(out_shape, a.out);
  for_each_index(out_shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = source_index(idx, self.shape);
    if (r.floating()) r.set(k, (beta == 0 ? 0.0 : beta * self.at(j)) + alpha * p.f[k]);  // beta 0 ignores NaN in self
    else r.set_int(k, ibeta * self.at_int(j) + ialpha * p.i[k]);
  });
  return {{r}, false, ""};
}

Expected dot_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 1 || y.dim() != 1 || x.shape[0] != y.shape[0]) return Expected::raises("");
  return {{matmul_ref(x, y, a.out, 0, 0, 1, x.shape[0], 1, {})}, false, ""};
}

Expected mv_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  if (x.dim() != 2 || y.dim() != 1 || x.shape[1] != y.shape[0]) return Expected::raises("");
  return {{matmul_ref(x, y, a.out, 0, 0, x.shape[0], x.shape[1], 1, {x.shape[0]})}, false, ""};
}

std::vector<Sample> matmul_samples(const std::string& op, DType t, SampleSize size) {
  std::vector<Sample> out;
  const Layout T = kTransposed, S = kSliced;
  auto add = [&](std::string n, Stack args, std::string err = "") {
    out.push_back({std::move(n), std::move(args), {}, std::move(err)});
  };
  auto in = [&](Shape s, Layout l = Layout::Contiguous) { return arg(make_input(s, t, l)); };
  const Scalar one = scalar_of(t, 1);
  const DType other = t == DType::Float64 ? DType::Float32 : DType::Float64;
  if (op == "mm") {
    if (size == SampleSize::Large) return {{"large", {in({200, 96}), in({96, 500}, T)}, {}, ""}};
    add("contiguous", {in({3, 4}), in({4, 5})});
    add("transposed", {in({3, 4}, T), in({4, 5})});
    add("sliced", {in({3, 4}), in({4, 5}, S)});
    add("both_transposed", {in({3, 4}, T), in({4, 5}, T)});
    add("empty_k", {in({3, 0}), in({0, 5})});
    add("empty_m", {in({0, 4}), in({4, 5})});
    add("vector", {in({4}), in({4, 5})}, "mm");
    add("mismatch", {in({3, 4}), in({5, 2})}, "mm");
    add("mixed_dtype", {in({3, 4}), arg(make_input({4, 5}, other))}, "mm");
  } else if (op == "bmm") {
    if (size == SampleSize::Large) return {{"large", {in({8, 64, 48}), in({8, 48, 200}, T)}, {}, ""}};
    add("contiguous", {in({2, 3, 4}), in({2, 4, 5})});
    add("transposed", {in({2, 3, 4}, T), in({2, 4, 5}, S)});
    add("empty_batch", {in({0, 3, 4}), in({0, 4, 5})});
    add("empty_k", {in({2, 3, 0}), in({2, 0, 5})});
    add("batch_mismatch", {in({2, 3, 4}), in({3, 4, 5})}, "bmm");
    add("matrices", {in({3, 4}), in({4, 5})}, "bmm");
  } else if (op == "addmm") {
    if (size == SampleSize::Large) return {{"large", {in({500}), in({200, 96}), in({96, 500}, T), arg(one), arg(one)}}};
    const bool fp = is_floating_point(t);
    const Scalar beta = scalar_of(t, fp ? 0.5 : 2), alpha = scalar_of(t, fp ? -1.5 : 3);
    add("contiguous", {in({3, 5}), in({3, 4}), in({4, 5}), arg(one), arg(one)});
    add("broadcast_row", {in({5}), in({3, 4}, T), in({4, 5}), arg(one), arg(one)});
    add("broadcast_0d", {in({}), in({3, 4}), in({4, 5}, S), arg(one), arg(one)});
    add("scaled", {in({3, 5}, T), in({3, 4}), in({4, 5}), arg(beta), arg(alpha)});
    add("empty_k", {in({3, 5}), in({3, 0}), in({0, 5}), arg(beta), arg(alpha)});
    add("bad_self", {in({4}), in({3, 4}), in({4, 5}), arg(one), arg(one)}, "addmm");
    if (is_floating_point(t))
      add("beta0_nan_self", {arg(from_values({3, 5}, t, {kNaN})), in({3, 4}), in({4, 5}), arg(Scalar(0.0)),
                             arg(alpha)});
  } else if (op == "dot") {
    if (size == SampleSize::Large) return {{"large", {in({100000}), in({100000})}, {}, ""}};
    add("contiguous", {in({7}), in({7})});
    add("sliced", {in({7}, S), in({7})});
    add("empty", {in({0}), in({0})});
    add("matrix", {in({2, 3}), in({6})}, "dot");
    add("mismatch", {in({3}), in({4})}, "dot");
  } else if (op == "mv") {
    if (size == SampleSize::Large) return {{"large", {in({400, 256}, T), in({256})}, {}, ""}};
    add("contiguous", {in({3, 4}), in({4})});
    add("transposed", {in({3, 4}, T), in({4}, S)});
    add("empty_rows", {in({0, 4}), in({4})});
    add("empty_k", {in({3, 0}), in({0})});
    add("mismatch", {in({3, 4}), in({3})}, "mv");
  }
  return out;
}

}  // namespace

void add_linalg_rows(std::vector<OpInfo>& rows) {
  const std::pair<const char*, std::function<Expected(const RefArgs&)>> ops[] = {
      {"mm", mm_ref}, {"bmm", bmm_ref}, {"addmm", addmm_ref}, {"dot", dot_ref}, {"mv", mv_ref}};
  for (const auto& [name, ref] : ops) {
    rows.push_back({.name = name, .dtypes = kNumeric, .out_dtype = same_dtype,
                    .samples = [op = std::string(name)](DType t, SampleSize size) {
                      return matmul_samples(op, t, size);
                    },
                    .reference = ref,
                    // K (Note [Tolerances]): the inner dim, the last of the first matrix operand.
                    .accumulation = [addmm = std::string(name) == "addmm"](const Sample& s) {
                      return trailing_numel(s, addmm ? 1 : 0, 1) + (addmm ? 1 : 0);
                    }});
  }
}

}  // namespace ember::testing
