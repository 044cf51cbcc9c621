// Gradient clipping and parameter counting (nn/utils.h).
#include "ember/nn/utils.h"

#include <cmath>

#include "ember/autograd.h"
#include "ember/ops.h"

namespace ember::nn {

namespace {
TensorList defined_grads(const TensorList& parameters) {
  TensorList grads;
  for (const Tensor& p : parameters) {
    if (!p.defined()) continue;
    Tensor g = p.grad();
    if (g.defined() && g.numel() > 0) grads.push_back(g);
  }
  return grads;
}
}  // namespace

double clip_grad_norm_(const TensorList& parameters, double max_norm, double norm_type, bool error_if_nonfinite) {
  EMBER_CHECK(norm_type > 0, "clip_grad_norm_: norm_type must be > 0 (or infinity), got ", norm_type);
  EMBER_CHECK(max_norm >= 0, "clip_grad_norm_: max_norm must be >= 0, got ", max_norm);
  NoGradGuard no_grad;
  const TensorList grads = defined_grads(parameters);
  if (grads.empty()) return 0.0;

  // One reduction per grad, then one over the per-grad norms: the p-norm of
  // the per-tensor p-norms is the p-norm of everything (max for infinity).
  const Device device = grads.front().device();
  TensorList norms;
  norms.reserve(grads.size());
  for (const Tensor& g : grads) norms.push_back(g.norm(norm_type).to(device, DType::Float64));
  const double total = stack(norms).norm(norm_type).item<double>();

  EMBER_CHECK(!error_if_nonfinite || std::isfinite(total), "clip_grad_norm_: the total norm of order ", norm_type,
              " of the gradients is ", total, "; with error_if_nonfinite=false the grads would be scaled anyway");
  const double coef = max_norm / (total + 1e-6);
  if (!(coef >= 1.0)) {  // also taken when coef is NaN, as in PyTorch
    for (Tensor g : grads) g.mul_(coef);
  }
  return total;
}

void clip_grad_value_(const TensorList& parameters, double clip_value) {
  EMBER_CHECK(clip_value >= 0, "clip_grad_value_: clip_value must be >= 0, got ", clip_value);
  NoGradGuard no_grad;
  for (Tensor g : defined_grads(parameters)) g.clamp_(-clip_value, clip_value);
}

int64_t parameter_count(const Module& module, bool trainable_only) {
  int64_t count = 0;
  for (const Tensor& p : module.parameters()) {
    if (!trainable_only || p.requires_grad()) count += p.numel();
  }
  return count;
}

}  // namespace ember::nn
