// The loss modules (modules/loss.h): each forwards to its F:: function.
#include "ember/nn/modules/loss.h"

#include "ember/nn/functional.h"

namespace ember::nn {

namespace F = functional;

namespace {
std::optional<Tensor> optional_tensor(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
}  // namespace

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : Module("CrossEntropyLoss"), options(options), weight(register_buffer("weight", options.weight())) {}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::cross_entropy(input, target, optional_tensor(weight), options.ignore_index(), options.reduction(),
                          options.label_smoothing());
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options)
    : Module("NLLLoss"), options(options), weight(register_buffer("weight", options.weight())) {}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::nll_loss(input, target, optional_tensor(weight), options.ignore_index(), options.reduction());
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options)
    : Module("BCEWithLogitsLoss"),
      options(options),
      weight(register_buffer("weight", options.weight())),
      pos_weight(register_buffer("pos_weight", options.pos_weight())) {}

Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::binary_cross_entropy_with_logits(input, target, optional_tensor(weight), options.reduction(),
                                             optional_tensor(pos_weight));
}

Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::kl_div(input, target, options.reduction(), options.log_target());
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::mse_loss(input, target, options.reduction());
}

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::l1_loss(input, target, options.reduction());
}

Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::smooth_l1_loss(input, target, options.reduction(), options.beta());
}

}  // namespace ember::nn
