// ember::nn normalisation layers, as torch.nn: BatchNorm1d, BatchNorm2d,
// LayerNorm, GroupNorm, RMSNorm.
//
//   namespace nn = ember::nn;
//   nn::BatchNorm2d bn(32);                                   // x (N, 32, H, W)
//   nn::BatchNorm1d bn1(nn::BatchNorm1dOptions(64).momentum(std::nullopt));   // cumulative average
//   nn::LayerNorm ln(nn::LayerNormOptions({256}).eps(1e-6));  // over the last dim of (*, 256)
//   nn::GroupNorm gn(8, 32);                                  // 8 groups of 4 channels
//
// State, as PyTorch names it: "weight" (ones) and "bias" (zeros) when affine;
// BatchNorm's buffers "running_mean" (zeros), "running_var" (ones) and
// "num_batches_tracked" (int64, 0-d) when track_running_stats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "ember/nn/module.h"

namespace ember::nn {

class BatchNormOptions {
 public:
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT: BatchNorm2d(32)

  BatchNormOptions& eps(double v) { return set(eps_, v); }
  // The weight of the new batch in the running statistics; nullopt: a cumulative
  // moving average (weight 1 / num_batches_tracked), as PyTorch's momentum=None.
  BatchNormOptions& momentum(std::optional<double> v) { return set(momentum_, v); }
  // Learnable per-channel weight and bias.
  BatchNormOptions& affine(bool v) { return set(affine_, v); }
  // Keep running statistics (and use them in eval mode); without them the layer
  // normalises with the batch's statistics in eval mode too.
  BatchNormOptions& track_running_stats(bool v) { return set(track_running_stats_, v); }

  int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  std::optional<double> momentum() const { return momentum_; }
  bool affine() const { return affine_; }
  bool track_running_stats() const { return track_running_stats_; }

 private:
  template <class T>
  BatchNormOptions& set(T& field, T value) {
    field = value;
    return *this;
  }
  int64_t num_features_;
  double eps_ = 1e-5;
  std::optional<double> momentum_ = 0.1;
  bool affine_ = true;
  bool track_running_stats_ = true;
};
// libtorch's names for the options of each layer.
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

// The layer behind BatchNorm1d (D = 1: input (N, C) or (N, C, L)) and
// BatchNorm2d (D = 2: input (N, C, H, W)); instantiated in nn/modules_norm.cpp.
// Training mode: normalises with the batch's mean and biased variance, adds 1
// to num_batches_tracked and moves the running statistics toward the batch's
// (the variance unbiased). Eval mode: normalises with the running statistics.
template <size_t D>
class BatchNormNdImpl : public Module {
 public:
  explicit BatchNormNdImpl(BatchNormOptions options);

  Tensor forward(const Tensor& input);
  // running_mean = 0, running_var = 1, num_batches_tracked = 0.
  void reset_running_stats();
  // reset_running_stats(), and weight = 1, bias = 0.
  void reset_parameters();
  // "BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)"
  void pretty_print(std::ostream& os) const override;

  const BatchNormOptions options;
  Tensor& weight;  // (C), undefined without affine
  Tensor& bias;
  Tensor& running_mean;  // (C), undefined without track_running_stats
  Tensor& running_var;
  Tensor& num_batches_tracked;  // int64, 0-d
};

class BatchNorm1dImpl : public BatchNormNdImpl<1> {
 public:
  using BatchNormNdImpl<1>::BatchNormNdImpl;
};
class BatchNorm2dImpl : public BatchNormNdImpl<2> {
 public:
  using BatchNormNdImpl<2>::BatchNormNdImpl;
};
EMBER_MODULE(BatchNorm1d);
EMBER_MODULE(BatchNorm2d);

class LayerNormOptions {
 public:
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT

  LayerNormOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  // Learnable weight (ones) and, with bias, bias (zeros), of normalized_shape.
  LayerNormOptions& elementwise_affine(bool v) {
    elementwise_affine_ = v;
    return *this;
  }
  LayerNormOptions& bias(bool v) {
    bias_ = v;
    return *this;
  }

  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }
  bool elementwise_affine() const { return elementwise_affine_; }
  bool bias() const { return bias_; }

 private:
  std::vector<int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
  bool bias_ = true;
};

// Normalises over the trailing dims normalized_shape of (*, normalized_shape).
class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(LayerNormOptions options);

  Tensor forward(const Tensor& input);
  void reset_parameters();
  // "LayerNorm([256], eps=1e-05, elementwise_affine=true)"
  void pretty_print(std::ostream& os) const override;

  const LayerNormOptions options;
  Tensor& weight;  // normalized_shape, undefined without elementwise_affine
  Tensor& bias;    // undefined without elementwise_affine or bias
};
EMBER_MODULE(LayerNorm);

class GroupNormOptions {
 public:
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}

  GroupNormOptions& eps(double v) {
    eps_ = v;
    return *this;
  }
  GroupNormOptions& affine(bool v) {
    affine_ = v;
    return *this;
  }

  int64_t num_groups() const { return num_groups_; }
  int64_t num_channels() const { return num_channels_; }
  double eps() const { return eps_; }
  bool affine() const { return affine_; }

 private:
  int64_t num_groups_, num_channels_;
  double eps_ = 1e-5;
  bool affine_ = true;
};

// Input (N, C, *): each sample's channels in num_groups groups, each normalised
// over its channels and positions; then a per-channel weight and bias.
class GroupNormImpl : public Module {
 public:
  explicit GroupNormImpl(GroupNormOptions options);
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}

  Tensor forward(const Tensor& input);
  void reset_parameters();
  // "GroupNorm(8, 32, eps=1e-05, affine=true)"
  void pretty_print(std::ostream& os) const override;

  const GroupNormOptions options;
  Tensor& weight;  // (C), undefined without affine
  Tensor& bias;
};
EMBER_MODULE(GroupNorm);

class RMSNormOptions {
 public:
  RMSNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT

  // nullopt (default): the machine epsilon of the input's dtype, as PyTorch.
  RMSNormOptions& eps(std::optional<double> v) {
    eps_ = v;
    return *this;
  }
  RMSNormOptions& elementwise_affine(bool v) {
    elementwise_affine_ = v;
    return *this;
  }

  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  std::optional<double> eps() const { return eps_; }
  bool elementwise_affine() const { return elementwise_affine_; }

 private:
  std::vector<int64_t> normalized_shape_;
  std::optional<double> eps_;
  bool elementwise_affine_ = true;
};

// x / sqrt(mean(x^2) + eps) * weight over the trailing dims normalized_shape (torch >= 2.4).
class RMSNormImpl : public Module {
 public:
  explicit RMSNormImpl(RMSNormOptions options);

  Tensor forward(const Tensor& input);
  void reset_parameters();
  // "RMSNorm([256], eps=None, elementwise_affine=true)"
  void pretty_print(std::ostream& os) const override;

  const RMSNormOptions options;
  Tensor& weight;  // normalized_shape, undefined without elementwise_affine
};
EMBER_MODULE(RMSNorm);

}  // namespace ember::nn
