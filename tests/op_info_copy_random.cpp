// Op-info rows: copies, fills and random fills (Note [The op-info table] in tests/op_info.h).
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

// src converted to self's dtype as a C++ cast does (floats truncate toward
// zero, bool is "nonzero"), broadcast to self's shape.
Expected copy_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0), src = a.tensor(1);
  const std::optional<Shape> s = broadcast(self.shape, src.shape);
  if (!s || *s != self.shape) return Expected::raises("");
  HostTensor r(self.shape, a.out);
  for_each_index(self.shape, [&](const Shape& idx, int64_t k) {
    const int64_t j = source_index(idx, src.shape);
    if (src.floating()) r.set(k, src.f[j]);
    else r.set_int(k, src.i[j]);
  });
  return {{r}, false, ""};
}

std::vector<Sample> copy_samples(DType t, SampleSize size) {
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& self, const Tensor& src) {
    out.push_back({std::move(name), {arg(self), arg(src), bool_arg(false)}, {}});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t), make_input({256, 400}, t));
    add("large_transposed", make_input({256, 400}, t), make_input({256, 400}, t, kTransposed));
    add("large_convert", make_input({256, 400}, t),
        make_input({256, 400}, t == DType::Float64 ? DType::Float32 : DType::Float64, Domain::Positive));
    return out;
  }
  add("contiguous", make_input({3, 5}, t), make_input({3, 5}, t));
  add("broadcast", make_input({3, 5}, t), make_input({5}, t));
  add("transposed", make_input({3, 5}, t, kTransposed), make_input({3, 5}, t));
  add("sliced", make_input({3, 5}, t, kSliced), make_input({3, 5}, t, kTransposed));
  for (DType from : kAll) {
    if (from == t) continue;
    // The reference converts with a plain C++ cast, defined for uint8 only from non-negative values.
    const Domain d = t == DType::UInt8 && is_floating_point(from) ? Domain::Positive : Domain::Any;
    add("from_" + std::string(dtype_name(from)), make_input({2, 3}, t), make_input({2, 3}, from, d));
  }
  add("empty", make_input({0, 3}, t), make_input({0, 3}, t));
  add("0d", make_input({}, t), make_input({}, t));
  add("0d_src", make_input({2, 3}, t), make_input({}, t));
  add("bad_broadcast", make_input({3, 5}, t), make_input({4}, t));
  out.back().error = "copy_";
  add("src_outgrows_self", make_input({1, 5}, t), make_input({3, 5}, t));
  out.back().error = "copy_";
  out.push_back(expanded_self(out.front()));
  out.push_back(partially_overlapping(out.front(), 1));
  out.push_back(undefined_input(out.front(), 1));
  if (is_floating_point(t)) add("special", make_input({12}, t), from_values({12}, DType::Float64, kSpecials));
  return out;
}

std::vector<Sample> fill_samples(DType t, SampleSize size) {
  const Scalar v = scalar_of(t, is_floating_point(t) ? -2.75 : t == DType::Bool ? 1 : 7);
  std::vector<Sample> s = unary_samples(t, size, Domain::Any, {arg(v)}, false);
  if (size == SampleSize::Large) return s;
  if (!is_floating_point(t)) s.push_back({"float_value", {arg(make_input({2, 3}, t)), arg(Scalar(2.75))}, {}});
  if (t != DType::Bool) s.push_back({"bool_value", {arg(make_input({2, 3}, t)), arg(Scalar(true))}, {}});
  if (is_floating_point(t)) {
    s.push_back({"nan_value", {arg(make_input({2, 3}, t)), arg(Scalar(kNaN))}, {}});
    s.push_back({"inf_value", {arg(make_input({2, 3}, t, kTransposed)), arg(Scalar(-kInf))}, {}});
  }
  // A value the dtype cannot hold (1e300 overflows all but float64 and bool; NaN has no integer).
  if (t != DType::Float64 && t != DType::Bool)
    s.push_back({"value_overflows", {arg(make_input({2, 3}, t)), arg(Scalar(1e300))}, {}, "without overflow"});
  if (!is_floating_point(t) && t != DType::Bool)
    s.push_back({"nan_into_integer", {arg(make_input({2, 3}, t)), arg(Scalar(kNaN))}, {}, "without overflow"});
  s.push_back(undefined_input(s.front(), 0));
  return s;
}

Expected fill_ref(const RefArgs& a) {
  const HostTensor self = a.tensor(0);
  const Scalar& v = std::get<Scalar>(a.sample().args[1].payload());
  HostTensor r(self.shape, a.out);
  for (int64_t k = 0; k < r.numel(); ++k) {
    if (r.floating()) r.set(k, v.to_double());
    else if (r.dtype == DType::Bool) r.set_int(k, v.to<bool>());
    else r.set_int(k, v.to_int());  // a float value truncates toward zero
  }
  return {{r}, false, ""};
}

// self, low, high, seed, offset: the shapes the property checks look at.
std::vector<Sample> random_samples(DType t, SampleSize size, IValue low, IValue high) {
  std::vector<Sample> out;
  int64_t seed = 1000;
  auto add = [&](std::string name, const Tensor& self) {
    out.push_back({std::move(name), {arg(self), low, high, int_arg(seed++), int_arg(7)}, {}});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t));
    return out;
  }
  add("contiguous", make_input({64, 64}, t));
  add("transposed", make_input({64, 64}, t, kTransposed));
  add("sliced", make_input({40, 32}, t, kSliced));
  add("empty", make_input({0, 3}, t));
  add("0d", make_input({}, t));
  return out;
}

enum class Dist : uint8_t { Uniform, Normal, Integers };

// Properties of a random fill: the values lie in the range (and are integers
// for random_), the moments fit the distribution, the same seed and offset
// give the same values in any layout, and another offset gives others.
::testing::AssertionResult check_random(const std::string& op, Dist dist, const Sample& s, const TensorList& outs) {
  const Tensor& self = s.args[0].tensor();
  if (outs.size() != 1 || !outs[0].is_same(self)) return ::testing::AssertionFailure() << "did not return self";
  const HostTensor h = to_host(self);
  const RefArgs args(s, self.dtype());
  const double lo = args.number(1), hi = args.number(2);
  double sum = 0, sum2 = 0, mn = kInf, mx = -kInf;
  for (int64_t k = 0; k < h.numel(); ++k) {
    const double v = h.at(k);
    if (dist == Dist::Uniform && !(v >= lo && v <= hi))  // == hi only by rounding to a narrow dtype
      return ::testing::AssertionFailure() << "value " << v << " outside [" << lo << ", " << hi << ")";
    if (dist == Dist::Integers && !(v >= lo && v < hi && v == std::floor(v)))
      return ::testing::AssertionFailure() << "value " << v << " is not an integer in [" << lo << ", " << hi << ")";
    if (!std::isfinite(v)) return ::testing::AssertionFailure() << "value " << v;
    sum += v;
    sum2 += v * v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  const double n = static_cast<double>(h.numel());
  if (n >= 1000) {
    const double mean = sum / n, sd = std::sqrt(std::max(0.0, sum2 / n - mean * mean));
    double want_mean = (lo + hi) / 2, want_sd = (hi - lo) / std::sqrt(12.0);
    if (dist == Dist::Normal) want_mean = lo, want_sd = hi;  // normal_(mean, std)
    if (dist == Dist::Integers) want_sd = std::sqrt(((hi - lo) * (hi - lo) - 1) / 12.0), want_mean = (lo + hi - 1) / 2;
    if (std::fabs(mean - want_mean) > 0.1 * want_sd || std::fabs(sd - want_sd) > 0.1 * want_sd)
      return ::testing::AssertionFailure() << "mean " << mean << " sd " << sd << ", expected about " << want_mean
                                           << " and " << want_sd;
    if (dist != Dist::Normal && (mn > lo + 0.05 * (hi - lo) || mx < hi - 0.05 * (hi - lo) - 1))
      return ::testing::AssertionFailure() << "values span [" << mn << ", " << mx << "] of [" << lo << ", " << hi
                                           << ")";
  }
  // The same seed and offset on a fresh contiguous tensor: the same values.
  Sample again = copy_sample(s);
  again.args[0] = arg(ember::zeros(self.sizes().vec(), self.dtype()));
  run_sample(op, again);
  const HostTensor h2 = to_host(again.args[0].tensor());
  if (h2.f != h.f || h2.i != h.i) return ::testing::AssertionFailure() << "another run with the same seed differs";
  if (h.numel() > 1) {
    Sample other = copy_sample(s);
    other.args[4] = int_arg(std::get<int64_t>(s.args[4].payload()) + 1);
    run_sample(op, other);
    const HostTensor h3 = to_host(other.args[0].tensor());
    if (h3.f == h.f && h3.i == h.i) return ::testing::AssertionFailure() << "another offset gave the same values";
  }
  return ::testing::AssertionSuccess();
}

// bernoulli_(self, p, seed, offset): p a wrapped number or a tensor broadcast to self.
std::vector<Sample> bernoulli_samples(DType t, SampleSize size) {
  std::vector<Sample> out;
  int64_t seed = 2000;
  auto add = [&](std::string name, const Tensor& self, const Tensor& p, std::string err = "") {
    out.push_back({std::move(name), {arg(self), arg(p), int_arg(seed++), int_arg(3)}, {}, std::move(err)});
  };
  const Tensor p_column = make_input({64, 1}, DType::Float64, Domain::Unit).abs();  // in [0, 0.9)
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t), wrap_scalar(Scalar(0.3)));
    return out;
  }
  add("contiguous", make_input({64, 64}, t), wrap_scalar(Scalar(0.3)));
  add("p_tensor", make_input({64, 64}, t), p_column.to(DType::Float32));
  add("transposed", make_input({64, 64}, t, kTransposed), p_column);
  add("sliced", make_input({40, 32}, t, kSliced), wrap_scalar(Scalar(0.8)));
  add("p_one", make_input({8}, t), wrap_scalar(Scalar(1.0)));
  add("empty", make_input({0, 3}, t), wrap_scalar(Scalar(0.5)));
  add("0d", make_input({}, t), wrap_scalar(Scalar(0.5)));
  add("p_above_one", make_input({4}, t), wrap_scalar(Scalar(1.5)), "[0, 1]");
  add("p_nan", make_input({4}, t), wrap_scalar(Scalar(kNaN)), "[0, 1]");
  add("p_integer", make_input({4}, t), make_input({4}, DType::Int64, Domain::Unit), "floating");
  add("p_grows_self", make_input({1, 4}, t), make_input({3, 4}, DType::Float32, Domain::Unit), "broadcast");
  return out;
}

// Draws are 0 or 1; over many elements their mean is the mean of p; the same
// seed gives the same draws on a fresh tensor, another offset others.
::testing::AssertionResult check_bernoulli(const Sample& s, const TensorList& outs) {
  const Tensor& self = s.args[0].tensor();
  const HostTensor h = to_host(self);
  const HostTensor p = to_host(s.args[1].tensor().expand(self.sizes()));
  double draws = 0, expected = 0, variance = 0;
  for (int64_t k = 0; k < h.numel(); ++k) {
    const double v = h.at(k), q = p.at(k);
    if (v != 0 && v != 1) return ::testing::AssertionFailure() << "draw " << v << " is not 0 or 1";
    if ((q == 0 && v != 0) || (q == 1 && v != 1)) return ::testing::AssertionFailure() << "draw " << v << " of p " << q;
    draws += v;
    expected += q;
    variance += q * (1 - q);
  }
  if (std::fabs(draws - expected) > 5 * std::sqrt(variance) + 1e-9)
    return ::testing::AssertionFailure() << draws << " ones, expected about " << expected << " (sd "
                                         << std::sqrt(variance) << ")";
  Sample again = copy_sample(s);
  again.args[0] = arg(ember::zeros(self.sizes().vec(), self.dtype()));
  run_sample("bernoulli_", again);
  if (!bitwise_equal(again.args[0].tensor(), self)) return ::testing::AssertionFailure() << "the same seed differs";
  if (variance > 10) {
    Sample other = copy_sample(s);
    other.args[3] = int_arg(std::get<int64_t>(s.args[3].payload()) + 1);
    run_sample("bernoulli_", other);
    if (bitwise_equal(other.args[0].tensor(), self)) return ::testing::AssertionFailure() << "another offset agrees";
  }
  return outs.size() == 1 ? ::testing::AssertionSuccess() : ::testing::AssertionFailure() << "one output expected";
}

// multinomial(probs, num_samples, replacement, seed, offset).
std::vector<Sample> multinomial_samples(DType t, SampleSize size) {
  std::vector<Sample> out;
  int64_t seed = 3000;
  auto add = [&](std::string name, const Tensor& probs, int64_t n, bool replacement, std::string err = "") {
    out.push_back({std::move(name), {arg(probs), int_arg(n), bool_arg(replacement), int_arg(seed++), int_arg(5)}, {},
                   std::move(err)});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({64, 100}, t, Domain::Positive), 400, true);
    add("large_without", make_input({256, 400}, t, Domain::Positive), 10, false);
    return out;
  }
  add("rows", make_input({3, 5}, t, Domain::Positive), 4000, true);
  add("1d", make_input({6}, t, Domain::Positive), 4000, true);
  add("zeros", from_values({2, 4}, t, {0, 1, 0, 3, 2, 0, 0, 2}), 2000, true);
  add("transposed", make_input({4, 3}, t, Domain::Positive, kTransposed), 2000, true);
  add("without", make_input({8, 6}, t, Domain::Positive), 4, false);
  add("without_all", make_input({3, 5}, t, Domain::Positive), 5, false);
  add("without_zeros", from_values({2, 4}, t, {0, 1, 0, 3, 2, 0, 0, 2}), 2, false);
  add("empty_rows", make_input({0, 3}, t, Domain::Positive), 2, true);
  add("negative", from_values({3}, t, {1, -1, 2}), 1, true, "non-negative");
  add("zero_sum", from_values({2, 2}, t, {1, 1, 0, 0}), 1, true, "sum");
  add("3d", make_input({2, 2, 2}, t, Domain::Positive), 1, true, "dims");
  add("no_samples", make_input({3}, t, Domain::Positive), 0, true, "num_samples");
  add("too_many", make_input({3}, t, Domain::Positive), 4, false, "without replacement");
  return out;
}

// Indices in range, never of a zero weight (while positive ones are left),
// distinct per row without replacement, frequencies near the weights with
// replacement; the same seed gives the same draws.
::testing::AssertionResult check_multinomial(const Sample& s, const TensorList& outs) {
  const HostTensor w = to_host(s.args[0].tensor());
  const int64_t n = std::get<int64_t>(s.args[1].payload());
  const bool replacement = std::get<bool>(s.args[2].payload());
  if (outs.size() != 1 || outs[0].dtype() != DType::Int64) return ::testing::AssertionFailure() << "one int64 output";
  const HostTensor h = to_host(outs[0]);
  const int64_t k = w.shape.back(), rows = w.dim() == 2 ? w.shape[0] : 1;
  Shape want = w.shape;
  want.back() = n;
  if (h.shape != want) return ::testing::AssertionFailure() << "shape " << IntArrayRef(h.shape);
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t positive = 0;
    for (int64_t j = 0; j < k; ++j) {
      total += w.at(r * k + j);
      positive += w.at(r * k + j) > 0;
    }
    std::vector<int64_t> hits(static_cast<size_t>(k), 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = h.i[r * n + i];
      if (c < 0 || c >= k) return ::testing::AssertionFailure() << "index " << c << " of " << k << " categories";
      ++hits[c];
      if (w.at(r * k + c) == 0 && (replacement || i < positive))
        return ::testing::AssertionFailure() << "drew category " << c << " of weight 0 in row " << r;
      if (!replacement && hits[c] > 1) return ::testing::AssertionFailure() << "drew " << c << " twice in row " << r;
    }
    if (!replacement) continue;
    for (int64_t j = 0; j < k; ++j) {
      const double q = w.at(r * k + j) / total, mean = n * q, sd = std::sqrt(n * q * (1 - q));
      if (std::fabs(hits[j] - mean) > 5 * sd + 1e-9)
        return ::testing::AssertionFailure() << "category " << j << " of row " << r << ": " << hits[j]
                                             << " draws, expected about " << mean << " (sd " << sd << ")";
    }
  }
  if (!bitwise_equal(run_sample("multinomial", copy_sample(s))[0], outs[0]))
    return ::testing::AssertionFailure() << "the same seed differs";
  return ::testing::AssertionSuccess();
}

}  // namespace

void add_copy_and_random_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "copy_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = copy_samples, .reference = copy_ref, .exact = true});
  rows.push_back({.name = "fill_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = fill_samples, .reference = fill_ref, .exact = true});
  rows.push_back({.name = "clone", .dtypes = kAll, .out_dtype = same_dtype,
                  .samples = [](DType t, SampleSize size) {
                    std::vector<Sample> s = unary_samples(t, size, Domain::Any);
                    return size == SampleSize::Large ? s : joined(s, unary_error_samples(t, Domain::Any, false));
                  },
                  .reference = [](const RefArgs& a) { return map1(a.tensor(0), a.out, [](auto x) { return x; }); },
                  .exact = true});
  rows.push_back({
      .name = "uniform_", .dtypes = kFloating, .out_dtype = same_dtype, .kind = OpKind::Random,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = random_samples(t, size, float_arg(-2.0), float_arg(3.0));
        if (size == SampleSize::Small) {
          s.push_back({"low_above_high", {arg(make_input({4}, t)), float_arg(3.0), float_arg(-2.0), int_arg(1),
                                          int_arg(0)}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        if (a.number(1) > a.number(2)) return Expected::raises("");
        return {};
      },
      .check = [](const Sample& s, const TensorList& outs) { return check_random("uniform_", Dist::Uniform, s, outs); },
  });
  rows.push_back({
      .name = "normal_", .dtypes = kFloating, .out_dtype = same_dtype, .kind = OpKind::Random,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = random_samples(t, size, float_arg(1.5), float_arg(2.0));
        if (size == SampleSize::Small) {
          s.push_back({"negative_std", {arg(make_input({4}, t)), float_arg(0.0), float_arg(-1.0), int_arg(1),
                                        int_arg(0)}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        if (a.number(2) < 0) return Expected::raises("");
        return {};
      },
      .check = [](const Sample& s, const TensorList& outs) { return check_random("normal_", Dist::Normal, s, outs); },
  });
  rows.push_back({
      .name = "random_", .dtypes = kNumeric, .out_dtype = same_dtype, .kind = OpKind::Random,
      .samples = [](DType t, SampleSize size) {
        const int64_t lo = t == DType::UInt8 ? 3 : -5, hi = t == DType::UInt8 ? 200 : 7;
        std::vector<Sample> s = random_samples(t, size, int_arg(lo), int_arg(hi));
        if (size == SampleSize::Small) {
          s.push_back({"low_above_high", {arg(make_input({4}, t)), int_arg(hi), int_arg(lo), int_arg(1), int_arg(0)}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        if (a.integer(1) >= a.integer(2)) return Expected::raises("low");
        return {};
      },
      .check = [](const Sample& s, const TensorList& outs) { return check_random("random_", Dist::Integers, s, outs); },
  });
  rows.push_back({.name = "bernoulli_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::Random,
                  .samples = bernoulli_samples, .check = check_bernoulli});
  rows.push_back({.name = "multinomial", .dtypes = kFloating, .out_dtype = int64_dtype, .kind = OpKind::Sampled,
                  .samples = multinomial_samples, .check = check_multinomial});
}

}  // namespace ember::testing
