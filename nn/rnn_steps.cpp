// nn/rnn_steps.h.
#include "nn/rnn_steps.h"

#include <optional>

#include "ember/nn/functional.h"
#include "ember/ops.h"

namespace ember::nn::detail {

namespace {
std::optional<Tensor> opt(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
}  // namespace

Tensor rnn_step(const Tensor& x_proj, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh, bool relu) {
  const Tensor pre = x_proj + functional::linear(h, w_hh, opt(b_hh));
  return relu ? pre.relu() : pre.tanh();
}

Tensor gru_step(const Tensor& x_proj, const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  const TensorList xs = x_proj.chunk(3, -1), hs = functional::linear(h, w_hh, opt(b_hh)).chunk(3, -1);
  const Tensor r = (xs[0] + hs[0]).sigmoid(), z = (xs[1] + hs[1]).sigmoid();
  const Tensor n = (xs[2] + r * hs[2]).tanh();
  return n + z * (h - n);
}

bool is_relu(const char* module, const std::string& nonlinearity) {
  EMBER_CHECK(nonlinearity == "tanh" || nonlinearity == "relu", module,
              ": nonlinearity must be \"tanh\" or \"relu\", got \"", nonlinearity, "\"");
  return nonlinearity == "relu";
}

}  // namespace ember::nn::detail
