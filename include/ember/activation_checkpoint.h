// Activation checkpointing: spend compute to save memory.
//
//   auto block = [&](const TensorList& in) { return TensorList{ember::linear(in[0], w).tanh()}; };
//   Tensor y = ember::autograd::checkpoint(block, {x})[0];
//
// Note [How checkpoint saves memory]
// Forward runs `fn` without recording, so none of its intermediate tensors
// are kept; the node remembers only the inputs and the default generator's
// (seed, offset). Backward puts the generator back where forward found it,
// runs `fn` again with recording on (random ops draw the same numbers, so
// the recomputed values are bitwise those of forward), backpropagates the
// incoming gradients through that fresh graph and returns the inputs'
// gradients. Parameters that `fn` uses without taking them as inputs get
// their .grad accumulated by that inner backward, as without checkpointing.
//
// Limits: the outer pass must be backward() (autograd::grad would find the
// parameters' gradients already accumulated into .grad); no create_graph
// through a checkpoint; only the default CPU generator is replayed. When no
// input requires grad, fn simply runs and records as usual.
#pragma once

#include <functional>

#include "ember/tensor.h"

namespace ember::autograd {

TensorList checkpoint(const std::function<TensorList(const TensorList&)>& fn, const TensorList& inputs);

}  // namespace ember::autograd
