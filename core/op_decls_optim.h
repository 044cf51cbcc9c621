// Dispatched ops of one family: the fused optimiser updates (optim/).
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument (the first parameter).
//
// Each op updates every tensor of a parameter group in one call and one pass
// over memory: element k of params[t] is read and written once, together with
// element k of grads[t] and of each state list. Lists hold one contiguous
// tensor per parameter, all of the parameter's shape and dtype; a state list
// the configuration does not use is empty. Per-parameter step counts (int[])
// are the counts *after* this step, as PyTorch's state["step"] once it has
// been incremented. The ops return `params` and run below autograd: call them
// under NoGradGuard (the optimisers in include/ember/optim/ do).
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_OPTIM_OPS(X) \
  /* new_buffers[t] = 1: momentum_buffers[t] is fresh and takes the first update direction as is */ \
  X(_fused_sgd_, "_fused_sgd_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] momentum_buffers, int[] new_buffers, float lr, float momentum, float dampening, float weight_decay, bool nesterov, bool maximize) -> Tensor(a!)[]", \
    TensorList(const TensorList&, const TensorList&, const TensorList&, IntArrayRef, double, double, double, double, bool, bool)) \
  /* decoupled: AdamW's weight decay (params shrink by 1 - lr * weight_decay) instead of L2 added to the gradient */ \
  X(_fused_adam_, "_fused_adam_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] exp_avgs, Tensor(c!)[] exp_avg_sqs, Tensor(d!)[] max_exp_avg_sqs, int[] steps, float lr, float beta1, float beta2, float weight_decay, float eps, bool amsgrad, bool maximize, bool decoupled) -> Tensor(a!)[]", \
    TensorList(const TensorList&, const TensorList&, const TensorList&, const TensorList&, const TensorList&, IntArrayRef, double, double, double, double, double, bool, bool, bool)) \
  X(_fused_rmsprop_, "_fused_rmsprop_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] square_avgs, Tensor(c!)[] grad_avgs, Tensor(d!)[] momentum_buffers, float lr, float alpha, float eps, float weight_decay, float momentum, bool centered, bool maximize) -> Tensor(a!)[]", \
    TensorList(const TensorList&, const TensorList&, const TensorList&, const TensorList&, const TensorList&, double, double, double, double, double, bool, bool)) \
  X(_fused_adagrad_, "_fused_adagrad_(Tensor(a!)[] params, Tensor[] grads, Tensor(b!)[] state_sums, int[] steps, float lr, float lr_decay, float weight_decay, float eps, bool maximize) -> Tensor(a!)[]", \
    TensorList(const TensorList&, const TensorList&, const TensorList&, IntArrayRef, double, double, double, double, bool))
// clang-format on

namespace ember::op {
EMBER_OPTIM_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
