// Op-info rows: reductions and scans (Note [The op-info table] in tests/op_info.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "tests/op_info.h"
#include "tests/op_info_inputs.h"

namespace ember::testing {
namespace {

// How a reduction's schema lists its arguments.
enum class RedStyle : uint8_t {
  Dims,        // (self, int[] dim, bool keepdim): mean amax amin logsumexp all any
  DimsDtype,   // (self, int[] dim, bool keepdim, ScalarType? dtype): sum prod
  Correction,  // (self, int[] dim, int correction, bool keepdim): var std
  Norm,        // (self, Scalar p, int[] dim, bool keepdim)
  OneDim,      // (self, int dim, bool keepdim): max_dim min_dim
  OptDim,      // (self, int? dim, bool keepdim): argmax argmin
  Scan,        // (self, int dim, ScalarType? dtype): cumsum cumprod
};

bool single_dim(RedStyle st) { return st == RedStyle::OneDim || st == RedStyle::OptDim || st == RedStyle::Scan; }

Stack red_args(RedStyle st, const Tensor& self, const Shape& dims, bool keepdim) {
  switch (st) {
    case RedStyle::Dims: return {arg(self), ints_arg(dims), bool_arg(keepdim)};
    case RedStyle::DimsDtype: return {arg(self), ints_arg(dims), bool_arg(keepdim), none_arg()};
    case RedStyle::Correction: return {arg(self), ints_arg(dims), int_arg(1), bool_arg(keepdim)};
    case RedStyle::Norm: return {arg(self), arg(Scalar(2)), ints_arg(dims), bool_arg(keepdim)};
    case RedStyle::OneDim: return {arg(self), int_arg(dims.at(0)), bool_arg(keepdim)};
    case RedStyle::OptDim: return {arg(self), dims.empty() ? none_arg() : int_arg(dims[0]), bool_arg(keepdim)};
    case RedStyle::Scan: return {arg(self), int_arg(dims.at(0)), none_arg()};
  }
  return {};
}

// Pairs of special values: row i*12+j holds (specials[i], specials[j]).
Tensor special_pairs(DType t) {
  std::vector<double> v;
  for (double x : kSpecials) {
    for (double y : kSpecials) v.insert(v.end(), {x, y});
  }
  const int64_t n = static_cast<int64_t>(kSpecials.size());
  return from_values({n * n, 2}, t, v);
}

std::vector<Sample> reduction_samples(RedStyle st, DType t, SampleSize size, Domain d = Domain::Any) {
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& self, Shape dims, bool keepdim = false, std::string error = "") {
    if (single_dim(st) && dims.size() != 1 && !(st == RedStyle::OptDim && dims.empty())) return;
    out.push_back({std::move(name), red_args(st, self, dims, keepdim), {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large_dim1", make_input({256, 400}, t, d), {1});
    add("large_dim0", make_input({256, 400}, t, d), {0});
    add("large_all", make_input({256, 400}, t, d), {});
    add("large_transposed", make_input({256, 400}, t, d, kTransposed), {1});
    return out;
  }
  add("all", make_input({3, 4, 5}, t, d), {});
  add("all_keepdim", make_input({3, 4, 5}, t, d), {}, true);
  add("dim1", make_input({3, 4, 5}, t, d), {1});
  add("dims02", make_input({3, 4, 5}, t, d), {0, 2});
  add("neg_dim", make_input({3, 4, 5}, t, d), {-1});
  add("keepdim", make_input({3, 4, 5}, t, d), {1}, true);
  add("transposed", make_input({4, 6}, t, d, kTransposed), {0});
  add("sliced", make_input({3, 5}, t, d, kSliced), {1});
  add("empty_reduced", make_input({0, 4}, t, d), {0});
  add("empty_kept", make_input({0, 4}, t, d), {1});
  add("empty_all", make_input({0, 4}, t, d), {});
  add("0d", make_input({}, t, d), {});
  add("0d_dim", make_input({}, t, d), {0});
  add("bad_dim", make_input({3, 4}, t, d), {2}, false, "dim");
  if (!single_dim(st)) add("repeated_dim", make_input({3, 4}, t, d), {1, -1}, false, "dim");
  if (is_floating_point(t)) add("special_pairs", special_pairs(t), {1});
  return out;
}

// K (Note [Tolerances]): the number of elements an output element folds.
int64_t reduced_length(RedStyle st, const Sample& s) {
  const Shape in = s.args[0].tensor().sizes().vec();
  Shape dims;
  switch (st) {
    case RedStyle::Dims:
    case RedStyle::DimsDtype:
    case RedStyle::Correction: dims = std::get<Shape>(s.args[1].payload()); break;
    case RedStyle::Norm: dims = std::get<Shape>(s.args[2].payload()); break;
    case RedStyle::OneDim:
    case RedStyle::OptDim:
    case RedStyle::Scan:
      if (!s.args[1].is_none()) dims = {std::get<int64_t>(s.args[1].payload())};
      break;
  }
  const std::optional<std::vector<bool>> mask = dim_mask(dims, static_cast<int64_t>(in.size()));
  int64_t k = 1;
  for (size_t d = 0; mask && d < in.size(); ++d) k *= (*mask)[d] ? in[d] : 1;
  return k;
}

struct Reduction {
  HostTensor in;
  std::optional<std::vector<bool>> mask;  // nullopt: a bad dim
  bool keepdim = false;
};

Reduction read_reduction(const RefArgs& a, RedStyle st) {
  Reduction r{a.tensor(0), {}, false};
  Shape dims;
  switch (st) {
    case RedStyle::Dims:
    case RedStyle::DimsDtype: dims = a.ints(1), r.keepdim = a.flag(2); break;
    case RedStyle::Correction: dims = a.ints(1), r.keepdim = a.flag(3); break;
    case RedStyle::Norm: dims = a.ints(2), r.keepdim = a.flag(3); break;
    case RedStyle::OneDim: dims = {a.integer(1)}, r.keepdim = a.flag(2); break;
    case RedStyle::OptDim: dims = a.is_none(1) ? Shape{} : Shape{a.integer(1)}, r.keepdim = a.flag(2); break;
    case RedStyle::Scan: dims = {a.integer(1)}; break;
  }
  r.mask = dim_mask(dims, r.in.dim());
  return r;
}

// The reduced values of one output element, as doubles and as int64.
struct Group {
  const HostTensor& in;
  const std::vector<int64_t>& elems;
  double d(size_t k) const { return in.at(elems[k]); }
  int64_t i(size_t k) const { return in.at_int(elems[k]); }
  size_t size() const { return elems.size(); }
  bool has_nan() const {
    for (size_t k = 0; k < size(); ++k) {
      if (std::isnan(d(k))) return true;
    }
    return false;
  }
};

// A reduction row: fold(group, out, k) writes output element k.
using Fold = std::function<void(const Group&, HostTensor&, int64_t)>;

std::function<Expected(const RefArgs&)> reduction_ref(RedStyle st, Fold fold, bool needs_elements = false) {
  return [st, fold, needs_elements](const RefArgs& a) -> Expected {
    const Reduction red = read_reduction(a, st);
    if (!red.mask) return Expected::raises("dim");
    bool empty_group = false;
    auto each = [&](HostTensor& out, int64_t k, const std::vector<int64_t>& e) {
      empty_group |= e.empty();
      if (!e.empty() || !needs_elements) fold(Group{red.in, e}, out, k);
    };
    HostTensor r = reduce_ref(red.in, *red.mask, red.keepdim, a.out, each);
    // An empty reduction with no identity is an error even when the result is empty.
    if (needs_elements) {
      for (size_t d = 0; d < red.in.shape.size(); ++d) {
        if ((*red.mask)[d] && red.in.shape[d] == 0) empty_group = true;
      }
      if (empty_group) return Expected::raises("");
    }
    return {{r}, false, ""};
  };
}

void sum_fold(const Group& g, HostTensor& r, int64_t k) {
  if (r.floating() || g.in.floating()) {
    double s = 0;
    for (size_t j = 0; j < g.size(); ++j) s += g.d(j);
    r.set(k, s);
  } else {
    int64_t s = 0;
    for (size_t j = 0; j < g.size(); ++j) s += g.i(j);
    r.set_int(k, s);
  }
}

void prod_fold(const Group& g, HostTensor& r, int64_t k) {
  if (r.floating() || g.in.floating()) {
    double s = 1;
    for (size_t j = 0; j < g.size(); ++j) s *= g.d(j);
    r.set(k, s);
  } else {
    int64_t s = 1;
    for (size_t j = 0; j < g.size(); ++j) s *= g.i(j);
    r.set_int(k, s);
  }
}

// The position (in the group) of the max (kMax) or min: NaN wins, the first of ties.
template <bool kMax>
size_t arg_extreme(const Group& g) {
  size_t best = 0;
  for (size_t j = 0; j < g.size(); ++j) {
    if (std::isnan(g.d(j))) return j;
    const bool better = g.in.floating() ? (kMax ? g.d(j) > g.d(best) : g.d(j) < g.d(best))
                                        : (kMax ? g.i(j) > g.i(best) : g.i(j) < g.i(best));
    if (better) best = j;
  }
  return best;
}

template <bool kMax>
void extreme_fold(const Group& g, HostTensor& r, int64_t k) {
  const size_t j = arg_extreme<kMax>(g);
  if (g.in.floating()) r.set(k, g.d(j));
  else r.set_int(k, g.i(j));
}

template <bool kMax>
void arg_fold(const Group& g, HostTensor& r, int64_t k) {
  r.set_int(k, static_cast<int64_t>(arg_extreme<kMax>(g)));
}

template <bool kMax>
Expected extreme_dim_ref(const RefArgs& a) {
  Expected values = reduction_ref(RedStyle::OneDim, extreme_fold<kMax>, true)(a);
  if (values.fails) return values;
  RefArgs indices_args(a.sample(), DType::Int64);
  const Expected indices = reduction_ref(RedStyle::OneDim, arg_fold<kMax>, true)(indices_args);
  values.outputs.push_back(indices.outputs.at(0));
  return values;
}

template <bool kAll>
void logical_fold(const Group& g, HostTensor& r, int64_t k) {
  bool v = kAll;
  for (size_t j = 0; j < g.size(); ++j) {
    const bool nz = g.d(j) != 0;  // NaN is nonzero
    v = kAll ? v && nz : v || nz;
  }
  r.set_int(k, v);
}

// var and std: the sum of squared deviations over max(0, N - correction).
Fold variance_fold(int64_t correction, bool take_sqrt) {
  return [correction, take_sqrt](const Group& g, HostTensor& r, int64_t k) {
    const double n = static_cast<double>(g.size());
    double mean = 0, m2 = 0;
    for (size_t j = 0; j < g.size(); ++j) mean += g.d(j);
    mean /= n;
    for (size_t j = 0; j < g.size(); ++j) m2 += (g.d(j) - mean) * (g.d(j) - mean);
    const double var = m2 / std::max(0.0, n - static_cast<double>(correction));
    r.set(k, take_sqrt ? std::sqrt(var) : var);
  };
}

// The vector norm of order p (torch.linalg.vector_norm).
Fold norm_fold(double p) {
  return [p](const Group& g, HostTensor& r, int64_t k) {
    if (std::isinf(p)) {
      double m = p > 0 ? 0.0 : kInf;
      for (size_t j = 0; j < g.size(); ++j) {
        const double v = std::fabs(g.d(j));
        if (std::isnan(v)) return r.set(k, kNaN);
        m = p > 0 ? std::max(m, v) : std::min(m, v);
      }
      return r.set(k, m);
    }
    double s = 0;
    for (size_t j = 0; j < g.size(); ++j) {
      const double v = std::fabs(g.d(j));
      s += p == 0 ? (v != 0) : std::pow(v, p);
    }
    r.set(k, p == 0 ? s : p == 1 ? s : std::pow(s, 1.0 / p));
  };
}

void logsumexp_fold(const Group& g, HostTensor& r, int64_t k) {
  double m = -kInf;
  for (size_t j = 0; j < g.size(); ++j) m = std::max(m, g.d(j));
  if (g.has_nan()) return r.set(k, kNaN);
  if (std::isinf(m)) return r.set(k, m);  // all -inf, or some +inf
  double s = 0;
  for (size_t j = 0; j < g.size(); ++j) s += std::exp(g.d(j) - m);
  r.set(k, m + std::log(s));
}

// cumsum/cumprod along one dim; the input converts to the output dtype first.
Expected scan_ref(const RefArgs& a, bool prod) {
  const HostTensor in = a.tensor(0);
  const std::optional<int64_t> d = wrap(a.integer(1), in.dim());
  if (!d) return Expected::raises("dim");
  HostTensor r(in.shape, a.out);
  for_each_index(in.shape, [&](const Shape& idx, int64_t k) {
    Shape p = idx;
    double ds = prod ? 1 : 0;
    int64_t is = prod ? 1 : 0;
    const int64_t upto = in.dim() == 0 ? 0 : idx[*d];
    for (int64_t j = 0; j <= upto; ++j) {
      if (in.dim() > 0) p[*d] = j;
      const int64_t e = linear_index(p, in.shape);
      if (r.floating()) ds = prod ? ds * in.at(e) : ds + in.at(e);
      else is = prod ? is * in.at_int(e) : is + in.at_int(e);
    }
    if (r.floating()) r.set(k, ds);
    else r.set_int(k, is);
  });
  return {{r}, false, ""};
}

}  // namespace

void add_reduction_rows(std::vector<OpInfo>& rows) {
  // The ops that select one of the reduced values compare exactly.
  const std::set<std::string> selects = {"amax", "amin", "max_dim", "min_dim", "argmax", "argmin", "all", "any"};
  // Products of integers take values in [-1, 1]: a product of 60 values in [-9, 9] overflows int64.
  auto red_row = [&](std::string name, std::vector<DType> rejects, DType (*out)(DType), RedStyle st,
                     std::function<Expected(const RefArgs&)> ref,
                     std::function<std::vector<Sample>(DType, SampleSize)> extra = nullptr) {
    const Domain int_domain = name == "prod" || name == "cumprod" ? Domain::Unit : Domain::Any;
    const bool exact = selects.count(name) > 0;
    rows.push_back({.name = std::move(name), .dtypes = kAll, .rejects = std::move(rejects), .out_dtype = out,
                    .samples = [st, extra, int_domain](DType t, SampleSize size) {
                      const Domain d = is_floating_point(t) ? Domain::Any : int_domain;
                      std::vector<Sample> s = reduction_samples(st, t, size, d);
                      return extra ? joined(s, extra(t, size)) : s;
                    },
                    .reference = std::move(ref), .exact = exact,
                    .accumulation = [st](const Sample& s) { return reduced_length(st, s); }});
  };
  // sum(dtype=float64) converts first; the result has that dtype.
  auto dtype_sample = [](DType t, SampleSize size) -> std::vector<Sample> {
    if (size == SampleSize::Large) return {};
    return {{"dtype_float64", {arg(make_input({3, 4}, t)), ints_arg({1}), bool_arg(false), dtype_arg(DType::Float64)},
             DType::Float64, ""}};
  };
  red_row("sum", {}, int64_of_int, RedStyle::DimsDtype, reduction_ref(RedStyle::DimsDtype, sum_fold), dtype_sample);
  red_row("prod", {}, int64_of_int, RedStyle::DimsDtype, reduction_ref(RedStyle::DimsDtype, prod_fold), dtype_sample);
  const Fold mean_fold = [](const Group& g, HostTensor& r, int64_t k) {
    double s = 0;
    for (size_t j = 0; j < g.size(); ++j) s += g.d(j);
    r.set(k, s / static_cast<double>(g.size()));  // 0/0: NaN for an empty mean
  };
  red_row("mean", kIntegral, same_dtype, RedStyle::Dims, reduction_ref(RedStyle::Dims, mean_fold));
  red_row("amax", {}, same_dtype, RedStyle::Dims, reduction_ref(RedStyle::Dims, extreme_fold<true>, true));
  red_row("amin", {}, same_dtype, RedStyle::Dims, reduction_ref(RedStyle::Dims, extreme_fold<false>, true));
  red_row("max_dim", {}, same_dtype, RedStyle::OneDim, extreme_dim_ref<true>);
  red_row("min_dim", {}, same_dtype, RedStyle::OneDim, extreme_dim_ref<false>);
  red_row("argmax", {}, int64_dtype, RedStyle::OptDim, reduction_ref(RedStyle::OptDim, arg_fold<true>, true));
  red_row("argmin", {}, int64_dtype, RedStyle::OptDim, reduction_ref(RedStyle::OptDim, arg_fold<false>, true));
  for (const bool take_sqrt : {false, true}) {
    red_row(take_sqrt ? "std" : "var", kIntegral, same_dtype, RedStyle::Correction,
            [take_sqrt](const RefArgs& a) {
              return reduction_ref(RedStyle::Correction, variance_fold(a.integer(2), take_sqrt))(a);
            },
            [](DType t, SampleSize size) -> std::vector<Sample> {
              if (size == SampleSize::Large) return {};
              return {{"correction0", {arg(make_input({3, 4}, t)), ints_arg({1}), int_arg(0), bool_arg(false)}, {}, ""},
                      {"correction2", {arg(make_input({3, 4}, t)), ints_arg({}), int_arg(2), bool_arg(true)}, {}, ""},
                      {"single", {arg(make_input({3, 1}, t)), ints_arg({1}), int_arg(1), bool_arg(false)}, {}, ""}};
            });
  }
  red_row("norm", kIntegral, same_dtype, RedStyle::Norm,
          [](const RefArgs& a) {
            const double p = a.number(1);
            return reduction_ref(RedStyle::Norm, norm_fold(p), p < 0 || std::isinf(p))(a);
          },
          [](DType t, SampleSize size) -> std::vector<Sample> {
            std::vector<Sample> s;
            if (size == SampleSize::Large) return s;
            const std::pair<const char*, double> orders[] = {{"p1", 1.0},     {"pinf", kInf}, {"pneginf", -kInf},
                                                             {"p0", 0.0},     {"p3", 3.0},    {"p0_5", 0.5},
                                                             {"pneg1", -1.0}};
            for (const auto& order : orders) {
              const char* name = order.first;
              const double p = order.second;  // a plain copy: the lambda below captures it
              auto add = [&](std::string n, const Tensor& x, Shape dims) {
                s.push_back({std::move(n), {arg(x), arg(Scalar(p)), ints_arg(std::move(dims)), bool_arg(false)}});
              };
              add(name, make_input({3, 4}, t), {1});
              if (is_floating_point(t)) add(std::string("special_") + name, special_pairs(t), {1});
              if (p < 0 || std::isinf(p)) add(std::string("empty_") + name, make_input({0, 4}, t), {0});  // an error
            }
            return s;
          });
  red_row("logsumexp", {}, float_of_int, RedStyle::Dims, reduction_ref(RedStyle::Dims, logsumexp_fold));
  red_row("all", {}, bool_or_uint8, RedStyle::Dims, reduction_ref(RedStyle::Dims, logical_fold<true>));
  red_row("any", {}, bool_or_uint8, RedStyle::Dims, reduction_ref(RedStyle::Dims, logical_fold<false>));
  for (const bool prod : {false, true}) {
    red_row(prod ? "cumprod" : "cumsum", {}, int64_of_int, RedStyle::Scan,
            [prod](const RefArgs& a) { return scan_ref(a, prod); },
            [](DType t, SampleSize size) -> std::vector<Sample> {
              if (size == SampleSize::Large) return {};
              return {{"dtype_float64", {arg(make_input({3, 4}, t)), int_arg(1), dtype_arg(DType::Float64)},
                       DType::Float64}};
            });
  }
}

}  // namespace ember::testing
