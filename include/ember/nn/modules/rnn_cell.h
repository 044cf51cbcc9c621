// ember::nn::RNNCell, LSTMCell and GRUCell, as torch.nn (libtorch's forward signatures):
// one step of the recurrence.
//
//   namespace nn = ember::nn;
//   nn::LSTMCell cell(nn::LSTMCellOptions(8, 16));
//   auto [h, c] = cell(x);                 // x (N, 8) -> h, c (N, 16); states start at zeros
//   std::tie(h, c) = cell(x, std::make_tuple(h, c));
//   nn::GRUCell gru(8, 16);
//   ember::Tensor h2 = gru(x, h);
//
// Inputs are (N, input_size) or unbatched (input_size); states (N, hidden)
// or (hidden). Parameters as PyTorch's: weight_ih (G * hidden, input_size),
// weight_hh (G * hidden, hidden), bias_ih, bias_hh (G * hidden), with G = 1,
// 4 (gates i, f, g, o) and 3 (r, z, n); every one U(-1/sqrt(hidden),
// 1/sqrt(hidden)). The step is the layers' (modules/rnn.h): LSTMCell runs the
// fused lstm_layer op over one step.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <tuple>

#include "ember/nn/module.h"
#include "ember/nn/options/rnn.h"

namespace ember::nn {

class RNNCellImplBase : public Module {
 public:
  // Every parameter U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch.
  void reset_parameters();
  // "LSTMCell(input_size=8, hidden_size=16, bias=true)"
  void pretty_print(std::ostream& os) const override;

  const int64_t input_size, hidden_size;
  Tensor& weight_ih;  // (G * hidden_size, input_size)
  Tensor& weight_hh;  // (G * hidden_size, hidden_size)
  Tensor& bias_ih;    // (G * hidden_size); undefined with bias(false)
  Tensor& bias_hh;

 protected:
  RNNCellImplBase(std::string name, int64_t input_size, int64_t hidden_size, bool bias, int64_t gates);
  // The input as (N, input_size), after checking it.
  Tensor batched_input(const Tensor& input) const;
  // A state as (N, hidden_size): zeros when undefined, else checked against the input.
  Tensor batched_state(const Tensor& state, const Tensor& input) const;
  // Printed before ")" ("nonlinearity=relu" for RNNCell).
  virtual void print_extra(std::ostream& os) const;
};

class RNNCellImpl : public RNNCellImplBase {
 public:
  explicit RNNCellImpl(const RNNCellOptions& options);
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  Tensor forward(const Tensor& input, const Tensor& hx = {});

  const RNNCellOptions options;

 private:
  void print_extra(std::ostream& os) const override;
};
EMBER_MODULE(RNNCell);

class LSTMCellImpl : public RNNCellImplBase {
 public:
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  // Returns (h_1, c_1); hx_opt is (h_0, c_0).
  std::tuple<Tensor, Tensor> forward(const Tensor& input,
                                     const std::optional<std::tuple<Tensor, Tensor>>& hx_opt = std::nullopt);

  const LSTMCellOptions options;
};
EMBER_MODULE(LSTMCell);

class GRUCellImpl : public RNNCellImplBase {
 public:
  explicit GRUCellImpl(const GRUCellOptions& options);
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  Tensor forward(const Tensor& input, const Tensor& hx = {});

  const GRUCellOptions options;
};
EMBER_MODULE(GRUCell);

}  // namespace ember::nn
