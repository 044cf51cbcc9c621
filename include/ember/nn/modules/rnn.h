// ember::nn::RNN, LSTM and GRU, as torch.nn (libtorch's forward signatures).
//
//   namespace nn = ember::nn;
//   nn::LSTM lstm(nn::LSTMOptions(256, 512).num_layers(2));
//   auto [out, state] = lstm(x);                    // x (L, N, 256) -> out (L, N, 512)
//   auto [h_n, c_n] = state;                        // (num_layers * directions, N, 512) each
//   nn::GRU gru(nn::GRUOptions(8, 16).bidirectional(true).batch_first(true));
//   auto [y, h] = gru(x, h0);                       // y (N, L, 32), h (2, N, 16)
//
// Inputs are (L, N, input_size), (N, L, input_size) with batch_first, or
// unbatched (L, input_size); states are (num_layers * directions, N, hidden)
// ((num_layers * directions, hidden) unbatched) whatever batch_first says, and
// default to zeros. Layer l > 0 reads the previous layer's output (both
// directions concatenated); dropout, when set, applies to every layer's output
// but the last in training mode.
//
// Parameters as PyTorch names and shapes them, so a PyTorch state_dict loads:
// per layer k and direction ("" or "_reverse"), weight_ih_l{k} (G * hidden,
// in), weight_hh_l{k} (G * hidden, hidden), bias_ih_l{k}, bias_hh_l{k}
// (G * hidden), with G = 1 (RNN), 4 (LSTM: gates i, f, g, o), 3 (GRU: r, z, n).
// Init as PyTorch: every parameter U(-1/sqrt(hidden), 1/sqrt(hidden)).
//
// How they compute (docs/nn_layers.md): each layer direction first projects
// the whole sequence with one GEMM. LSTM then runs the fused op lstm_layer
// (one GEMM and one pointwise pass per step, a fused backward); RNN and GRU
// step with ember ops: h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), and
// r = σ(.), z = σ(.), n = tanh(W_in x + b_in + r * (W_hn h + b_hn)),
// h' = (1 - z) n + z h. Not offered: LSTM's proj_size, packed sequences.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <tuple>
#include <vector>

#include "ember/nn/module.h"
#include "ember/nn/options/rnn.h"

namespace ember::nn {

// The parameters of one layer direction (biases undefined without bias).
struct RecurrentWeights {
  Tensor w_ih, w_hh, b_ih, b_hh;
};

// What RNN, LSTM and GRU share: the parameters and the loop over layers and directions.
class RNNImplBase : public Module {
 public:
  // Every parameter U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch.
  void reset_parameters();
  // "LSTM(input_size=256, hidden_size=512, num_layers=2, bias=true, batch_first=false, dropout=0, bidirectional=false)"
  void pretty_print(std::ostream& os) const override;

  const RecurrentSettings settings;

 protected:
  // gates: how many blocks of hidden_size rows the weights stack (1, 3 or 4).
  RNNImplBase(std::string name, const RecurrentSettings& settings, int64_t gates);

  // One layer direction over x (L, N, in) from the states (h0, and c0 for an LSTM);
  // returns {output (L, N, hidden), h_n, [c_n]}.
  virtual TensorList run_direction(const Tensor& x, const TensorList& states, const RecurrentWeights& w,
                                   bool reverse) const = 0;
  // input as the user gives it; states: one tensor per state kind, each as the
  // user gives it or undefined (zeros). Returns {output, h_n, [c_n]} shaped as PyTorch's.
  TensorList run(const Tensor& input, const TensorList& states) const;
  // Printed after the common fields ("nonlinearity=relu, " for RNN).
  virtual void print_extra(std::ostream& os) const;

 private:
  RecurrentWeights weights(int64_t layer, int64_t direction) const;
  int64_t directions() const { return settings.bidirectional ? 2 : 1; }

  std::vector<Tensor*> slots_;  // per layer and direction: w_ih, w_hh, [b_ih, b_hh]
};

class RNNImpl : public RNNImplBase {
 public:
  explicit RNNImpl(const RNNOptions& options);
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  // Returns (output, h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});

  const RNNOptions options;

 private:
  TensorList run_direction(const Tensor& x, const TensorList& states, const RecurrentWeights& w,
                           bool reverse) const override;
  void print_extra(std::ostream& os) const override;
};
EMBER_MODULE(RNN);

class LSTMImpl : public RNNImplBase {
 public:
  explicit LSTMImpl(const LSTMOptions& options);
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  // Returns (output, (h_n, c_n)); hx_opt is (h_0, c_0).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx_opt = std::nullopt);

  const LSTMOptions options;

 private:
  TensorList run_direction(const Tensor& x, const TensorList& states, const RecurrentWeights& w,
                           bool reverse) const override;
};
EMBER_MODULE(LSTM);

class GRUImpl : public RNNImplBase {
 public:
  explicit GRUImpl(const GRUOptions& options);
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  // Returns (output, h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});

  const GRUOptions options;

 private:
  TensorList run_direction(const Tensor& x, const TensorList& states, const RecurrentWeights& w,
                           bool reverse) const override;
};
EMBER_MODULE(GRU);

}  // namespace ember::nn
