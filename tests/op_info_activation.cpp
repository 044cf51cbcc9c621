// Op-info rows of the activations (Note [The op-info table], tests/op_info.h):
// leaky_relu, elu, hardswish, hardsigmoid, mish, log_sigmoid and their fused
// backward ops, and threshold_backward (relu's). References are the formulas
// in double, from the raw values.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/op_info_indexing_inputs.h"

namespace ember::testing {

namespace {

using namespace family;

const std::vector<DType> kFloating = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Special values, the kinks (0, +-3) and their neighbours.
const std::vector<double> kSpecials = {0.0, -0.0, kInf, -kInf, kNaN, 3.0, -3.0, 2.5, -2.5, 0.5, -0.375, 25.0, -25.0};

// NaN-propagating min/max, as the kernels' (PyTorch's) std::min/std::max order gives.
double max_nan(double a, double b) { return std::isnan(a) ? a : (a > b ? a : b); }
double min_nan(double a, double b) { return std::isnan(a) ? a : (a < b ? a : b); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

// f(x, p): p is the Scalar parameter (slope, alpha) or unused.
using Fn = double (*)(double, double);
// f'(x, p), the backward op's factor.
using Deriv = double (*)(double, double);

struct Activation {
  const char* name;
  bool has_param;
  double param;  // the sample's value of it
  Fn f;
  Deriv d;
};

const std::vector<Activation>& activations() {
  static const std::vector<Activation> table = {
      {"leaky_relu", true, 0.2, [](double x, double s) { return x > 0 ? x : x * s; },
       [](double x, double s) { return x > 0 ? 1.0 : s; }},
      {"elu", true, 1.5, [](double x, double a) { return x <= 0 ? a * std::expm1(x) : x; },
       [](double x, double a) { return x <= 0 ? a * std::exp(x) : 1.0; }},
      {"hardswish", false, 0, [](double x, double) { return x * min_nan(max_nan(x + 3, 0), 6) / 6; },
       [](double x, double) { return x < -3 ? 0.0 : (x <= 3 ? x / 3 + 0.5 : 1.0); }},
      {"hardsigmoid", false, 0, [](double x, double) { return min_nan(max_nan(x + 3, 0), 6) / 6; },
       [](double x, double) { return x > -3 && x < 3 ? 1.0 / 6 : 0.0; }},
      {"mish", false, 0, [](double x, double) { return x * std::tanh(softplus(x)); },
       [](double x, double) {
         const double t = std::tanh(softplus(x)), s = sigmoid(x);
         return t + x * s * (1 - t * t);
       }},
      {"log_sigmoid", false, 0, [](double x, double) { return min_nan(x, 0) - std::log1p(std::exp(-std::fabs(x))); },
       [](double x, double) { return sigmoid(-x); }},
  };
  return table;
}

// threshold_backward(grad, x, threshold) = grad where x > threshold, else 0: a
// backward op without a forward one here (relu is a unary op).
const Activation& threshold() {
  static const Activation t{"threshold", true, 0.5, nullptr, [](double x, double p) { return x > p ? 1.0 : 0.0; }};
  return t;
}

Stack with_param(Stack a, const Activation& act, double p) {
  if (act.has_param) a.push_back(arg(Scalar(p)));
  return a;
}

std::vector<Sample> forward_samples(const Activation& act, DType t, SampleSize size) {
  reseed(act.name, t);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& x, double p) { out.push_back({std::move(name), with_param({arg(x)}, act, p)}); };
  if (size == SampleSize::Large) {
    add("large", input({256, 400}, t, -6, 6), act.param);
    add("large_transposed", input({256, 400}, t, -6, 6, Layout::Transposed), act.param);
    return out;
  }
  add("contiguous", input({3, 5}, t), act.param);
  add("transposed", input({4, 6}, t, Layout::Transposed), act.param);
  add("sliced", input({3, 4}, t, Layout::Sliced), act.param);
  add("3d_batch1", input({1, 3, 4}, t, -8, 8), act.param);
  add("empty", input({0, 4}, t), act.param);
  add("0d", input({}, t), act.param);
  add("special", from_values({static_cast<int64_t>(kSpecials.size())}, t, kSpecials), act.param);
  if (act.has_param) add("default_param", input({2, 7}, t), std::string(act.name) == "elu" ? 1.0 : 0.01);
  out.push_back({"undefined_self", with_param({arg(Tensor())}, act, act.param), {}, "undefined tensor"});
  return out;
}

std::vector<Sample> backward_samples(const Activation& act, DType t, SampleSize size) {
  reseed(std::string(act.name) + "_backward", t);
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& g, const Tensor& x) {
    out.push_back({std::move(name), with_param({arg(g), arg(x)}, act, act.param)});
  };
  if (size == SampleSize::Large) {
    add("large", input({256, 400}, t), input({256, 400}, t, -6, 6));
    return out;
  }
  add("contiguous", input({3, 5}, t), input({3, 5}, t));
  add("transposed", input({4, 6}, t, Layout::Transposed), input({4, 6}, t));
  add("sliced", input({3, 4}, t), input({3, 4}, t, Layout::Sliced));
  add("0d", input({}, t), input({}, t));
  // The kinks (x = 0, +-3) are pinned by tests/test_activation.cpp: gradcheck cannot run there.
  Sample bad{"shape_mismatch", with_param({arg(input({3, 5}, t)), arg(input({5, 3}, t))}, act, act.param)};
  bad.error = "does not match";
  out.push_back(bad);
  return out;
}

Expected forward_ref(const Activation& act, const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const double p = act.has_param ? a.number(1) : 0.0;
  HostTensor r(x.shape, a.out);
  for (int64_t k = 0; k < x.numel(); ++k) r.set(k, act.f(x.f[k], p));
  return {{r}, false, ""};
}

Expected backward_ref(const Activation& act, const RefArgs& a) {
  const HostTensor g = a.tensor(0), x = a.tensor(1);
  const double p = act.has_param ? a.number(2) : 0.0;
  HostTensor r(x.shape, a.out);
  for (int64_t k = 0; k < x.numel(); ++k) {
    const double d = act.d(x.f[k], p);
    // PyTorch's backward returns exactly grad or 0 on the flat/identity branches.
    r.set(k, d == 0.0 ? 0.0 : (d == 1.0 ? g.f[k] : g.f[k] * d));
  }
  return {{r}, false, ""};
}

}  // namespace

void add_activation_rows(std::vector<OpInfo>& rows) {
  for (const Activation& act : activations()) {
    rows.push_back({.name = act.name, .dtypes = kFloating, .out_dtype = same_dtype,
                    .samples = [&act](DType t, SampleSize size) { return forward_samples(act, t, size); },
                    .reference = [&act](const RefArgs& a) { return forward_ref(act, a); },
                    .differentiable = true});
    rows.push_back({.name = std::string(act.name) + "_backward", .dtypes = kFloating, .out_dtype = same_dtype,
                    .samples = [&act](DType t, SampleSize size) { return backward_samples(act, t, size); },
                    .reference = [&act](const RefArgs& a) { return backward_ref(act, a); },
                    .differentiable = true});
  }
  rows.push_back({.name = "threshold_backward", .dtypes = kFloating, .out_dtype = same_dtype,
                  .samples = [](DType t, SampleSize size) { return backward_samples(threshold(), t, size); },
                  .reference = [](const RefArgs& a) { return backward_ref(threshold(), a); },
                  .exact = true,
                  .differentiable = true});
}

}  // namespace ember::testing
