// Op-info rows: copies, fills and random fills (Note [The op-info table] in tests/op_info.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "tests/op_info.h"
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
    out.push_back({std::move(name), {arg(self), arg(src)}, {}});
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
    // Negative floats have no uint8 value (the C++ conversion is undefined).
    const Domain d = t == DType::UInt8 && is_floating_point(from) ? Domain::Positive : Domain::Any;
    add("from_" + std::string(dtype_name(from)), make_input({2, 3}, t), make_input({2, 3}, from, d));
  }
  add("empty", make_input({0, 3}, t), make_input({0, 3}, t));
  add("0d", make_input({}, t), make_input({}, t));
  add("0d_src", make_input({2, 3}, t), make_input({}, t));
  add("bad_broadcast", make_input({3, 5}, t), make_input({4}, t));
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

}  // namespace

void add_copy_and_random_rows(std::vector<OpInfo>& rows) {
  rows.push_back({.name = "copy_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = copy_samples, .reference = copy_ref});
  rows.push_back({.name = "fill_", .dtypes = kAll, .out_dtype = same_dtype, .kind = OpKind::InPlace,
                  .samples = fill_samples, .reference = fill_ref});
  rows.push_back({.name = "clone", .dtypes = kAll, .out_dtype = same_dtype,
                  .samples = [](DType t, SampleSize size) { return unary_samples(t, size, Domain::Any); },
                  .reference = [](const RefArgs& a) { return map1(a.tensor(0), a.out, [](auto x) { return x; }); }});
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
}

}  // namespace ember::testing
