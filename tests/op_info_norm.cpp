// Op-info rows of the norm family (Note [The op-info table] in
// tests/op_info.h): softmax, log_softmax, layer_norm, rms_norm, group_norm,
// batch_norm and their backward kernels.
//
// Inputs come from a Generator seeded by the op, dtype and sample size, so a
// row's samples are the same every time they are made. References are plain
// loops in double over the raw input values: a normalisation is written once
// over "groups" of element indices (a row, a (sample, group) block, a
// channel), and each op lists its groups.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ember/generator.h"
#include "tests/op_info.h"
#include "tests/op_info_norm_reference.h"

namespace ember::testing {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<DType> kFloats = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

using namespace norm_reference;

// ---- inputs ----

enum class Layout : uint8_t { Contiguous, Transposed, Sliced };

class Inputs {
 public:
  Inputs(const std::string& op, DType t, SampleSize size) : t_(t) {
    uint64_t h = 1469598103934665603ull;
    for (char c : op) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    gen_.manual_seed(h + 131 * static_cast<uint64_t>(t) + (size == SampleSize::Large ? 7 : 0));
  }
  // Uniform in [lo, hi), of the sample's dtype (or `t`), in the given layout.
  Tensor uniform(Shape shape, double lo = -4, double hi = 4, Layout layout = Layout::Contiguous,
                 std::optional<DType> t = std::nullopt) {
    Shape base = shape;
    if (layout == Layout::Transposed) std::swap(base[base.size() - 1], base[base.size() - 2]);
    if (layout == Layout::Sliced) base.back() = 2 * base.back() + 1;
    const Tensor b = (ember::rand(base, TensorOptions(kFloat64), &gen_) * (hi - lo) + lo).to(t.value_or(t_));
    if (layout == Layout::Transposed) return b.transpose(-1, -2);
    if (layout == Layout::Sliced) return b.slice(-1, 1, std::nullopt, 2);
    return b;
  }
  Tensor transposed(Shape shape) { return uniform(std::move(shape), -4, 4, Layout::Transposed); }
  Tensor sliced(Shape shape) { return uniform(std::move(shape), -4, 4, Layout::Sliced); }
  // Statistics inputs of the backward kernels: float32 for f16/bf16.
  Tensor stat(Shape shape, double lo, double hi) { return uniform(std::move(shape), lo, hi, Layout::Contiguous, stat_of(t_)); }

 private:
  DType t_;
  Generator gen_;
};

IValue arg(const Tensor& t) { return IValue::Payload(t); }
IValue none() { return IValue(); }
IValue int_arg(int64_t v) { return IValue::Payload(v); }
IValue ints(Shape v) { return IValue::Payload(std::move(v)); }
IValue real(double v) { return IValue::Payload(v); }
IValue flag(bool v) { return IValue::Payload(v); }
IValue opt(const std::optional<Tensor>& t) { return t ? arg(*t) : none(); }


// ---- softmax ----

Expected softmax_ref(const RefArgs& a, bool log) {
  const HostTensor x = a.tensor(0);
  HostTensor y(x.shape, a.out);
  const int64_t dim = a.integer(1) < 0 ? a.integer(1) + std::max<int64_t>(1, x.dim()) : a.integer(1);
  const Geometry g = geometry(x.shape, dim);
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t i = 0; i < g.inner; ++i) {
      auto at = [&](int64_t r) { return (o * g.len + r) * g.inner + i; };
      double m = -kInf;
      bool nan = false;
      for (int64_t r = 0; r < g.len; ++r) {
        nan |= std::isnan(x.f[at(r)]);
        m = std::max(m, x.f[at(r)]);
      }
      if (nan) m = kNaN;
      double s = 0;
      for (int64_t r = 0; r < g.len; ++r) s += std::exp(x.f[at(r)] - m);
      for (int64_t r = 0; r < g.len; ++r)
        y.f[at(r)] = log ? (x.f[at(r)] - m) - std::log(s) : std::exp(x.f[at(r)] - m) / s;
    }
  return {{y}};
}

Expected softmax_backward_ref(const RefArgs& a, bool log) {
  const HostTensor g = a.tensor(0), y = a.tensor(1);
  HostTensor dx(y.shape, a.out);
  const int64_t dim = a.integer(2) < 0 ? a.integer(2) + std::max<int64_t>(1, y.dim()) : a.integer(2);
  const Geometry geo = geometry(y.shape, dim);
  for (int64_t o = 0; o < geo.outer; ++o)
    for (int64_t i = 0; i < geo.inner; ++i) {
      auto at = [&](int64_t r) { return (o * geo.len + r) * geo.inner + i; };
      double s = 0;
      for (int64_t r = 0; r < geo.len; ++r) s += log ? g.f[at(r)] : g.f[at(r)] * y.f[at(r)];
      for (int64_t r = 0; r < geo.len; ++r)
        dx.f[at(r)] = log ? g.f[at(r)] - std::exp(y.f[at(r)]) * s : y.f[at(r)] * (g.f[at(r)] - s);
    }
  return {{dx}};
}

std::vector<Sample> softmax_samples(DType t, SampleSize size, const std::string& op) {
  Inputs in(op, t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& x, int64_t dim) {
    out.push_back({std::move(name), {arg(x), int_arg(dim), none()}, {}, ""});
  };
  if (size == SampleSize::Large) {
    add("large_rows", in.uniform({256, 400}), -1);
    add("large_columns", in.uniform({256, 400}), 0);
    return out;
  }
  add("rows", in.uniform({3, 5}), -1);
  add("dim0", in.uniform({4, 6}), 0);
  add("middle", in.uniform({2, 3, 4}), 1);
  add("transposed", in.transposed({4, 6}), -1);
  add("sliced", in.sliced({3, 4}), -1);
  add("long_rows", in.uniform({2, 37}), 1);
  add("batch1", in.uniform({1, 7}), -1);
  add("wide_inner", in.uniform({2, 3, 300}), 1);
  add("0d", in.uniform({}), 0);
  add("empty", in.uniform({0, 4}), 1);
  // A column longer than the kernel's row chunk: column 0 is -inf for its
  // first 100 rows, column 1 rises down the rows (the running max grows).
  Tensor columns = in.uniform({150, 256});
  columns.slice(0, 0, 100).select(1, 0).fill_(-kInf);
  columns.select(1, 1).copy_(ember::arange(150, TensorOptions(kFloat64)).mul(0.05).to(t));
  add("long_columns", columns, 0);
  // Rows with -inf, an all -inf row (NaN, as torch), +inf and NaN.
  const std::vector<double> special = {0, -kInf, 1, -kInf, -kInf, -kInf, kInf, 1, 2, kNaN, 1, 2};
  Tensor s = ember::empty({4, 3}, TensorOptions(kFloat64));
  for (int64_t k = 0; k < 12; ++k) s.view({12}).select(0, k).fill_(special[static_cast<size_t>(k)]);
  add("special", s.to(t), 1);
  const DType wide = DType::Float64;
  out.push_back({"dtype", {arg(in.uniform({3, 4})), int_arg(-1), IValue::Payload(wide)}, wide, ""});
  out.push_back({"dim_out_of_range", {arg(in.uniform({3, 4})), int_arg(2), none()}, {}, "out of range"});
  return out;
}

std::vector<Sample> softmax_backward_samples(DType t, SampleSize size, const std::string& op) {
  Inputs in(op, t, size);
  const bool log = op == "log_softmax_backward";
  std::vector<Sample> out;
  auto y_of = [&](Shape s) { return log ? in.uniform(std::move(s), -4, 0) : in.uniform(std::move(s), 0, 1); };
  auto add = [&](std::string name, const Tensor& g, const Tensor& y, int64_t dim, std::string error = "") {
    out.push_back({std::move(name), {arg(g), arg(y), int_arg(dim)}, {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large_rows", in.uniform({256, 400}), y_of({256, 400}), -1);
    add("large_columns", in.uniform({256, 400}), y_of({256, 400}), 0);
    return out;
  }
  add("rows", in.uniform({3, 5}), y_of({3, 5}), -1);
  add("dim0", in.uniform({4, 6}), y_of({4, 6}), 0);
  add("middle", in.uniform({2, 3, 4}), y_of({2, 3, 4}), 1);
  add("transposed", in.transposed({4, 6}), y_of({4, 6}), -1);
  add("long_rows", in.uniform({2, 37}), y_of({2, 37}), 1);
  add("wide_inner", in.uniform({2, 2, 300}), y_of({2, 2, 300}), 1);
  add("0d", in.uniform({}), y_of({}), 0);
  add("empty", in.uniform({0, 4}), y_of({0, 4}), 1);
  add("shape_mismatch", in.uniform({3, 5}), y_of({3, 4}), 1, "does not match");
  add("dim_out_of_range", in.uniform({3, 4}), y_of({3, 4}), -3, "out of range");
  return out;
}

// ---- layer_norm, rms_norm ----

int64_t trailing(const Shape& ns) { return numel_of(ns); }

Shape stat_shape(const Shape& x, size_t k) {
  Shape s = x;
  for (size_t i = s.size() - k; i < s.size(); ++i) s[i] = 1;
  return s;
}

double machine_eps(DType t) {
  switch (t) {
    case DType::Float64: return 0x1p-52;
    case DType::Float16: return 0x1p-10;
    case DType::BFloat16: return 0x1p-7;
    default: return 0x1p-23;
  }
}

Expected row_norm_ref(const RefArgs& a, bool centered) {
  const HostTensor x = a.tensor(0);
  const Shape ns = a.ints(1);
  const std::optional<HostTensor> w = opt_tensor(a, 2), b = centered ? opt_tensor(a, 3) : std::nullopt;
  const double eps = centered ? a.number(4) : (a.is_none(3) ? machine_eps(x.dtype) : a.number(3));
  const std::vector<Group> groups = row_groups(x.numel(), trailing(ns));
  std::vector<Stats> stats;
  for (const Group& g : groups) stats.push_back(stats_of(x, g, eps, centered));
  const Shape ss = stat_shape(x.shape, ns.size());
  HostTensor y = normalise(x, groups, stats, w, b, a.out);
  if (!centered) return {{y, stat_tensor(stats, ss, x.dtype, true)}};
  return {{y, stat_tensor(stats, ss, x.dtype, false), stat_tensor(stats, ss, x.dtype, true)}};
}

std::vector<Sample> row_norm_samples(DType t, SampleSize size, bool centered) {
  Inputs in(centered ? "layer_norm" : "rms_norm", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& x, Shape ns, std::optional<Tensor> w, std::optional<Tensor> b,
                 double eps, std::string error = "") {
    Stack args = {arg(x), ints(std::move(ns)), opt(w)};
    if (centered) {
      args.push_back(opt(b));
      args.push_back(real(eps));
    } else {
      args.push_back(eps < 0 ? none() : IValue::Payload(Scalar(eps)));
    }
    out.push_back({std::move(name), std::move(args), {}, std::move(error)});
  };
  const double eps = centered ? 1e-5 : -1;  // rms_norm: None, the machine epsilon
  if (size == SampleSize::Large) {
    add("large", in.uniform({256, 400}), {400}, in.uniform({400}), in.uniform({400}), eps);
    return out;
  }
  add("affine", in.uniform({3, 5}), {5}, in.uniform({5}), in.uniform({5}), eps);
  add("no_affine", in.uniform({4, 6}), {6}, std::nullopt, std::nullopt, centered ? 1e-3 : 1e-6);
  add("two_dims", in.uniform({2, 3, 4}), {3, 4}, in.uniform({3, 4}), in.uniform({3, 4}), eps);
  add("weight_only", in.uniform({2, 5}), {5}, in.uniform({5}), std::nullopt, eps);
  add("transposed", in.transposed({4, 6}), {6}, in.uniform({6}), in.uniform({6}), eps);
  add("sliced", in.sliced({3, 4}), {4}, in.uniform({4}), in.uniform({4}), eps);
  add("batch1_long", in.uniform({1, 37}), {37}, in.uniform({37}), in.uniform({37}), eps);
  add("1d", in.uniform({7}), {7}, std::nullopt, std::nullopt, eps);
  add("empty_rows", in.uniform({0, 4}), {4}, in.uniform({4}), in.uniform({4}), eps);
  add("shape_mismatch", in.uniform({2, 3}), {4}, std::nullopt, std::nullopt, eps, "normalized_shape");
  add("weight_shape", in.uniform({2, 4}), {4}, in.uniform({3}), std::nullopt, eps, "weight");
  if (centered) add("bias_shape", in.uniform({2, 4}), {4}, in.uniform({4}), in.uniform({2, 2}), eps, "bias");
  add("empty_normalized_shape", in.uniform({2, 4}), {}, std::nullopt, std::nullopt, eps, "at least one dim");
  return out;
}

// (grad, input, normalized_shape, [mean,] rstd, weight) -> (dx, dw[, db])
Expected row_norm_backward_ref(const RefArgs& a, bool centered) {
  const HostTensor g = a.tensor(0), x = a.tensor(1);
  const Shape ns = a.ints(2);
  const std::optional<HostTensor> mean = centered ? std::optional<HostTensor>(a.tensor(3)) : std::nullopt;
  const HostTensor rstd = a.tensor(centered ? 4 : 3);
  const std::optional<HostTensor> w = opt_tensor(a, centered ? 5 : 4);
  const std::vector<Group> groups = row_groups(x.numel(), trailing(ns));
  std::vector<Stats> stats(groups.size());
  for (size_t k = 0; k < groups.size(); ++k) stats[k] = {mean ? mean->f[k] : 0, rstd.f[k]};
  std::vector<HostTensor> r = normalise_backward(g, x, groups, stats, w, ns, centered, true);
  if (!centered) r.pop_back();
  return {r};
}

std::vector<Sample> row_norm_backward_samples(DType t, SampleSize size, bool centered) {
  Inputs in(centered ? "layer_norm_backward" : "rms_norm_backward", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, Shape xs, Shape ns, bool weight, std::string error = "", Shape gs = {}) {
    const Shape ss = stat_shape(xs, ns.size());
    Stack args = {arg(in.uniform(gs.empty() ? xs : gs)), arg(in.uniform(xs)), ints(ns)};
    if (centered) args.push_back(arg(in.stat(ss, -1, 1)));
    args.push_back(arg(in.stat(ss, 0.5, 2)));
    args.push_back(weight ? arg(in.uniform(ns)) : none());
    out.push_back({std::move(name), std::move(args), {}, std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", {256, 400}, {400}, true);
    return out;
  }
  add("affine", {3, 5}, {5}, true);
  add("no_weight", {4, 6}, {6}, false);
  add("two_dims", {2, 3, 4}, {3, 4}, true);
  add("batch1_long", {1, 37}, {37}, true);
  add("grad_shape", {3, 5}, {5}, true, "grad_output", {3, 4});
  return out;
}

// ---- group_norm ----

Expected group_norm_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const int64_t groups = a.integer(1);
  const std::vector<Group> gs = channel_groups(x.shape, groups);
  std::vector<Stats> stats;
  for (const Group& g : gs) stats.push_back(stats_of(x, g, a.number(4), true));
  const Shape ss = {x.shape[0], groups};
  return {{normalise(x, gs, stats, opt_tensor(a, 2), opt_tensor(a, 3), a.out), stat_tensor(stats, ss, x.dtype, false),
           stat_tensor(stats, ss, x.dtype, true)}};
}

std::vector<Sample> group_norm_samples(DType t, SampleSize size) {
  Inputs in("group_norm", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& x, int64_t groups, bool affine, std::string error = "",
                 int64_t weight_size = -1) {
    const int64_t c = weight_size >= 0 ? weight_size : (x.dim() >= 2 ? x.size(1) : 1);
    out.push_back({std::move(name),
                   {arg(x), int_arg(groups), affine ? arg(in.uniform({c})) : none(),
                    affine ? arg(in.uniform({c})) : none(), real(1e-5)},
                   {},
                   std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", in.uniform({16, 16, 20, 20}), 4, true);
    return out;
  }
  add("nchw", in.uniform({2, 6, 3, 3}), 3, true);
  add("nc", in.uniform({3, 4}), 2, false);
  add("ncl_group_per_channel", in.uniform({2, 4, 5}), 4, true);
  add("one_group_batch1", in.uniform({1, 6, 2, 2}), 1, true);
  add("transposed", in.transposed({2, 4, 3, 5}), 2, true);
  add("indivisible", in.uniform({2, 6, 3}), 4, false, "divisible");
  add("weight_shape", in.uniform({2, 6, 3}), 3, true, "weight", 5);
  add("1d", in.uniform({6}), 1, false, "[N, C, *]");
  return out;
}

// (grad, input, num_groups, mean, rstd, weight) -> (dx, dw, db)
Expected group_norm_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0), x = a.tensor(1), mean = a.tensor(3), rstd = a.tensor(4);
  const std::vector<Group> gs = channel_groups(x.shape, a.integer(2));
  std::vector<Stats> stats(gs.size());
  for (size_t k = 0; k < gs.size(); ++k) stats[k] = {mean.f[k], rstd.f[k]};
  return {normalise_backward(g, x, gs, stats, opt_tensor(a, 5), {x.shape[1]}, true, true)};
}

std::vector<Sample> group_norm_backward_samples(DType t, SampleSize size) {
  Inputs in("group_norm_backward", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, Shape xs, int64_t groups, bool weight, std::string error = "") {
    out.push_back({std::move(name),
                   {arg(in.uniform(xs)), arg(in.uniform(xs)), int_arg(groups), arg(in.stat({xs[0], groups}, -1, 1)),
                    arg(in.stat({xs[0], groups}, 0.5, 2)), weight ? arg(in.uniform({xs[1]})) : none()},
                   {},
                   std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large", {16, 16, 20, 20}, 4, true);
    return out;
  }
  add("nchw", {2, 6, 3, 3}, 3, true);
  add("nc_no_weight", {3, 4}, 2, false);
  add("indivisible", {2, 6, 3}, 4, true, "divisible");
  return out;
}

// ---- batch_norm ----

// (input, weight, bias, running_mean, running_var, training, momentum, eps) -> (out, mean, rstd)
Expected batch_norm_ref(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const bool training = a.flag(5);
  const double eps = a.number(7);
  const std::vector<Group> gs = channel_groups(x.shape, 0);
  std::vector<Stats> stats;
  for (size_t k = 0; k < gs.size(); ++k) {
    if (training) {
      stats.push_back(stats_of(x, gs[k], eps, true));
    } else {
      const double m = a.tensor(3).f[k], v = a.tensor(4).f[k];
      stats.push_back({m, 1 / std::sqrt(v + eps)});
    }
  }
  const Shape ss = {x.shape[1]};
  return {{normalise(x, gs, stats, opt_tensor(a, 1), opt_tensor(a, 2), a.out), stat_tensor(stats, ss, x.dtype, false),
           stat_tensor(stats, ss, x.dtype, true)}};
}

std::vector<Sample> batch_norm_samples(DType t, SampleSize size) {
  Inputs in("batch_norm", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& x, bool affine, bool running, bool training, std::string error = "",
                 int64_t weight_size = -1, int64_t stats_size = -1) {
    const int64_t c = x.dim() >= 2 ? x.size(1) : 1;
    const int64_t wc = weight_size >= 0 ? weight_size : c, sc = stats_size >= 0 ? stats_size : c;
    out.push_back({std::move(name),
                   {arg(x), affine ? arg(in.uniform({wc})) : none(), affine ? arg(in.uniform({c})) : none(),
                    running ? arg(in.uniform({sc}, -1, 1)) : none(), running ? arg(in.uniform({c}, 0.5, 2)) : none(),
                    flag(training), real(0.1), real(1e-5)},
                   {},
                   std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large_train", in.uniform({32, 8, 20, 20}), true, true, true);
    add("large_eval", in.uniform({32, 8, 20, 20}), true, true, false);
    return out;
  }
  add("train_nchw", in.uniform({2, 3, 4, 5}), true, true, true);
  add("train_nc", in.uniform({5, 4}), false, true, true);
  add("train_ncl_no_stats", in.uniform({3, 2, 7}), true, false, true);
  add("train_batch1", in.uniform({1, 3, 2, 2}), true, true, true);
  add("train_transposed", in.transposed({3, 4, 2, 5}), true, true, true);
  add("eval_nchw", in.uniform({2, 3, 4, 5}), true, true, false);
  add("eval_nc", in.uniform({4, 3}), false, true, false);
  add("one_value_per_channel", in.uniform({1, 3}), true, true, true, "Expected more than 1 value per channel");
  add("running_mean_size", in.uniform({2, 3}), true, true, true, "running_mean", -1, 4);
  add("weight_shape", in.uniform({2, 3}), true, true, true, "weight", 2);
  add("eval_without_stats", in.uniform({2, 3}), true, false, false, "running_mean and running_var must be given");
  add("1d", in.uniform({4, 3}).select(1, 0), false, false, true, "[N, C]");
  return out;
}

// (grad, input, weight, mean, rstd, training) -> (dx, dw, db)
Expected batch_norm_backward_ref(const RefArgs& a) {
  const HostTensor g = a.tensor(0), x = a.tensor(1), mean = a.tensor(3), rstd = a.tensor(4);
  const std::vector<Group> gs = channel_groups(x.shape, 0);
  std::vector<Stats> stats(gs.size());
  for (size_t k = 0; k < gs.size(); ++k) stats[k] = {mean.f[k], rstd.f[k]};
  return {normalise_backward(g, x, gs, stats, opt_tensor(a, 2), {x.shape[1]}, true, a.flag(5))};
}

std::vector<Sample> batch_norm_backward_samples(DType t, SampleSize size) {
  Inputs in("batch_norm_backward", t, size);
  std::vector<Sample> out;
  auto add = [&](std::string name, Shape xs, bool weight, bool training, std::string error = "", Shape gs = {}) {
    out.push_back({std::move(name),
                   {arg(in.uniform(gs.empty() ? xs : gs)), arg(in.uniform(xs)), weight ? arg(in.uniform({xs[1]})) : none(),
                    arg(in.stat({xs[1]}, -1, 1)), arg(in.stat({xs[1]}, 0.5, 2)), flag(training)},
                   {},
                   std::move(error)});
  };
  if (size == SampleSize::Large) {
    add("large_train", {32, 8, 20, 20}, true, true);
    return out;
  }
  add("train_nchw", {2, 3, 4, 5}, true, true);
  add("eval_nchw", {2, 3, 4, 5}, true, false);
  add("train_nc_no_weight", {5, 4}, false, true);
  add("grad_shape", {2, 3}, true, true, "grad_output", {2, 4});
  return out;
}

// K (Note [Tolerances]) of each norm: the length of the normalised group (the
// mean and variance sum it) and, for a backward pass, the sums of the weight
// and bias gradients over everything else.
using Length = std::function<int64_t(const Sample&)>;

int64_t ratio(int64_t numel, int64_t part) { return part > 0 ? std::max<int64_t>(numel / part, 1) : 1; }

int64_t row_norm_length(const Sample& s, bool backward) {
  const int64_t group = numel_of(std::get<Shape>(s.args[backward ? 2 : 1].payload()));
  const int64_t numel = arg_numel(s, backward ? 1 : 0);
  return backward ? std::max(group, ratio(numel, group)) : std::max<int64_t>(group, 1);
}

int64_t group_norm_length(const Sample& s, bool backward) {
  const Shape x = arg_sizes(s, backward ? 1 : 0);
  if (x.size() < 2) return 1;
  const int64_t groups = std::get<int64_t>(s.args[backward ? 2 : 1].payload());
  const int64_t group = ratio(numel_of(x), x[0] * groups);
  return backward ? std::max(group, ratio(numel_of(x), x[1])) : group;
}

int64_t batch_norm_length(const Sample& s, bool backward) {
  const Shape x = arg_sizes(s, backward ? 1 : 0);
  return x.size() < 2 ? 1 : ratio(numel_of(x), x[1]);
}

}  // namespace

void add_norm_rows(std::vector<OpInfo>& rows) {
  auto row = [&](std::string name, std::function<std::vector<Sample>(DType, SampleSize)> samples,
                 std::function<Expected(const RefArgs&)> ref, bool differentiable, Length length) {
    rows.push_back({.name = std::move(name), .dtypes = kFloats, .out_dtype = same_dtype, .samples = std::move(samples),
                    .reference = std::move(ref), .accumulation = std::move(length),
                    .differentiable = differentiable});
  };
  for (const bool log : {false, true}) {
    const std::string name = log ? "log_softmax" : "softmax";
    row(name, [name](DType t, SampleSize s) { return softmax_samples(t, s, name); },
        [log](const RefArgs& a) { return softmax_ref(a, log); }, true,
        [](const Sample& s) { return arg_dim_size(s, 0, 1); });
    row(name + "_backward", [name](DType t, SampleSize s) { return softmax_backward_samples(t, s, name + "_backward"); },
        [log](const RefArgs& a) { return softmax_backward_ref(a, log); }, true,
        [](const Sample& s) { return arg_dim_size(s, 1, 2); });
  }
  for (const bool centered : {true, false}) {
    const std::string name = centered ? "layer_norm" : "rms_norm";
    row(name, [centered](DType t, SampleSize s) { return row_norm_samples(t, s, centered); },
        [centered](const RefArgs& a) { return row_norm_ref(a, centered); }, true,
        [](const Sample& s) { return row_norm_length(s, false); });
    row(name + "_backward", [centered](DType t, SampleSize s) { return row_norm_backward_samples(t, s, centered); },
        [centered](const RefArgs& a) { return row_norm_backward_ref(a, centered); }, false,
        [](const Sample& s) { return row_norm_length(s, true); });
  }
  row("group_norm", group_norm_samples, group_norm_ref, true, [](const Sample& s) { return group_norm_length(s, false); });
  row("group_norm_backward", group_norm_backward_samples, group_norm_backward_ref, false,
      [](const Sample& s) { return group_norm_length(s, true); });
  row("batch_norm", batch_norm_samples, batch_norm_ref, true, [](const Sample& s) { return batch_norm_length(s, false); });
  row("batch_norm_backward", batch_norm_backward_samples, batch_norm_backward_ref, false,
      [](const Sample& s) { return batch_norm_length(s, true); });
}

}  // namespace ember::testing
