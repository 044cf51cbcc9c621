// ember::nn utilities: gradient clipping and counting parameters.
//
//   double norm = ember::nn::clip_grad_norm_(model->parameters(), /*max_norm=*/1.0);
//   std::cout << ember::nn::summary(*model);   // the tree with parameter counts
#pragma once

#include <cstdint>
#include <string>

#include "ember/nn/module.h"
#include "ember/tensor.h"

namespace ember::nn {

// Scales the grads of `parameters` in place so that their joint norm (the
// norm of all grads concatenated; norm_type p > 0 or infinity) is at most
// max_norm: each grad is multiplied by min(1, max_norm / (total + 1e-6)).
// Returns the total norm before clipping. Parameters without a grad are
// skipped. With error_if_nonfinite, a NaN or infinite total is an
// ember::Error (and nothing is scaled); otherwise the grads are scaled by
// the NaN/inf factor, as PyTorch does.
double clip_grad_norm_(const TensorList& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps every grad element to [-clip_value, clip_value] in place.
void clip_grad_value_(const TensorList& parameters, double clip_value);

// Number of parameter elements in the module and its descendants (only those
// that require grad when trainable_only).
int64_t parameter_count(const Module& module, bool trainable_only = false);

// The module tree as operator<< prints it, with the parameter count of each
// submodule that has parameters ("  # 100,480 params") and a total line.
std::string summary(const Module& module);

}  // namespace ember::nn
