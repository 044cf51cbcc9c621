// The elementwise references (elementwise_reference.h): one formula per op,
// written from its definition, evaluated in long double.
#include "kernels/cpu/elementwise/elementwise_reference.h"

#include <cmath>
#include <functional>
#include <string>

#include "core/result_type.h"
#include "kernels/reference_values.h"

namespace ember::cpu {
namespace {

using R = long double;
using UnaryFn = R (*)(R);

R sigmoid(R x) { return 1 / (1 + std::exp(-x)); }
// clamp(x + 3, 0, 6) for hardswish and hardsigmoid; NaN stays NaN.
R relu6_shift(R x) { return x + 3 < 0 ? R(0) : x + 3 > 6 ? R(6) : x + 3; }
// x * gate(x) for a gate that tends to 0 at -inf and 1 at +inf (silu, gelu):
// the limits at +-inf, where the product is inf * 0.
R gated(R x, R gate) { return std::isinf(x) ? (x > 0 ? x : R(-0.0)) : x * gate; }

struct UnaryEntry {
  const char* name;
  UnaryFn f;
};

// clang-format off
const UnaryEntry kUnary[] = {
    {"neg", [](R x) { return -x; }},
    {"abs", [](R x) { return std::fabs(x); }},
    {"sign", [](R x) { return R((x > 0) - (x < 0)); }},  // NaN gives 0, as the kernels do
    {"exp", [](R x) { return std::exp(x); }},
    {"exp2", [](R x) { return std::exp2(x); }},
    {"log", [](R x) { return std::log(x); }},
    {"log2", [](R x) { return std::log2(x); }},
    {"log1p", [](R x) { return std::log1p(x); }},
    {"expm1", [](R x) { return std::expm1(x); }},
    {"sqrt", [](R x) { return std::sqrt(x); }},
    {"rsqrt", [](R x) { return 1 / std::sqrt(x); }},
    {"reciprocal", [](R x) { return 1 / x; }},
    {"sin", [](R x) { return std::sin(x); }},
    {"cos", [](R x) { return std::cos(x); }},
    {"tan", [](R x) { return std::tan(x); }},
    {"asin", [](R x) { return std::asin(x); }},
    {"acos", [](R x) { return std::acos(x); }},
    {"atan", [](R x) { return std::atan(x); }},
    {"sinh", [](R x) { return std::sinh(x); }},
    {"cosh", [](R x) { return std::cosh(x); }},
    {"tanh", [](R x) { return std::tanh(x); }},
    {"asinh", [](R x) { return std::asinh(x); }},
    {"acosh", [](R x) { return std::acosh(x); }},
    {"atanh", [](R x) { return std::atanh(x); }},
    {"sigmoid", sigmoid},
    {"relu", [](R x) { return std::isnan(x) ? x : std::fmax(x, R(0)); }},
    {"silu", [](R x) { return gated(x, sigmoid(x)); }},
    {"erf", [](R x) { return std::erf(x); }},
    {"floor", [](R x) { return std::floor(x); }},
    {"ceil", [](R x) { return std::ceil(x); }},
    {"round", [](R x) { return std::nearbyint(x); }},  // halves to even, the default rounding mode
    {"trunc", [](R x) { return std::trunc(x); }},
    {"hardswish", [](R x) { return x * relu6_shift(x) / 6; }},
    {"hardsigmoid", [](R x) { return relu6_shift(x) / 6; }},
    {"mish", [](R x) { return x * std::tanh(std::log1p(std::exp(x))); }},
    {"log_sigmoid", [](R x) { return -std::log1p(std::exp(-x)); }},
};
// clang-format on

// y[k] = f(x[k]) for every element, in x's dtype.
Tensor map_values(std::string_view op, const Tensor& x, const std::function<R(R)>& f) {
  reference::check_dtype(x, op);
  reference::Values v = reference::read(x, op);
  for (double& e : v.v) e = static_cast<double>(f(e));
  return reference::write(v, x.dtype());
}

}  // namespace

const std::vector<const char*>& unary_reference_ops() {
  static const std::vector<const char*> names = [] {
    std::vector<const char*> out;
    for (const UnaryEntry& e : kUnary) out.push_back(e.name);
    return out;
  }();
  return names;
}

Tensor unary_reference(std::string_view op, const Tensor& x) {
  for (const UnaryEntry& e : kUnary) {
    if (op == e.name) return map_values(op, x, e.f);
  }
  EMBER_FAIL("unary_reference: no reference for the op ", op);
}

Tensor gelu_reference(const Tensor& x, std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '",
              approximate, "'");
  if (approximate == "tanh") {
    return map_values("gelu", x, [](R v) {
      const R k = std::sqrt(R(2) / std::acos(R(-1)));  // sqrt(2 / pi)
      return gated(v, (1 + std::tanh(k * (v + R(0.044715) * v * v * v))) / 2);
    });
  }
  return map_values("gelu", x, [](R v) { return gated(v, (1 + std::erf(v / std::sqrt(R(2)))) / 2); });
}

Tensor leaky_relu_reference(const Tensor& x, double negative_slope) {
  return map_values("leaky_relu", x, [=](R v) { return v > 0 ? v : v * negative_slope; });
}

Tensor elu_reference(const Tensor& x, double alpha) {
  return map_values("elu", x, [=](R v) { return v > 0 ? v : alpha * std::expm1(v); });
}

Tensor softplus_reference(const Tensor& x, double beta, double threshold) {
  // Linear where beta * x > threshold, as PyTorch defines it.
  return map_values("softplus", x,
                    [=](R v) { return v * beta > threshold ? v : std::log1p(std::exp(v * beta)) / beta; });
}

Tensor binary_reference(std::string_view op, const Tensor& a, const Tensor& b, double alpha) {
  std::function<R(R, R)> f;
  if (op == "add")
    f = [=](R x, R y) { return x + alpha * y; };
  else if (op == "sub")
    f = [=](R x, R y) { return x - alpha * y; };
  else if (op == "mul")
    f = [](R x, R y) { return x * y; };
  else if (op == "div")
    f = [](R x, R y) { return x / y; };
  else if (op == "maximum")
    f = [](R x, R y) { return std::isnan(x) || std::isnan(y) ? x + y : std::fmax(x, y); };
  else if (op == "minimum")
    f = [](R x, R y) { return std::isnan(x) || std::isnan(y) ? x + y : std::fmin(x, y); };
  else
    EMBER_FAIL("binary_reference: no reference for the op ", op);
  reference::check_dtype(a, op);
  reference::check_dtype(b, op);
  ResultTypeState types;
  types.update(a);
  types.update(b);
  const reference::Values x = reference::read(a, op), y = reference::read(b, op);

  // The broadcast shape: dims aligned from the right, a size-1 dim stretches.
  const int64_t n = std::max(x.dim(), y.dim());
  std::vector<int64_t> sizes(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    const int64_t sx = d - (n - x.dim()) >= 0 ? x.size(d - (n - x.dim())) : 1;
    const int64_t sy = d - (n - y.dim()) >= 0 ? y.size(d - (n - y.dim())) : 1;
    EMBER_CHECK(sx == sy || sx == 1 || sy == 1, op, ": shapes ", IntArrayRef(x.sizes), " and ", IntArrayRef(y.sizes),
                " do not broadcast (dim ", d, ": ", sx, " vs ", sy, ")");
    sizes[static_cast<size_t>(d)] = sx == 1 ? sy : sx;
  }
  // Element `k` of an input for the output multi-index `idx`: its broadcast dims read index 0.
  auto element = [&](const reference::Values& in, const std::vector<int64_t>& idx) {
    int64_t k = 0;
    for (int64_t d = 0; d < in.dim(); ++d) {
      const int64_t i = idx[static_cast<size_t>(d + n - in.dim())];
      k = k * in.size(d) + (in.size(d) == 1 ? 0 : i);
    }
    return in.v[static_cast<size_t>(k)];
  };
  std::vector<double> out(static_cast<size_t>(reference::numel_of(sizes)));
  std::vector<int64_t> idx(static_cast<size_t>(n), 0);
  for (double& o : out) {
    o = static_cast<double>(f(element(x, idx), element(y, idx)));
    for (int64_t d = n - 1; d >= 0; --d) {  // the next row-major index
      if (++idx[static_cast<size_t>(d)] < sizes[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return reference::write(sizes, out, types.result());
}

}  // namespace ember::cpu
