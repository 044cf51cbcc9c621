// ember::nn::init: filling parameters in place, as torch.nn.init.
//
//   ember::nn::init::kaiming_uniform_(linear->weight, std::sqrt(5.0));
//   ember::nn::init::zeros_(linear->bias);
//
// Every function writes into the tensor's own memory with gradient recording
// off (so it works on parameters that require grad), draws from `generator`
// or, when null, from ember's default generator, and returns the tensor.
// Formulas and defaults are PyTorch's; the random streams are ember's
// (Philox), so the values differ from PyTorch's for the same seed.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember::nn::init {

// The recommended gain for a nonlinearity: "linear", "conv1d", "conv2d",
// "conv3d", "conv_transpose1d/2d/3d", "sigmoid" -> 1; "tanh" -> 5/3;
// "relu" -> sqrt(2); "leaky_relu" -> sqrt(2 / (1 + slope^2)) with
// slope = param (default 0.01); "selu" -> 3/4. Anything else is an error.
double calculate_gain(std::string_view nonlinearity, std::optional<double> param = std::nullopt);

// (fan_in, fan_out) of a weight with at least 2 dims: size(1) * field and
// size(0) * field, where field is the product of the dims after the first two
// (a conv's kernel size). Linear (out, in): (in, out).
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

// Uniform in [a, b).
Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0, Generator* generator = nullptr);
// Normal with the given mean and standard deviation.
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0, Generator* generator = nullptr);
Tensor constant_(Tensor tensor, const Scalar& value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);

// He et al. (2015): std = gain / sqrt(fan) with gain = calculate_gain(nonlinearity, a)
// and fan = fan_in or fan_out (`mode`: "fan_in" | "fan_out").
// kaiming_uniform_ draws from U(-bound, bound), bound = sqrt(3) * std.
// With a = sqrt(5) this is the default init of Linear and Conv weights:
// bound = 1 / sqrt(fan_in).
Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, std::string_view mode = "fan_in",
                        std::string_view nonlinearity = "leaky_relu", Generator* generator = nullptr);
Tensor kaiming_normal_(Tensor tensor, double a = 0.0, std::string_view mode = "fan_in",
                       std::string_view nonlinearity = "leaky_relu", Generator* generator = nullptr);

// Glorot and Bengio (2010): std = gain * sqrt(2 / (fan_in + fan_out));
// xavier_uniform_ draws from U(-sqrt(3) std, sqrt(3) std).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0, Generator* generator = nullptr);
Tensor xavier_normal_(Tensor tensor, double gain = 1.0, Generator* generator = nullptr);

// Normal(mean, std) restricted to [a, b] (by inverting the normal CDF over
// [cdf(a), cdf(b)], so no value is redrawn). Requires a < b.
Tensor trunc_normal_(Tensor tensor, double mean = 0.0, double std = 1.0, double a = -2.0, double b = 2.0,
                     Generator* generator = nullptr);

}  // namespace ember::nn::init
