// One step of the RNN and GRU recurrences, with ember ops: shared by the
// layers (nn/modules_rnn.cpp) and the cells (nn/modules_rnn_cell.cpp).
#pragma once

#include <string>

#include "ember/tensor.h"

namespace ember::nn::detail {

// x_proj = x W_ih^T + b_ih (N, G * hidden), computed once per sequence by the
// layers; h (N, hidden); b_hh may be undefined.
// tanh (or relu) of x_proj + h W_hh^T + b_hh.
Tensor rnn_step(const Tensor& x_proj, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh, bool relu);
// PyTorch's GRU step: r = σ(x_r + h_r), z = σ(x_z + h_z), n = tanh(x_n + r * h_n),
// h' = (1 - z) n + z h, with [h_r h_z h_n] = h W_hh^T + b_hh.
Tensor gru_step(const Tensor& x_proj, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh);
// nonlinearity "tanh" or "relu"; true for relu. Anything else is an error naming `module`.
bool is_relu(const char* module, const std::string& nonlinearity);

}  // namespace ember::nn::detail
