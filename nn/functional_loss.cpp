// ember::nn::functional losses, embedding, dropout, linear
// (include/ember/nn/functional/loss.h).
//
// cross_entropy with class indices, nll_loss, mse_loss, embedding and
// dropout call their dispatched ops (core/op_decls_loss.h). The other
// elementwise losses and cross_entropy with class probabilities are
// composites of differentiable ops, so autograd derives them without
// formulas of their own.
#include "ember/nn/functional/loss.h"

#include "core/op_decls_loss.h"
#include "ember/error.h"
#include "ember/ops.h"
#include "core/loss_checks.h"

namespace ember::nn::functional {

namespace {

using loss::Reduction;

Tensor reduce(const Tensor& per_element, Reduction r) {
  switch (r) {
    case Reduction::None: return per_element;
    case Reduction::Mean: return per_element.mean();
    case Reduction::Sum: return per_element.sum();
  }
  return per_element;
}

// The elementwise losses compare tensors of one shape (PyTorch would broadcast with a warning).
void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  EMBER_CHECK(input.sizes() == target.sizes(), op, ": expected a target of the input's shape ", input.sizes(),
              ", got ", target.sizes());
  EMBER_CHECK(input.is_floating_point() && target.is_floating_point(), op,
              ": expected floating-point input and target, got ", input.dtype(), " and ", target.dtype());
}

// Class-probability targets: -(sum over classes of w_c t_c log_softmax(x)_c), mean over the other positions.
Tensor cross_entropy_probabilities(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                   int64_t ignore_index, Reduction red, double ls) {
  const char* op = "cross_entropy";
  EMBER_CHECK(input.dim() >= 1, op, ": expected an input of shape (C), (N, C) or (N, C, d1, ...), got a 0-d tensor");
  EMBER_CHECK(ignore_index < 0, op, ": ignore_index is not supported for floating-point (class probability) targets");
  EMBER_CHECK(ls >= 0.0 && ls <= 1.0, op, ": label_smoothing must be in [0, 1], got ", ls);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t C = input.size(class_dim);
  const Tensor logp = input - input.logsumexp({class_dim}, true);
  Tensor t = target.to(input.dtype());
  if (ls > 0) t = t * (1.0 - ls) + ls / static_cast<double>(C);
  Tensor terms = logp * t;
  if (weight && weight->defined()) {
    EMBER_CHECK(weight->dim() == 1 && weight->size(0) == C, op, ": expected a weight of shape [", C,
                "] (one per class), got ", weight->sizes());
    std::vector<int64_t> shape(static_cast<size_t>(input.dim()), 1);
    shape[static_cast<size_t>(class_dim)] = C;
    terms = terms * weight->to(input.dtype()).reshape(shape);
  }
  return reduce(-terms.sum({class_dim}), red);
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                     int64_t ignore_index, std::string_view reduction, double label_smoothing) {
  const Reduction red = loss::parse_reduction(reduction, "cross_entropy");
  if (target.is_floating_point() && target.sizes() == input.sizes()) {
    return cross_entropy_probabilities(input, target, weight, ignore_index, red, label_smoothing);
  }
  return op::cross_entropy_loss.call(input, target, weight, reduction, ignore_index, label_smoothing);
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight, int64_t ignore_index,
                std::string_view reduction) {
  return op::nll_loss.call(input, target, weight, reduction, ignore_index);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, std::string_view reduction) {
  return op::mse_loss.call(input, target, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction) {
  const Reduction red = loss::parse_reduction(reduction, "l1_loss");
  check_same_shape("l1_loss", input, target);
  return reduce((input - target).abs(), red);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, std::string_view reduction, double beta) {
  const Reduction red = loss::parse_reduction(reduction, "smooth_l1_loss");
  check_same_shape("smooth_l1_loss", input, target);
  EMBER_CHECK(beta >= 0, "smooth_l1_loss: beta must be >= 0, got ", beta);
  const Tensor d = (input - target).abs();
  if (beta == 0) return reduce(d, red);
  return reduce(where(d.lt(beta), d * d * (0.5 / beta), d - 0.5 * beta), red);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                                        std::string_view reduction, const std::optional<Tensor>& pos_weight) {
  const Reduction red = loss::parse_reduction(reduction, "binary_cross_entropy_with_logits");
  check_same_shape("binary_cross_entropy_with_logits", input, target);
  // softplus(-x) = log(1 + exp(-x)), written so that exp never overflows.
  const Tensor softplus_neg = log1p(exp(-input.abs())) + (-input).clamp(0.0);
  Tensor loss = (1.0 - target) * input;
  if (pos_weight && pos_weight->defined()) {
    loss = loss + ((*pos_weight - 1.0) * target + 1.0) * softplus_neg;
  } else {
    loss = loss + softplus_neg;
  }
  if (weight && weight->defined()) loss = loss * *weight;
  return reduce(loss, red);
}

Tensor kl_div(const Tensor& input, const Tensor& target, std::string_view reduction, bool log_target) {
  const char* op = "kl_div";
  const bool batchmean = reduction == "batchmean";
  const Reduction red = batchmean ? Reduction::Sum : loss::parse_reduction(reduction, op);
  check_same_shape(op, input, target);
  Tensor loss;
  if (log_target) {
    loss = target.exp() * (target - input);
  } else {
    // xlogy(t, t) = 0 where t = 0; log(1) there keeps the gradient finite.
    loss = target * where(target.eq(0), 1.0, target).log() - target * input;
  }
  if (!batchmean) return reduce(loss, red);
  EMBER_CHECK(input.dim() >= 1, op, ": reduction 'batchmean' needs an input with a batch dim, got a 0-d tensor");
  return loss.sum() / static_cast<double>(input.size(0));
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  EMBER_CHECK(weight.dim() == 2, "embedding: expected a 2-d weight (num_embeddings, embedding_dim), got ",
              weight.sizes());
  if (padding_idx) {
    const int64_t V = weight.size(0);
    EMBER_CHECK(*padding_idx < V && *padding_idx >= -V, "embedding: padding_idx ", *padding_idx,
                " must be within num_embeddings (", V, ")");
    if (*padding_idx < 0) *padding_idx += V;
  }
  return op::embedding.call(weight, input, padding_idx);
}

Tensor dropout(const Tensor& input, Probability probability, Flag training, Generator* generator) {
  const double p = probability;
  EMBER_CHECK(p >= 0.0 && p <= 1.0, "dropout: dropout probability has to be between 0 and 1, but got ", p);
  if (!training || p == 0.0 || input.numel() == 0) return input;
  Generator& gen = generator ? *generator : default_generator();
  const uint64_t seed = gen.seed();
  const uint64_t offset = gen.reserve(static_cast<uint64_t>((input.numel() + 3) / 4));
  return op::dropout.call(input, p, static_cast<int64_t>(seed), static_cast<int64_t>(offset));
}

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  return ember::linear(input, weight, bias);
}

}  // namespace ember::nn::functional
