// The attention probabilities composed of ordinary differentiable ops, on the
// full L x S matrix: the route of scaled_dot_product_attention with dropout
// (nn/functional_attention.cpp) and of flash_attention's composite backward
// (autograd/formulas_attention.cpp). The fused kernels compute the same
// thing tile by tile (Note [Flash attention on the CPU]).
#pragma once

#include "ember/tensor.h"

namespace ember::attention {

// softmax(scale * q k^T + mask) over the keys: (..., L, S). `mask` is
// undefined, bool (true attends) or float (added); `causal` masks key j > query i.
// A query whose keys are all masked gets probabilities 0, as PyTorch (>= 2.5)
// does, not the 0/0 of a plain softmax, and its gradients are 0.
Tensor attention_probabilities(const Tensor& q, const Tensor& k, const Tensor& mask, bool causal, double scale);

}  // namespace ember::attention
