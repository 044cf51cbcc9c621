// ember::nn::functional — losses, embedding, dropout, linear (as in
// torch.nn.functional, PyTorch 1.13 semantics).
//
//   namespace F = ember::nn::functional;
//   Tensor loss = F::cross_entropy(logits, labels);               // (N, C) logits, (N) int64 labels
//   Tensor h = F::dropout(F::embedding(ids, table), 0.1, training);
//   Tensor s = F::cross_entropy(logits, labels, F::CrossEntropyFuncOptions().label_smoothing(0.1));  // libtorch's form
//
// `reduction` is "none", "mean" (the default) or "sum"; anything else is an
// ember::Error. Where a loss compares an input with a target of the same
// kind (mse, l1, smooth_l1, bce_with_logits, kl_div) the shapes must be
// equal: unlike PyTorch, which warns and broadcasts, ember refuses.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ember/generator.h"
#include "ember/nn/functional/options_support.h"
#include "ember/nn/functional/strict_args.h"
#include "ember/nn/options/loss.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

// Cross entropy of logits `input` (N, C), (N, C, d1, ...) or unbatched (C).
// `target` is either class indices (int64, (N), (N, d1, ...) or 0-d) or class
// probabilities (floating, the input's shape). `weight` (C) rescales each
// class; targets equal to `ignore_index` add nothing (class-index mode only).
// With weights, "mean" divides by the summed weights of the counted targets.
// `label_smoothing` in [0, 1] mixes the target with the uniform distribution.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                     int64_t ignore_index = -100, std::string_view reduction = "mean", double label_smoothing = 0.0);

// Negative log-likelihood of log-probabilities `input` (N, C), (N, C, d...)
// or (C) at int64 class indices `target`; weight and ignore_index as above.
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                int64_t ignore_index = -100, std::string_view reduction = "mean");

// (input - target)^2, in one pass; target of the input's shape and dtype.
Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
// |input - target|.
Tensor l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean");
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target);
// beta = 0 is the l1 loss. beta >= 0.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction = "mean",
                      double beta = 1.0);
// Binary cross entropy of logits, in the stable form
// (1 - y) x + (1 + (pos_weight - 1) y) (log1p(exp(-|x|)) + max(-x, 0)), times
// `weight`; both weights broadcast against the input (pos_weight along the
// last dim, one per class).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = std::nullopt,
                                        std::string_view reduction = "mean",
                                        const std::optional<Tensor>& pos_weight = std::nullopt);
// Kullback-Leibler divergence with `input` log-probabilities:
// target (log target - input), or exp(target) (target - input) with
// log_target. reduction may also be "batchmean" (the sum over the batch size
// input.size(0)), which is the mathematically right one.
Tensor kl_div(const Tensor& input, const Tensor& target, std::string_view reduction = "mean",
              bool log_target = false);

// Rows of `weight` (num_embeddings, dim) picked by the int64/int32 `input`
// ids: (input..., dim). The row `padding_idx` (negative counts from the end)
// gets no gradient. Ids must be in [0, num_embeddings).
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt);

// Zeroes each element with probability p and scales the rest by 1 / (1 - p)
// when `training`; otherwise returns the input. The mask comes from
// `generator` (the default generator when null): the same seed gives the same
// mask, for any thread count. p must be in [0, 1]. p takes only a float or
// double and training only a bool (strict_args.h): F::dropout(x, training)
// does not compile instead of making `training` the probability.
Tensor dropout(const Tensor& input, Probability p = 0.5, Flag training = true, Generator* generator = nullptr);

// input @ weight^T + bias (ember::linear).
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);

// ---- libtorch's options forms (Note [Options forms] in options_support.h) ----

using CrossEntropyFuncOptions = nn::CrossEntropyLossOptions;
using NLLLossFuncOptions = nn::NLLLossOptions;
using MSELossFuncOptions = nn::MSELossOptions;
using L1LossFuncOptions = nn::L1LossOptions;
using SmoothL1LossFuncOptions = nn::SmoothL1LossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = nn::BCEWithLogitsLossOptions;
using KLDivFuncOptions = nn::KLDivLossOptions;

class EmbeddingFuncOptions {
 public:
  EmbeddingFuncOptions& padding_idx(std::optional<int64_t> v) {
    padding_idx_ = v;
    return *this;
  }
  std::optional<int64_t> padding_idx() const { return padding_idx_; }

 private:
  std::optional<int64_t> padding_idx_;
};

class DropoutFuncOptions {
 public:
  DropoutFuncOptions& p(double v) {
    p_ = v;
    return *this;
  }
  DropoutFuncOptions& training(bool v) {
    training_ = v;
    return *this;
  }
  double p() const { return p_; }
  bool training() const { return training_; }

 private:
  double p_ = 0.5;
  bool training_ = true;
};

template <std::same_as<CrossEntropyFuncOptions> Options>
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Options& options) {
  return functional::cross_entropy(input, target, nn::detail::optional_tensor(options.weight()), options.ignore_index(),
                                   options.reduction(), options.label_smoothing());
}
template <std::same_as<NLLLossFuncOptions> Options>
Tensor nll_loss(const Tensor& input, const Tensor& target, const Options& options) {
  return functional::nll_loss(input, target, nn::detail::optional_tensor(options.weight()), options.ignore_index(),
                              options.reduction());
}
template <std::same_as<MSELossFuncOptions> Options>
Tensor mse_loss(const Tensor& input, const Tensor& target, const Options& options) {
  return functional::mse_loss(input, target, options.reduction());
}
template <std::same_as<L1LossFuncOptions> Options>
Tensor l1_loss(const Tensor& input, const Tensor& target, const Options& options) {
  return functional::l1_loss(input, target, options.reduction());
}
template <std::same_as<SmoothL1LossFuncOptions> Options>
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const Options& options) {
  return functional::smooth_l1_loss(input, target, options.reduction(), options.beta());
}
template <std::same_as<BinaryCrossEntropyWithLogitsFuncOptions> Options>
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Options& options) {
  return functional::binary_cross_entropy_with_logits(input, target, nn::detail::optional_tensor(options.weight()),
                                                      options.reduction(),
                                                      nn::detail::optional_tensor(options.pos_weight()));
}
template <std::same_as<KLDivFuncOptions> Options>
Tensor kl_div(const Tensor& input, const Tensor& target, const Options& options) {
  return functional::kl_div(input, target, options.reduction(), options.log_target());
}
template <std::same_as<EmbeddingFuncOptions> Options>
Tensor embedding(const Tensor& input, const Tensor& weight, const Options& options) {
  return functional::embedding(input, weight, options.padding_idx());
}
template <std::same_as<DropoutFuncOptions> Options>
Tensor dropout(const Tensor& input, const Options& options) {
  return functional::dropout(input, options.p(), options.training());
}

}  // namespace ember::nn::functional
