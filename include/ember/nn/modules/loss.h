// ember::nn loss modules, as torch.nn: forward(input, target) calls the
// F:: function of the same name (ember/nn/functional/loss.h) with the
// module's options.
//
//   ember::nn::CrossEntropyLoss criterion(ember::nn::CrossEntropyLossOptions().label_smoothing(0.1));
//   ember::Tensor loss = criterion(logits, labels);   // (N, C) float, (N) int64 -> 0-d
//
// `reduction` is "mean" (default), "sum" or "none". Class weights and
// pos_weight are registered as buffers named "weight" and "pos_weight" (as
// PyTorch does), so they follow to() and appear in state_dict().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ember/nn/module.h"

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

// ---- classification ----

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

// Softmax cross entropy of logits (N, C) (or (N, C, d...), or (C)) against
// class indices or class probabilities.
class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  const CrossEntropyLossOptions options;
  Tensor& weight;  // buffer; undefined without class weights
};
EMBER_MODULE(CrossEntropyLoss);

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

// Negative log-likelihood of log-probabilities (pair it with LogSoftmax).
class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  const NLLLossOptions options;
  Tensor& weight;  // buffer; undefined without class weights
};
EMBER_MODULE(NLLLoss);

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

// Binary cross entropy of logits against targets in [0, 1], in the stable form.
class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  const BCEWithLogitsLossOptions options;
  Tensor& weight;      // buffer; undefined when not given
  Tensor& pos_weight;  // buffer; undefined when not given
};
EMBER_MODULE(BCEWithLogitsLoss);

class KLDivLossOptions : public LossOptions<KLDivLossOptions> {
 public:
  // Whether the target is given as log-probabilities too.
  KLDivLossOptions& log_target(bool v) {
    log_target_ = v;
    return *this;
  }
  bool log_target() const { return log_target_; }

 private:
  bool log_target_ = false;
};

// KL(target || input) with `input` log-probabilities; reduction may also be
// "batchmean" (the mathematically right one; "mean" averages over elements).
class KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options = {}) : Module("KLDivLoss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);

  const KLDivLossOptions options;
};
EMBER_MODULE(KLDivLoss);

// ---- regression ----

class MSELossOptions : public LossOptions<MSELossOptions> {};

// (input - target)^2
class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : Module("MSELoss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);

  const MSELossOptions options;
};
EMBER_MODULE(MSELoss);

class L1LossOptions : public LossOptions<L1LossOptions> {};

// |input - target|
class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : Module("L1Loss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);

  const L1LossOptions options;
};
EMBER_MODULE(L1Loss);

class SmoothL1LossOptions : public LossOptions<SmoothL1LossOptions> {
 public:
  // Where the loss turns from quadratic to linear (default 1; 0 gives the L1 loss).
  SmoothL1LossOptions& beta(double v) {
    beta_ = v;
    return *this;
  }
  double beta() const { return beta_; }

 private:
  double beta_ = 1.0;
};

// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target).
class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {}) : Module("SmoothL1Loss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);

  const SmoothL1LossOptions options;
};
EMBER_MODULE(SmoothL1Loss);

}  // namespace ember::nn
