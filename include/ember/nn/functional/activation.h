// ember::nn::functional activations, as torch.nn.functional. Each takes a
// floating-point tensor (float32, float64, float16, bfloat16), returns a new
// tensor of the same shape and dtype (glu: half the size along `dim`), and is
// differentiable twice.
//
//   namespace F = ember::nn::functional;
//   Tensor a = F::leaky_relu(x, 0.2);                                      // Python's argument order
//   Tensor b = F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2));   // libtorch's options
//   Tensor c = F::gelu(x, F::GELUFuncOptions().approximate("tanh"));
//
// leaky_relu, elu, hardswish, hardsigmoid, mish and log_sigmoid are ops with
// kernels of their own (gradients at the kinks follow PyTorch:
// leaky_relu'(0) = negative_slope, hardswish'(-3) = -1/2, hardswish'(3) = 3/2,
// hardsigmoid'(+-3) = 0); relu, gelu, silu, sigmoid, tanh and softplus are
// the elementwise ops of ember/ops.h; the rest are composed of ember ops
// (nn/functional_activation_composite.cpp), with PyTorch's gradients at the
// kinks (hardtanh and relu6: 0 at the bounds; threshold: 0 at x == threshold).
// No function takes libtorch's `inplace` (each returns a new tensor).
#pragma once

#include <concepts>
#include <cstdint>
#include <string_view>

#include "ember/nn/options/activation.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// ---- the options of libtorch's F:: forms ----

using GELUFuncOptions = nn::GELUOptions;
using LeakyReLUFuncOptions = nn::LeakyReLUOptions;
using ELUFuncOptions = nn::ELUOptions;
using SoftplusFuncOptions = nn::SoftplusOptions;

class HardtanhFuncOptions {
 public:
  HardtanhFuncOptions& min_val(double v) {
    min_val_ = v;
    return *this;
  }
  HardtanhFuncOptions& max_val(double v) {
    max_val_ = v;
    return *this;
  }
  double min_val() const { return min_val_; }
  double max_val() const { return max_val_; }

 private:
  double min_val_ = -1.0;
  double max_val_ = 1.0;
};

class CELUFuncOptions {
 public:
  CELUFuncOptions& alpha(double v) {
    alpha_ = v;
    return *this;
  }
  double alpha() const { return alpha_; }

 private:
  double alpha_ = 1.0;
};

class ThresholdFuncOptions {
 public:
  ThresholdFuncOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  ThresholdFuncOptions& threshold(double v) {
    threshold_ = v;
    return *this;
  }
  ThresholdFuncOptions& value(double v) {
    value_ = v;
    return *this;
  }
  double threshold() const { return threshold_; }
  double value() const { return value_; }

 private:
  double threshold_, value_;
};

class GLUFuncOptions {
 public:
  explicit GLUFuncOptions(int64_t dim = -1) : dim_(dim) {}
  GLUFuncOptions& dim(int64_t v) {
    dim_ = v;
    return *this;
  }
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
};

// ---- ops with kernels of their own ----

// x for x > 0, negative_slope * x otherwise.
Tensor leaky_relu(const Tensor& input, const Scalar& negative_slope = 0.01);
// x for x > 0, alpha * (exp(x) - 1) otherwise.
Tensor elu(const Tensor& input, const Scalar& alpha = 1.0);
// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& input);
// relu6(x + 3) / 6.
Tensor hardsigmoid(const Tensor& input);
// x * tanh(softplus(x)).
Tensor mish(const Tensor& input);
// log(sigmoid(x)), computed as min(x, 0) - log1p(exp(-|x|)) so it never overflows.
Tensor log_sigmoid(const Tensor& input);
// torch.nn.functional spells it logsigmoid.
inline Tensor logsigmoid(const Tensor& input) { return log_sigmoid(input); }

// ---- the elementwise ops of ember/ops.h ----

// max(x, 0)
Tensor relu(const Tensor& input);
// x * Phi(x); approximate "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& input, std::string_view approximate = "none");
// x * sigmoid(x)
Tensor silu(const Tensor& input);
// 1 / (1 + exp(-x))
Tensor sigmoid(const Tensor& input);
Tensor tanh(const Tensor& input);
// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold.
Tensor softplus(const Tensor& input, double beta = 1.0, double threshold = 20.0);

// ---- composites ----

// min(max(x, min_val), max_val).
Tensor hardtanh(const Tensor& input, double min_val = -1.0, double max_val = 1.0);
// min(max(x, 0), 6): hardtanh(x, 0, 6).
Tensor relu6(const Tensor& input);
// scale * elu(x, alpha) with PyTorch's constants alpha = 1.6732632423543772,
// scale = 1.0507009873554805.
Tensor selu(const Tensor& input);
// max(x, 0) + min(alpha * (exp(x / alpha) - 1), 0); alpha != 0.
Tensor celu(const Tensor& input, double alpha = 1.0);
// x / (1 + |x|)
Tensor softsign(const Tensor& input);
// x - tanh(x)
Tensor tanhshrink(const Tensor& input);
// x where x > threshold, else value.
Tensor threshold(const Tensor& input, double threshold, double value);
// a * sigmoid(b), where a and b are the halves of the input along dim (its size must be even).
Tensor glu(const Tensor& input, int64_t dim = -1);

// ---- libtorch's options forms (Note [Options forms] in options_support.h) ----

template <std::same_as<LeakyReLUFuncOptions> Options>
Tensor leaky_relu(const Tensor& input, const Options& options) {
  return functional::leaky_relu(input, options.negative_slope());
}
template <std::same_as<ELUFuncOptions> Options>
Tensor elu(const Tensor& input, const Options& options) {
  return functional::elu(input, options.alpha());
}
template <std::same_as<GELUFuncOptions> Options>
Tensor gelu(const Tensor& input, const Options& options) {
  return functional::gelu(input, options.approximate());
}
template <std::same_as<SoftplusFuncOptions> Options>
Tensor softplus(const Tensor& input, const Options& options) {
  return functional::softplus(input, options.beta(), options.threshold());
}
template <std::same_as<HardtanhFuncOptions> Options>
Tensor hardtanh(const Tensor& input, const Options& options) {
  return functional::hardtanh(input, options.min_val(), options.max_val());
}
template <std::same_as<CELUFuncOptions> Options>
Tensor celu(const Tensor& input, const Options& options) {
  return functional::celu(input, options.alpha());
}
template <std::same_as<ThresholdFuncOptions> Options>
Tensor threshold(const Tensor& input, const Options& options) {
  return functional::threshold(input, options.threshold(), options.value());
}
template <std::same_as<GLUFuncOptions> Options>
Tensor glu(const Tensor& input, const Options& options) {
  return functional::glu(input, options.dim());
}

}  // namespace ember::nn::functional
