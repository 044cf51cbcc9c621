// The options of the losses, shared by the loss layers
// (ember/nn/modules/loss.h) and the functions (ember/nn/functional/loss.h,
// where F::CrossEntropyFuncOptions and friends name them), as libtorch's
// torch/nn/options. `reduction` is "mean" (default), "sum" or "none".
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "ember/tensor.h"

namespace ember::nn {

// Setters shared by every loss's options: `reduction`.
template <class Derived>
class LossOptions {
 public:
  Derived& reduction(std::string v) {
    reduction_ = std::move(v);
    return static_cast<Derived&>(*this);
  }
  const std::string& reduction() const { return reduction_; }

 private:
  std::string reduction_ = "mean";
};

class CrossEntropyLossOptions : public LossOptions<CrossEntropyLossOptions> {
 public:
  // Rescales each class's loss: a (C) tensor.
  CrossEntropyLossOptions& weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }
  // Targets with this class index add nothing (default -100).
  CrossEntropyLossOptions& ignore_index(int64_t v) {
    ignore_index_ = v;
    return *this;
  }
  // In [0, 1]: mixes the one-hot target with the uniform distribution.
  CrossEntropyLossOptions& label_smoothing(double v) {
    label_smoothing_ = v;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }
  double label_smoothing() const { return label_smoothing_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
  double label_smoothing_ = 0.0;
};

class NLLLossOptions : public LossOptions<NLLLossOptions> {
 public:
  NLLLossOptions& weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }
  NLLLossOptions& ignore_index(int64_t v) {
    ignore_index_ = v;
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
};

class BCEWithLogitsLossOptions : public LossOptions<BCEWithLogitsLossOptions> {
 public:
  // Rescales each element's loss (broadcast against the input).
  BCEWithLogitsLossOptions& weight(Tensor v) {
    weight_ = std::move(v);
    return *this;
  }
  // Weight of the positive examples, one per class (last dim).
  BCEWithLogitsLossOptions& pos_weight(Tensor v) {
    pos_weight_ = std::move(v);
    return *this;
  }
  const Tensor& weight() const { return weight_; }
  const Tensor& pos_weight() const { return pos_weight_; }

 private:
  Tensor weight_, pos_weight_;
};

class KLDivLossOptions : public LossOptions<KLDivLossOptions> {
 public:
  KLDivLossOptions() = default;
  // libtorch's KLDivLossOptions(torch::kSum).
  explicit KLDivLossOptions(std::string reduction) { this->reduction(std::move(reduction)); }
  // Whether the target is given as log-probabilities too.
  KLDivLossOptions& log_target(bool v) {
    log_target_ = v;
    return *this;
  }
  bool log_target() const { return log_target_; }

 private:
  bool log_target_ = false;
};

class MSELossOptions : public LossOptions<MSELossOptions> {
 public:
  MSELossOptions() = default;
  // libtorch's MSELossOptions(torch::kSum).
  explicit MSELossOptions(std::string reduction) { this->reduction(std::move(reduction)); }
};

class L1LossOptions : public LossOptions<L1LossOptions> {
 public:
  L1LossOptions() = default;
  // libtorch's L1LossOptions(torch::kSum).
  explicit L1LossOptions(std::string reduction) { this->reduction(std::move(reduction)); }
};

class SmoothL1LossOptions : public LossOptions<SmoothL1LossOptions> {
 public:
  SmoothL1LossOptions() = default;
  // libtorch's SmoothL1LossOptions(torch::kSum).
  explicit SmoothL1LossOptions(std::string reduction) { this->reduction(std::move(reduction)); }
  // Where the loss turns from quadratic to linear (default 1; 0 gives the L1 loss).
  SmoothL1LossOptions& beta(double v) {
    beta_ = v;
    return *this;
  }
  double beta() const { return beta_; }

 private:
  double beta_ = 1.0;
};

}  // namespace ember::nn
