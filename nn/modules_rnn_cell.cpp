// nn::RNNCell, nn::LSTMCell, nn::GRUCell (modules/rnn_cell.h).
#include "ember/nn/modules/rnn_cell.h"

#include <cmath>
#include <ostream>
#include <string>

#include "core/op_decls_rnn.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/ops.h"
#include "nn/rnn_steps.h"

namespace ember::nn {

namespace {

std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }

int64_t checked_size(const std::string& name, int64_t input_size, int64_t hidden_size) {
  EMBER_CHECK(input_size >= 0 && hidden_size > 0, name, ": expected input_size >= 0 and hidden_size > 0, got ",
              input_size, " and ", hidden_size);
  return input_size;
}

}  // namespace

RNNCellImplBase::RNNCellImplBase(std::string name, int64_t input_size, int64_t hidden_size, bool bias, int64_t gates)
    : Module(name),
      input_size(checked_size(name, input_size, hidden_size)),
      hidden_size(hidden_size),
      weight_ih(register_parameter("weight_ih", empty({gates * hidden_size, input_size}))),
      weight_hh(register_parameter("weight_hh", empty({gates * hidden_size, hidden_size}))),
      bias_ih(register_parameter("bias_ih", bias ? empty({gates * hidden_size}) : Tensor())),
      bias_hh(register_parameter("bias_hh", bias ? empty({gates * hidden_size}) : Tensor())) {
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  for (Tensor* p : {&weight_ih, &weight_hh, &bias_ih, &bias_hh})
    if (p->defined()) init::uniform_(*p, -bound, bound);
}

Tensor RNNCellImplBase::batched_input(const Tensor& input) const {
  EMBER_CHECK((input.dim() == 1 || input.dim() == 2) && input.size(-1) == input_size, name(),
              ": expected an input of shape (batch, input_size) or (input_size) with input_size = ", input_size,
              ", got ", input.sizes());
  EMBER_CHECK(input.dtype() == weight_ih.dtype(), name(), ": expected an input of dtype ", weight_ih.dtype(),
              " (the parameters'), got ", input.dtype());
  return input.dim() == 1 ? input.unsqueeze(0) : input;
}

Tensor RNNCellImplBase::batched_state(const Tensor& state, const Tensor& input) const {
  const Tensor x = batched_input(input);
  if (!state.defined()) return zeros({x.size(0), hidden_size}, x.options());
  const DimVector want = input.dim() == 2 ? DimVector{x.size(0), hidden_size} : DimVector{hidden_size};
  EMBER_CHECK(state.sizes() == IntArrayRef(want), name(), ": expected a state of shape ", IntArrayRef(want),
              " for an input of shape ", input.sizes(), ", got ", state.sizes());
  EMBER_CHECK(state.dtype() == x.dtype(), name(), ": expected a state of dtype ", x.dtype(), ", got ",
              state.dtype());
  return input.dim() == 2 ? state : state.unsqueeze(0);
}

void RNNCellImplBase::print_extra(std::ostream&) const {}

void RNNCellImplBase::pretty_print(std::ostream& os) const {
  os << name() << "(input_size=" << input_size << ", hidden_size=" << hidden_size
     << ", bias=" << (bias_ih.defined() ? "true" : "false");
  print_extra(os);
  os << ")";
}

// ---- RNNCell ----

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options)
    : RNNCellImplBase("RNNCell", options.input_size(), options.hidden_size(), options.bias(), 1), options(options) {
  detail::is_relu("RNNCell", options.nonlinearity());
}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) {
  const Tensor x = batched_input(input), h = batched_state(hx, input);
  const Tensor h1 = detail::rnn_step(functional::linear(x, weight_ih, opt(bias_ih)), h, weight_hh, bias_hh,
                                     detail::is_relu("RNNCell", options.nonlinearity()));
  return input.dim() == 1 ? h1.squeeze(0) : h1;
}

void RNNCellImpl::print_extra(std::ostream& os) const { os << ", nonlinearity=" << options.nonlinearity(); }

// ---- LSTMCell ----

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options)
    : RNNCellImplBase("LSTMCell", options.input_size(), options.hidden_size(), options.bias(), 4), options(options) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input,
                                                 const std::optional<std::tuple<Tensor, Tensor>>& hx_opt) {
  const Tensor x = batched_input(input);
  const Tensor h = batched_state(hx_opt ? std::get<0>(*hx_opt) : Tensor(), input),
               c = batched_state(hx_opt ? std::get<1>(*hx_opt) : Tensor(), input);
  const TensorTriple r =
      op::lstm_layer.call(x.unsqueeze(0), h, c, weight_ih, weight_hh, opt(bias_ih), opt(bias_hh), false);
  const Tensor h1 = std::get<0>(r).select(0, 0), c1 = std::get<1>(r).select(0, 0);
  if (input.dim() == 1) return {h1.squeeze(0), c1.squeeze(0)};
  return {h1, c1};
}

// ---- GRUCell ----

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options)
    : RNNCellImplBase("GRUCell", options.input_size(), options.hidden_size(), options.bias(), 3), options(options) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) {
  const Tensor x = batched_input(input), h = batched_state(hx, input);
  const Tensor h1 = detail::gru_step(functional::linear(x, weight_ih, opt(bias_ih)), h, weight_hh, bias_hh);
  return input.dim() == 1 ? h1.squeeze(0) : h1;
}

}  // namespace ember::nn
