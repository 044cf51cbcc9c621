// nn::RNN, nn::LSTM, nn::GRU (modules/rnn.h).
#include "ember/nn/modules/rnn.h"

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

const RecurrentSettings& checked(const std::string& name, const RecurrentSettings& s) {
  EMBER_CHECK(s.input_size >= 0 && s.hidden_size > 0, name, ": expected input_size >= 0 and hidden_size > 0, got ",
              s.input_size, " and ", s.hidden_size);
  EMBER_CHECK(s.num_layers >= 1, name, ": expected num_layers >= 1, got ", s.num_layers);
  EMBER_CHECK(s.dropout >= 0.0 && s.dropout <= 1.0, name, ": expected dropout in [0, 1], got ", s.dropout);
  return s;
}

}  // namespace

// ---- RNNImplBase ----

RNNImplBase::RNNImplBase(std::string name, const RecurrentSettings& s, int64_t gates)
    : Module(name), settings(checked(name, s)) {
  const int64_t H = settings.hidden_size, D = directions();
  for (int64_t l = 0; l < settings.num_layers; ++l) {
    for (int64_t d = 0; d < D; ++d) {
      const std::string suffix = "_l" + std::to_string(l) + (d == 1 ? "_reverse" : "");
      const int64_t in = l == 0 ? settings.input_size : H * D;
      slots_.push_back(&register_parameter("weight_ih" + suffix, empty({gates * H, in})));
      slots_.push_back(&register_parameter("weight_hh" + suffix, empty({gates * H, H})));
      if (settings.bias) {
        slots_.push_back(&register_parameter("bias_ih" + suffix, empty({gates * H})));
        slots_.push_back(&register_parameter("bias_hh" + suffix, empty({gates * H})));
      }
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(settings.hidden_size));
  for (Tensor* p : slots_) init::uniform_(*p, -bound, bound);
}

RecurrentWeights RNNImplBase::weights(int64_t layer, int64_t direction) const {
  const size_t per = settings.bias ? 4 : 2;
  const size_t at = static_cast<size_t>(layer * directions() + direction) * per;
  if (!settings.bias) return {*slots_[at], *slots_[at + 1], Tensor(), Tensor()};
  return {*slots_[at], *slots_[at + 1], *slots_[at + 2], *slots_[at + 3]};
}

TensorList RNNImplBase::run(const Tensor& input, const TensorList& states) const {
  const std::string nm = name();
  const int64_t D = directions(), L = settings.num_layers, H = settings.hidden_size;
  EMBER_CHECK(input.dim() == 2 || input.dim() == 3, nm,
              ": expected an input of shape (seq_len, batch, input_size), (batch, seq_len, input_size) with "
              "batch_first, or (seq_len, input_size) unbatched, got ",
              input.sizes());
  const bool batched = input.dim() == 3;
  const Tensor x = batched ? (settings.batch_first ? input.transpose(0, 1) : input) : input.unsqueeze(1);
  EMBER_CHECK(x.size(2) == settings.input_size, nm, ": expected an input whose last dim is input_size = ",
              settings.input_size, ", got shape ", input.sizes());
  EMBER_CHECK(x.size(0) >= 1, nm, ": expected a sequence of at least one step, got input shape ", input.sizes());
  const DType dtype = slots_.front()->dtype();
  EMBER_CHECK(input.dtype() == dtype, nm, ": expected an input of dtype ", dtype, " (the parameters'), got ",
              input.dtype());
  const int64_t N = x.size(1);
  TensorList init;
  for (const Tensor& s : states) {
    if (!s.defined()) {
      init.push_back(zeros({L * D, N, H}, x.options()));
      continue;
    }
    const DimVector want = batched ? DimVector{L * D, N, H} : DimVector{L * D, H};
    EMBER_CHECK(s.sizes() == IntArrayRef(want), nm, ": expected an initial state of shape ", IntArrayRef(want),
                batched ? " (num_layers * num_directions, batch, hidden_size)"
                        : " (num_layers * num_directions, hidden_size) for an unbatched input",
                ", got ", s.sizes());
    EMBER_CHECK(s.dtype() == dtype, nm, ": expected an initial state of dtype ", dtype, ", got ", s.dtype());
    init.push_back(batched ? s : s.unsqueeze(1));
  }
  std::vector<TensorList> finals(states.size());
  Tensor layer_in = x;
  for (int64_t l = 0; l < L; ++l) {
    TensorList outs;
    for (int64_t d = 0; d < D; ++d) {
      TensorList start;
      for (const Tensor& s : init) start.push_back(s.select(0, l * D + d));
      const TensorList r = run_direction(layer_in, start, weights(l, d), d == 1);
      outs.push_back(r[0]);
      for (size_t k = 0; k < finals.size(); ++k) finals[k].push_back(r[k + 1]);
    }
    layer_in = D == 2 ? cat(outs, 2) : outs[0];
    if (l + 1 < L && settings.dropout > 0 && is_training()) layer_in = functional::dropout(layer_in, settings.dropout);
  }
  Tensor out = layer_in;
  if (!batched) out = out.squeeze(1);
  else if (settings.batch_first) out = out.transpose(0, 1);
  TensorList result{out};
  for (const TensorList& f : finals) result.push_back(batched ? stack(f, 0) : stack(f, 0).squeeze(1));
  return result;
}

void RNNImplBase::print_extra(std::ostream&) const {}

void RNNImplBase::pretty_print(std::ostream& os) const {
  os << name() << "(input_size=" << settings.input_size << ", hidden_size=" << settings.hidden_size
     << ", num_layers=" << settings.num_layers << ", bias=" << (settings.bias ? "true" : "false")
     << ", batch_first=" << (settings.batch_first ? "true" : "false") << ", dropout=" << settings.dropout
     << ", bidirectional=" << (settings.bidirectional ? "true" : "false");
  print_extra(os);
  os << ")";
}

// ---- RNN ----

RNNImpl::RNNImpl(const RNNOptions& options) : RNNImplBase("RNN", options.settings(), 1), options(options) {
  detail::is_relu("RNN", options.nonlinearity());
}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  const TensorList r = run(input, {hx});
  return {r[0], r[1]};
}

TensorList RNNImpl::run_direction(const Tensor& x, const TensorList& states, const RecurrentWeights& w,
                                  bool reverse) const {
  const bool relu = detail::is_relu("RNN", options.nonlinearity());
  const Tensor xp = functional::linear(x, w.w_ih, opt(w.b_ih));  // every step's input projection at once
  const int64_t T = x.size(0);
  Tensor h = states[0];
  TensorList outs(static_cast<size_t>(T));
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    h = detail::rnn_step(xp.select(0, t), h, w.w_hh, w.b_hh, relu);
    outs[static_cast<size_t>(t)] = h;
  }
  return {stack(outs, 0), h};
}

void RNNImpl::print_extra(std::ostream& os) const { os << ", nonlinearity=" << options.nonlinearity(); }

// ---- LSTM ----

LSTMImpl::LSTMImpl(const LSTMOptions& options) : RNNImplBase("LSTM", options.settings(), 4), options(options) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, const std::optional<std::tuple<Tensor, Tensor>>& hx_opt) {
  const TensorList states = hx_opt ? TensorList{std::get<0>(*hx_opt), std::get<1>(*hx_opt)} : TensorList(2);
  const TensorList r = run(input, states);
  return {r[0], {r[1], r[2]}};
}

TensorList LSTMImpl::run_direction(const Tensor& x, const TensorList& states, const RecurrentWeights& w,
                                   bool reverse) const {
  const TensorTriple r =
      op::lstm_layer.call(x, states[0], states[1], w.w_ih, w.w_hh, opt(w.b_ih), opt(w.b_hh), reverse);
  const Tensor &out = std::get<0>(r), &cells = std::get<1>(r);
  const int64_t last = reverse ? 0 : x.size(0) - 1;
  return {out, out.select(0, last), cells.select(0, last)};
}

// ---- GRU ----

GRUImpl::GRUImpl(const GRUOptions& options) : RNNImplBase("GRU", options.settings(), 3), options(options) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  const TensorList r = run(input, {hx});
  return {r[0], r[1]};
}

TensorList GRUImpl::run_direction(const Tensor& x, const TensorList& states, const RecurrentWeights& w,
                                  bool reverse) const {
  const Tensor xp = functional::linear(x, w.w_ih, opt(w.b_ih));
  const int64_t T = x.size(0);
  Tensor h = states[0];
  TensorList outs(static_cast<size_t>(T));
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s;
    h = detail::gru_step(xp.select(0, t), h, w.w_hh, w.b_hh);
    outs[static_cast<size_t>(t)] = h;
  }
  return {stack(outs, 0), h};
}

}  // namespace ember::nn
