// Golden tests of the recurrent layers and cells: each case of
// tests/golden/modules/rnn.safetensors (written by
// tools/golden/make_rnn_golden.py, which documents the format) is a seeded
// PyTorch RNN, LSTM, GRU or cell. The test builds the ember module from the
// case's options, loads PyTorch's state_dict by name, runs the same inputs and
// compares the outputs and the gradients of sum(out * cot) with respect to
// the input, the initial states and every parameter.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/autograd.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/modules/rnn_cell.h"
#include "tests/golden_compare.h"
#include "tests/golden_nn.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
using nlohmann::json;

const SafetensorsFile& rnn_file() {
  static const SafetensorsFile file = load_safetensors(std::string(EMBER_TEST_DATA_DIR) + "/modules/rnn.safetensors");
  return file;
}

TensorDict group(const std::string& name, const std::string& kind) {
  const std::string prefix = name + "." + kind + ".";
  TensorDict out;
  for (const auto& [key, t] : rnn_file().tensors)
    if (key.compare(0, prefix.size(), prefix) == 0) out.emplace(key.substr(prefix.size()), t);
  return out;
}

// The module, and its call on (input, h0 or undefined, c0 or undefined) giving the flattened results.
struct Built {
  std::shared_ptr<nn::Module> module;
  std::function<TensorList(const Tensor&, const Tensor&, const Tensor&)> run;
};

template <class Options>
Options recurrent(const json& o) {
  Options opts(int_arg(o, "input_size", 0), int_arg(o, "hidden_size", 0));
  opts.num_layers(int_arg(o, "num_layers", 1))
      .bias(bool_arg(o, "bias", true))
      .batch_first(bool_arg(o, "batch_first", false))
      .bidirectional(bool_arg(o, "bidirectional", false));
  return opts;
}

Built build(const std::string& module, const json& o) {
  if (module == "LSTM") {
    nn::LSTM m(recurrent<nn::LSTMOptions>(o));
    return {m.ptr(), [m](const Tensor& x, const Tensor& h0, const Tensor& c0) {
              const auto [out, state] =
                  h0.defined() ? m(x, std::make_tuple(h0, c0)) : m(x);
              return TensorList{out, std::get<0>(state), std::get<1>(state)};
            }};
  }
  if (module == "GRU") {
    nn::GRU m(recurrent<nn::GRUOptions>(o));
    return {m.ptr(), [m](const Tensor& x, const Tensor& h0, const Tensor&) {
              const auto [out, h] = m(x, h0);
              return TensorList{out, h};
            }};
  }
  if (module == "RNN") {
    nn::RNN m(recurrent<nn::RNNOptions>(o).nonlinearity(str_arg(o, "nonlinearity", "tanh")));
    return {m.ptr(), [m](const Tensor& x, const Tensor& h0, const Tensor&) {
              const auto [out, h] = m(x, h0);
              return TensorList{out, h};
            }};
  }
  const int64_t in = int_arg(o, "input_size", 0), hidden = int_arg(o, "hidden_size", 0);
  const bool bias = bool_arg(o, "bias", true);
  if (module == "LSTMCell") {
    nn::LSTMCell m(nn::LSTMCellOptions(in, hidden).bias(bias));
    return {m.ptr(), [m](const Tensor& x, const Tensor& h0, const Tensor& c0) {
              const auto [h, c] = h0.defined() ? m(x, std::make_tuple(h0, c0)) : m(x);
              return TensorList{h, c};
            }};
  }
  if (module == "GRUCell") {
    nn::GRUCell m(nn::GRUCellOptions(in, hidden).bias(bias));
    return {m.ptr(), [m](const Tensor& x, const Tensor& h0, const Tensor&) { return TensorList{m(x, h0)}; }};
  }
  if (module == "RNNCell") {
    nn::RNNCell m(nn::RNNCellOptions(in, hidden).bias(bias).nonlinearity(str_arg(o, "nonlinearity", "tanh")));
    return {m.ptr(), [m](const Tensor& x, const Tensor& h0, const Tensor&) { return TensorList{m(x, h0)}; }};
  }
  throw std::logic_error("golden_nn_rnn: no builder for module " + module);
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  try {
    for (const auto& [name, spec] : rnn_file().metadata) names.push_back(name);
  } catch (const std::exception&) {
    names.push_back("unreadable");  // the test reports why
  }
  return names;
}

class GoldenNnRnn : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenNnRnn, MatchesTorch) {
  const std::string& name = GetParam();
  const SafetensorsFile& file = rnn_file();
  ASSERT_TRUE(file.metadata.count(name)) << "no case " << name;
  const json spec = json::parse(file.metadata.at(name));
  const std::string what = spec.at("module").get<std::string>() + " " + spec.at("options").dump();
  Built b = build(spec.at("module").get<std::string>(), spec.at("options"));
  b.module->load_state_dict(group(name, "state"));
  b.module->eval();

  const TensorDict in = group(name, "in");
  TensorList wrt;
  std::vector<std::string> wrt_names;
  auto leaf = [&](const char* arg) {
    if (!in.count(arg)) return Tensor();
    Tensor t = in.at(arg).clone().requires_grad_();
    wrt.push_back(t);
    wrt_names.push_back(std::string("grad_in.") + arg);
    return t;
  };
  const Tensor x = leaf("input"), h0 = leaf("h0"), c0 = leaf("c0");
  for (const auto& [key, p] : b.module->named_parameters()) {
    wrt.push_back(p);
    wrt_names.push_back("grad_param." + key);
  }
  const TensorList outs = b.run(x, h0, c0);
  const TensorDict expected = group(name, "out"), cot = group(name, "cot");
  ASSERT_EQ(outs.size(), expected.size()) << what;
  Tensor loss;
  for (size_t k = 0; k < outs.size(); ++k) {
    SCOPED_TRACE("out." + std::to_string(k));
    const std::string key = std::to_string(k);
    ASSERT_EQ(outs[k].sizes(), expected.at(key).sizes()) << what;
    EXPECT_TRUE(values_match(outs[k].detach(), expected.at(key), spec.at("rtol"), spec.at("atol"))) << what;
    const Tensor term = (outs[k] * cot.at(key)).sum();
    loss = loss.defined() ? loss + term : term;
  }
  const TensorList grads = autograd::grad({loss}, wrt);
  for (size_t i = 0; i < wrt.size(); ++i) {
    SCOPED_TRACE(wrt_names[i]);
    auto it = file.tensors.find(name + "." + wrt_names[i]);
    ASSERT_NE(it, file.tensors.end()) << "torch has no " << wrt_names[i];
    EXPECT_TRUE(values_match(grads[i], it->second, spec.at("grad_rtol"), spec.at("grad_atol"))) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenNnRnn, GoldenNnRnn, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ember::testing
