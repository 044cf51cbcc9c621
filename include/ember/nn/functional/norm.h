// ember::nn::functional normalisations and softmax, as torch.nn.functional:
//
//   namespace F = ember::nn::functional;
//   Tensor p = F::softmax(logits, -1);                         // rows sum to 1
//   Tensor h = F::layer_norm(x, {1024}, gamma, beta);          // x: (*, 1024)
//   Tensor y = F::batch_norm(x, running_mean, running_var, gamma, beta, /*training=*/true);
//   Tensor z = F::layer_norm(x, F::LayerNormFuncOptions({1024}).weight(gamma).bias(beta));   // libtorch's form
//
// Each takes a floating-point input (float32, float64, float16, bfloat16),
// returns a new tensor of the input's shape and dtype (softmax: of `dtype`
// when given), and is twice differentiable. Statistics are computed in float32 for f16/bf16 and float32 inputs,
// in float64 for float64 inputs. Results do not depend on the thread count.
// Bad arguments raise an ember::Error naming the op and the shapes.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ember/nn/functional/options_support.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// exp(x) / sum(exp(x)) along `dim`, shifted by the max so it never overflows;
// a row of all -inf gives NaN, as in PyTorch. `dtype`: cast the input first.
Tensor softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype = std::nullopt);
// x - max - log(sum(exp(x - max))) along `dim`.
Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<DType> dtype = std::nullopt);

// (x - mean) / sqrt(var + eps) * weight + bias over the trailing dims
// `normalized_shape` (var biased); weight and bias have that shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// x / sqrt(mean(x^2) + eps) * weight over the trailing dims `normalized_shape`
// (torch >= 2.4). eps nullopt: the machine epsilon of the input's dtype.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);

// Input (N, C, *): each sample's C channels split into `num_groups` groups,
// each normalised over its channels and spatial dims; weight, bias (C).
// C must be divisible by num_groups.
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);

// Input (N, C), (N, C, L) or (N, C, H, W), normalised per channel. training:
// with the batch's mean and biased variance, and running_mean/running_var
// (when given) updated in place: r = (1 - momentum) r + momentum * batch stat,
// with the unbiased variance; needs more than one value per channel.
// Evaluation: with running_mean/running_var (both required).
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, bool training = false, double momentum = 0.1,
                  double eps = 1e-5);

// ---- libtorch's options forms (Note [Options forms] in options_support.h) ----

class SoftmaxFuncOptions {
 public:
  explicit SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  SoftmaxFuncOptions& dim(int64_t v) {
    dim_ = v;
    return *this;
  }
  SoftmaxFuncOptions& dtype(std::optional<DType> v) {
    dtype_ = v;
    return *this;
  }
  int64_t dim() const { return dim_; }
  std::optional<DType> dtype() const { return dtype_; }

 private:
  int64_t dim_;
  std::optional<DType> dtype_;
};

using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

class LayerNormFuncOptions {
 public:
  explicit LayerNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  LayerNormFuncOptions& weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }
  LayerNormFuncOptions& bias(Tensor v) {
    bias_ = std::move(v);
    return *this;
  }
  LayerNormFuncOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  double eps() const { return eps_; }

 private:
  std::vector<int64_t> normalized_shape_;
  Tensor weight_, bias_;
  double eps_ = 1e-5;
};

// Not in libtorch (which has no functional rms_norm); named in its manner.
class RMSNormFuncOptions {
 public:
  explicit RMSNormFuncOptions(std::vector<int64_t> normalized_shape)
      : normalized_shape_(std::move(normalized_shape)) {}
  RMSNormFuncOptions& weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }
  RMSNormFuncOptions& eps(std::optional<double> v) {
    eps_ = v;
    return *this;
  }
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  const Tensor& weight() const { return weight_; }
  std::optional<double> eps() const { return eps_; }

 private:
  std::vector<int64_t> normalized_shape_;
  Tensor weight_;
  std::optional<double> eps_;
};

class GroupNormFuncOptions {
 public:
  explicit GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}
  GroupNormFuncOptions& weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }
  GroupNormFuncOptions& bias(Tensor v) {
    bias_ = std::move(v);
    return *this;
  }
  GroupNormFuncOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  int64_t num_groups() const { return num_groups_; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  double eps() const { return eps_; }

 private:
  int64_t num_groups_;
  Tensor weight_, bias_;
  double eps_ = 1e-5;
};

// momentum is a number (PyTorch's momentum=None, a cumulative average, is
// not offered by the function; the BatchNorm layers have it).
class BatchNormFuncOptions {
 public:
  BatchNormFuncOptions& weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }
  BatchNormFuncOptions& bias(Tensor v) {
    bias_ = std::move(v);
    return *this;
  }
  BatchNormFuncOptions& training(bool v) {
    training_ = v;
    return *this;
  }
  BatchNormFuncOptions& momentum(double v) {
    momentum_ = v;
    return *this;
  }
  BatchNormFuncOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  bool training() const { return training_; }
  double momentum() const { return momentum_; }
  double eps() const { return eps_; }

 private:
  Tensor weight_, bias_;
  bool training_ = false;
  double momentum_ = 0.1;
  double eps_ = 1e-5;
};

template <std::same_as<SoftmaxFuncOptions> Options>
Tensor softmax(const Tensor& input, const Options& options) {
  return functional::softmax(input, options.dim(), options.dtype());
}
template <std::same_as<SoftmaxFuncOptions> Options>
Tensor log_softmax(const Tensor& input, const Options& options) {
  return functional::log_softmax(input, options.dim(), options.dtype());
}
template <std::same_as<LayerNormFuncOptions> Options>
Tensor layer_norm(const Tensor& input, const Options& options) {
  return functional::layer_norm(input, options.normalized_shape(), nn::detail::optional_tensor(options.weight()),
                                nn::detail::optional_tensor(options.bias()), options.eps());
}
template <std::same_as<RMSNormFuncOptions> Options>
Tensor rms_norm(const Tensor& input, const Options& options) {
  return functional::rms_norm(input, options.normalized_shape(), nn::detail::optional_tensor(options.weight()),
                              options.eps());
}
template <std::same_as<GroupNormFuncOptions> Options>
Tensor group_norm(const Tensor& input, const Options& options) {
  return functional::group_norm(input, options.num_groups(), nn::detail::optional_tensor(options.weight()),
                                nn::detail::optional_tensor(options.bias()), options.eps());
}
// running_mean and running_var as libtorch passes them: tensors, undefined when absent.
template <std::same_as<BatchNormFuncOptions> Options>
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Options& options) {
  return functional::batch_norm(input, nn::detail::optional_tensor(running_mean),
                                nn::detail::optional_tensor(running_var), nn::detail::optional_tensor(options.weight()),
                                nn::detail::optional_tensor(options.bias()), options.training(), options.momentum(),
                                options.eps());
}

}  // namespace ember::nn::functional
