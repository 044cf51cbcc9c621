// Dispatched ops of one neural-network family: the fused LSTM layer and its backward.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// lstm_layer runs one direction of one LSTM layer over a whole sequence:
//   input (T, N, I), hx and cx (N, H), w_ih (4H, I), w_hh (4H, H), b_ih and b_hh (4H)
//   -> output (T, N, H): h_t; cells (T, N, H): c_t; gates (T, N, 4H): the
//      activated gates [i f g o] (sigmoid, sigmoid, tanh, sigmoid), PyTorch's order.
// With reverse the steps run from t = T-1 down to 0; output[t] stays at t.
// h_n is output[T-1] (output[0] with reverse) and c_n the same step of cells;
// gates is what the backward reads, so it needs no activation recomputed.
// lstm_layer_backward takes a gradient for each of the three results and
// returns [grad_input, grad_hx, grad_cx, grad_w_ih, grad_w_hh, grad_bias]
// (grad_bias is the gradient of b_ih and of b_hh alike).
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_RNN_OPS(X) \
  X(lstm_layer, "lstm_layer(Tensor input, Tensor hx, Tensor cx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None, bool reverse=False) -> (Tensor output, Tensor cells, Tensor gates)", \
    TensorTriple(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&, const std::optional<Tensor>&, bool)) \
  X(lstm_layer_backward, "lstm_layer_backward(Tensor grad_output, Tensor grad_cells, Tensor grad_gates, Tensor input, Tensor hx, Tensor cx, Tensor w_ih, Tensor w_hh, Tensor output, Tensor cells, Tensor gates, bool reverse) -> Tensor[]", \
    TensorList(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, bool))
// clang-format on

namespace ember::op {
EMBER_RNN_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
