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
#include "ember/nn/options/loss.h"

namespace ember::nn {

// ---- classification ----

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

// Negative log-likelihood of log-probabilities (pair it with LogSoftmax).
class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  const NLLLossOptions options;
  Tensor& weight;  // buffer; undefined without class weights
};
EMBER_MODULE(NLLLoss);

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

// (input - target)^2
class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : Module("MSELoss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);

  const MSELossOptions options;
};
EMBER_MODULE(MSELoss);

// |input - target|
class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : Module("L1Loss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);

  const L1LossOptions options;
};
EMBER_MODULE(L1Loss);

// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target).
class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {}) : Module("SmoothL1Loss"), options(options) {}
  Tensor forward(const Tensor& input, const Tensor& target);

  const SmoothL1LossOptions options;
};
EMBER_MODULE(SmoothL1Loss);

}  // namespace ember::nn
