// nn::init: in-place parameter initialisation with PyTorch's formulas.
#include "ember/nn/init.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::nn::init {

double calculate_gain(std::string_view nonlinearity, std::optional<double> param) {
  if (nonlinearity == "linear" || nonlinearity == "conv1d" || nonlinearity == "conv2d" || nonlinearity == "conv3d" ||
      nonlinearity == "conv_transpose1d" || nonlinearity == "conv_transpose2d" ||
      nonlinearity == "conv_transpose3d" || nonlinearity == "sigmoid") {
    return 1.0;
  }
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") {
    const double slope = param.value_or(0.01);
    return std::sqrt(2.0 / (1.0 + slope * slope));
  }
  if (nonlinearity == "selu") return 0.75;
  EMBER_FAIL("calculate_gain: unknown nonlinearity '", nonlinearity,
             "' (expected linear, conv1d/2d/3d, conv_transpose1d/2d/3d, sigmoid, tanh, relu, leaky_relu or selu)");
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK(tensor.defined() && tensor.dim() >= 2,
              "calculate_fan_in_and_fan_out: needs a tensor with at least 2 dims, got ",
              tensor.defined() ? tensor.sizes() : IntArrayRef());
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

namespace {
double fan_for(const Tensor& tensor, std::string_view mode, const char* op) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  EMBER_CHECK(mode == "fan_in" || mode == "fan_out", op, ": mode must be 'fan_in' or 'fan_out', got '", mode, "'");
  const int64_t fan = mode == "fan_in" ? fan_in : fan_out;
  EMBER_CHECK(fan > 0, op, ": the ", mode, " of a tensor of shape ", tensor.sizes(), " is 0");
  return static_cast<double>(fan);
}

double kaiming_std(const Tensor& tensor, double a, std::string_view mode, std::string_view nonlinearity,
                   const char* op) {
  return calculate_gain(nonlinearity, a) / std::sqrt(fan_for(tensor, mode, op));
}

double xavier_std(const Tensor& tensor, double gain) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

// erf^-1(y) for y in (-1, 1): Winitzki's closed-form estimate, then Newton
// steps on erf(x) - y, which converge to double precision in three steps.
double erfinv(double y) {
  if (y <= -1.0) return -std::numeric_limits<double>::infinity();
  if (y >= 1.0) return std::numeric_limits<double>::infinity();
  constexpr double a = 0.147;
  const double log_term = std::log((1.0 - y) * (1.0 + y));
  const double first = 2.0 / (std::numbers::pi * a) + log_term / 2.0;
  double x = std::copysign(std::sqrt(std::sqrt(first * first - log_term / a) - first), y);
  for (int step = 0; step < 3; ++step) {
    const double slope = 2.0 / std::sqrt(std::numbers::pi) * std::exp(-x * x);
    x -= (std::erf(x) - y) / slope;
  }
  return x;
}
}  // namespace

Tensor uniform_(Tensor tensor, double a, double b, Generator* generator) {
  NoGradGuard no_grad;
  ember::uniform_(tensor, a, b, generator);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std, Generator* generator) {
  NoGradGuard no_grad;
  ember::normal_(tensor, mean, std, generator);
  return tensor;
}

Tensor constant_(Tensor tensor, const Scalar& value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor kaiming_uniform_(Tensor tensor, double a, std::string_view mode, std::string_view nonlinearity,
                        Generator* generator) {
  const double bound = std::sqrt(3.0) * kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_");
  return uniform_(std::move(tensor), -bound, bound, generator);
}

Tensor kaiming_normal_(Tensor tensor, double a, std::string_view mode, std::string_view nonlinearity,
                       Generator* generator) {
  const double std = kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_");
  return normal_(std::move(tensor), 0.0, std, generator);
}

Tensor xavier_uniform_(Tensor tensor, double gain, Generator* generator) {
  const double bound = std::sqrt(3.0) * xavier_std(tensor, gain);
  return uniform_(std::move(tensor), -bound, bound, generator);
}

Tensor xavier_normal_(Tensor tensor, double gain, Generator* generator) {
  const double std = xavier_std(tensor, gain);
  return normal_(std::move(tensor), 0.0, std, generator);
}

Tensor trunc_normal_(Tensor tensor, double mean, double std, double a, double b, Generator* generator) {
  EMBER_CHECK(a < b, "trunc_normal_: expected a < b, got a = ", a, ", b = ", b);
  EMBER_CHECK(std > 0, "trunc_normal_: expected std > 0, got ", std);
  const auto normal_cdf = [](double x) { return 0.5 * (1.0 + std::erf(x / std::numbers::sqrt2)); };
  const double low = normal_cdf((a - mean) / std);
  const double high = normal_cdf((b - mean) / std);
  // u uniform in [2 cdf(a) - 1, 2 cdf(b) - 1]; mean + std sqrt(2) erfinv(u) then
  // has the truncated normal distribution. erfinv runs on the host: init is
  // not on any hot path.
  Tensor u = empty(tensor.sizes(), DType::Float64);
  ember::uniform_(u, 2.0 * low - 1.0, 2.0 * high - 1.0, generator);
  double* p = u.data_ptr<double>();
  for (int64_t i = 0; i < u.numel(); ++i) {
    p[i] = std::clamp(mean + std * std::numbers::sqrt2 * erfinv(p[i]), a, b);
  }
  NoGradGuard no_grad;
  tensor.copy_(u);
  return tensor;
}

}  // namespace ember::nn::init
