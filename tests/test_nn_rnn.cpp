// The recurrent layers and cells (ember/nn/modules/rnn.h, rnn_cell.h):
// PyTorch's parameter names and shapes, init bounds, agreement with a
// step-by-step reference written here with ember ops from PyTorch's equations,
// batch_first, unbatched inputs, initial states, bidirectional stacks,
// dropout between layers, printing and errors.
//   NnRnn.*      RNN, LSTM, GRU
//   NnRnnCell.*  RNNCell, LSTMCell, GRUCell
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ember/autograd.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/modules/rnn_cell.h"
#include "tests/module_grad_check.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;

Tensor seeded(IntArrayRef sizes, uint64_t seed, DType dtype = kFloat64) {
  Generator g(seed);
  return randn(sizes, dtype, &g);
}

// Step-by-step references from PyTorch's documented equations. w: w_ih, w_hh, b_ih, b_hh.
enum class Kind { Tanh, Relu, Lstm, Gru };

// One step; state: {h} or {h, c}.
TensorList reference_step(Kind kind, const Tensor& x, const TensorList& state, const TensorList& w) {
  const Tensor gi = x.matmul(w[0].t()) + w[2], gh = state[0].matmul(w[1].t()) + w[3];
  switch (kind) {
    case Kind::Tanh: return {(gi + gh).tanh()};
    case Kind::Relu: return {(gi + gh).relu()};
    case Kind::Lstm: {
      const TensorList g = (gi + gh).chunk(4, 1);
      const Tensor c = g[1].sigmoid() * state[1] + g[0].sigmoid() * g[2].tanh();
      return {g[3].sigmoid() * c.tanh(), c};
    }
    case Kind::Gru: {
      const TensorList a = gi.chunk(3, 1), b = gh.chunk(3, 1);
      const Tensor r = (a[0] + b[0]).sigmoid(), z = (a[1] + b[1]).sigmoid();
      const Tensor n = (a[2] + r * b[2]).tanh();
      return {(1 - z) * n + z * state[0]};
    }
  }
  return {};
}

// The whole stack on x (L, N, in); states (layers * dirs, N, H) each. Returns {out, h_n, [c_n]}.
TensorList reference_layers(Kind kind, const nn::Module& m, int64_t layers, bool bidirectional, const Tensor& x,
                            const TensorList& states) {
  const TensorDict p = m.state_dict();
  const int64_t dirs = bidirectional ? 2 : 1, T = x.size(0);
  Tensor in = x;
  std::vector<TensorList> finals(states.size());
  for (int64_t l = 0; l < layers; ++l) {
    TensorList outs;
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      const TensorList w{p.at("weight_ih" + sfx), p.at("weight_hh" + sfx), p.at("bias_ih" + sfx),
                         p.at("bias_hh" + sfx)};
      TensorList st;
      for (const Tensor& s : states) st.push_back(s.select(0, l * dirs + d));
      TensorList steps(static_cast<size_t>(T));
      for (int64_t k = 0; k < T; ++k) {
        const int64_t t = d ? T - 1 - k : k;
        st = reference_step(kind, in.select(0, t), st, w);
        steps[static_cast<size_t>(t)] = st[0];
      }
      outs.push_back(stack(steps, 0));
      for (size_t k = 0; k < st.size(); ++k) finals[k].push_back(st[k]);
    }
    in = cat(outs, 2);
  }
  TensorList r{in};
  for (const TensorList& f : finals) r.push_back(stack(f, 0));
  return r;
}

std::vector<std::string> names(const nn::NamedTensors& named) {
  std::vector<std::string> out;
  for (const auto& [name, t] : named) out.push_back(name);
  return out;
}

TEST(NnRnn, ParameterNamesAndShapesArePyTorchs) {
  nn::LSTM lstm(nn::LSTMOptions(5, 7).num_layers(2).bidirectional(true));
  EXPECT_EQ(names(lstm->named_parameters()),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                                      "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
                                      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse",
                                      "bias_hh_l1_reverse"}));
  const TensorDict sd = lstm->state_dict();
  EXPECT_EQ(sd.at("weight_ih_l0").sizes(), IntArrayRef({28, 5}));
  EXPECT_EQ(sd.at("weight_ih_l1").sizes(), IntArrayRef({28, 14}));  // reads both directions
  EXPECT_EQ(sd.at("weight_hh_l1_reverse").sizes(), IntArrayRef({28, 7}));
  nn::GRU gru(nn::GRUOptions(5, 7).bias(false));
  EXPECT_EQ(names(gru->named_parameters()), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"}));
  EXPECT_EQ(gru->state_dict().at("weight_hh_l0").sizes(), IntArrayRef({21, 7}));
  nn::RNN rnn(3, 4);
  EXPECT_EQ(rnn->state_dict().at("bias_hh_l0").sizes(), IntArrayRef({4}));
}

TEST(NnRnn, InitIsUniformWithinOneOverSqrtHidden) {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(20, 16).num_layers(2));
  for (const Tensor& p : lstm->parameters()) {
    const std::vector<double> v = values(p);
    double lo = 1, hi = -1;
    for (double x : v) lo = std::min(lo, x), hi = std::max(hi, x);
    EXPECT_GE(lo, -0.25);
    EXPECT_LE(hi, 0.25);
    EXPECT_LT(lo, -0.2);  // the whole range is used
    EXPECT_GT(hi, 0.2);
  }
}

struct Case {
  Kind kind;
  int64_t layers;
  bool bidirectional;
};

class NnRnnAgainstReference : public ::testing::TestWithParam<Case> {};

TEST_P(NnRnnAgainstReference, OutputsAndFinalStates) {
  const Case c = GetParam();
  manual_seed(11);
  const int64_t I = 3, H = 4, T = 5, N = 2, S = c.layers * (c.bidirectional ? 2 : 1);
  const Tensor x = seeded({T, N, I}, 1), h0 = seeded({S, N, H}, 2), c0 = seeded({S, N, H}, 3);
  if (c.kind == Kind::Lstm) {
    nn::LSTM m(nn::LSTMOptions(I, H).num_layers(c.layers).bidirectional(c.bidirectional));
    m->to(kFloat64);
    const auto [out, state] = m(x, std::make_tuple(h0, c0));
    const TensorList ref = reference_layers(c.kind, *m, c.layers, c.bidirectional, x, {h0, c0});
    EXPECT_TRUE(all_close(out, ref[0], 1e-12, 1e-12));
    EXPECT_TRUE(all_close(std::get<0>(state), ref[1], 1e-12, 1e-12));
    EXPECT_TRUE(all_close(std::get<1>(state), ref[2], 1e-12, 1e-12));
    return;
  }
  std::shared_ptr<nn::Module> m;
  std::tuple<Tensor, Tensor> r;
  if (c.kind == Kind::Gru) {
    nn::GRU g(nn::GRUOptions(I, H).num_layers(c.layers).bidirectional(c.bidirectional));
    g->to(kFloat64);
    r = g(x, h0);
    m = g.ptr();
  } else {
    nn::RNN g(nn::RNNOptions(I, H).num_layers(c.layers).bidirectional(c.bidirectional).nonlinearity(
        c.kind == Kind::Relu ? kReLU : kTanh));
    g->to(kFloat64);
    r = g(x, h0);
    m = g.ptr();
  }
  const TensorList ref = reference_layers(c.kind, *m, c.layers, c.bidirectional, x, {h0});
  EXPECT_TRUE(all_close(std::get<0>(r), ref[0], 1e-12, 1e-12));
  EXPECT_TRUE(all_close(std::get<1>(r), ref[1], 1e-12, 1e-12));
}

INSTANTIATE_TEST_SUITE_P(Kinds, NnRnnAgainstReference,
                         ::testing::Values(Case{Kind::Lstm, 1, false}, Case{Kind::Lstm, 2, true},
                                           Case{Kind::Gru, 1, false}, Case{Kind::Gru, 2, true},
                                           Case{Kind::Tanh, 2, false}, Case{Kind::Relu, 1, true}));

TEST(NnRnn, LstmFloat32MatchesFloat64) {
  manual_seed(5);
  nn::LSTM m(nn::LSTMOptions(6, 8).num_layers(2).bidirectional(true));
  const Tensor x = seeded({7, 3, 6}, 4, kFloat32);
  const auto [out32, s32] = m(x);
  m->to(kFloat64);
  const auto [out64, s64] = m(x.to(kFloat64));
  EXPECT_TRUE(all_close(out32, out64, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(std::get<1>(s32), std::get<1>(s64), 1e-5, 1e-6));
}

TEST(NnRnn, BatchFirstAndUnbatchedAreTheSameComputation) {
  manual_seed(7);
  nn::GRU g(nn::GRUOptions(3, 4).num_layers(2));
  nn::GRU gb(nn::GRUOptions(3, 4).num_layers(2).batch_first(true));
  gb->load_state_dict(g->state_dict());
  const Tensor x = seeded({5, 2, 3}, 1, kFloat32), h0 = seeded({2, 2, 4}, 2, kFloat32);
  const auto [y, h] = g(x, h0);
  const auto [yb, hb] = gb(x.transpose(0, 1), h0);  // the states stay (layers, N, H)
  EXPECT_TRUE(all_close(yb, y.transpose(0, 1), 0, 0));
  EXPECT_TRUE(all_close(hb, h, 0, 0));
  const auto [yu, hu] = g(x.select(1, 1), h0.select(1, 1));  // (L, in), states (layers, H)
  EXPECT_TRUE(all_close(yu, y.select(1, 1), 1e-6, 1e-7));
  EXPECT_TRUE(all_close(hu, h.select(1, 1), 1e-6, 1e-7));

  nn::LSTM l(nn::LSTMOptions(3, 4).batch_first(true));
  const auto [ly, ls] = l(x.transpose(0, 1));
  const auto [lu, lus] = l(x.select(1, 0));
  EXPECT_EQ(ly.sizes(), IntArrayRef({2, 5, 4}));
  EXPECT_EQ(lu.sizes(), IntArrayRef({5, 4}));
  EXPECT_EQ(std::get<1>(lus).sizes(), IntArrayRef({1, 4}));
  EXPECT_TRUE(all_close(lu, ly.select(0, 0), 1e-6, 1e-7));
}

TEST(NnRnn, DropoutAppliesBetweenLayersInTrainingOnly) {
  manual_seed(9);
  nn::LSTM m(nn::LSTMOptions(3, 4).num_layers(2).dropout(0.5));
  nn::LSTM plain(nn::LSTMOptions(3, 4).num_layers(2));
  plain->load_state_dict(m->state_dict());
  const Tensor x = seeded({4, 2, 3}, 1, kFloat32);
  m->eval();
  EXPECT_TRUE(all_close(std::get<0>(m(x)), std::get<0>(plain(x)), 0, 0));
  m->train();
  EXPECT_FALSE(all_close(std::get<0>(m(x)), std::get<0>(plain(x)), 1e-3, 1e-4));
}

TEST(NnRnn, GradientsReachEveryParameter) {
  manual_seed(13);
  nn::LSTM m(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  m->to(kFloat64);
  const Tensor x = seeded({4, 2, 3}, 1, kFloat64);
  expect_parameter_grads_match_finite_differences(*m, [&] {
    const auto [out, state] = m(x);
    return out.sum() + (std::get<1>(state) * std::get<1>(state)).sum();
  });
}

TEST(NnRnn, PrintsItsOptions) {
  std::ostringstream os;
  os << *nn::LSTM(nn::LSTMOptions(8, 16).num_layers(2));
  EXPECT_EQ(os.str(),
            "LSTM(input_size=8, hidden_size=16, num_layers=2, bias=true, batch_first=false, dropout=0, "
            "bidirectional=false)");
  std::ostringstream r;
  r << *nn::RNN(nn::RNNOptions(2, 3).nonlinearity(kReLU));
  EXPECT_NE(r.str().find("nonlinearity=relu"), std::string::npos);
}

TEST(NnRnn, BadOptionsAndInputsNameTheLayer) {
  EXPECT_EMBER_ERROR(nn::LSTM(nn::LSTMOptions(3, 0)), "LSTM", "hidden_size > 0");
  EXPECT_EMBER_ERROR(nn::GRU(nn::GRUOptions(3, 4).num_layers(0)), "GRU", "num_layers >= 1");
  EXPECT_EMBER_ERROR(nn::RNN(nn::RNNOptions(3, 4).dropout(1.5)), "RNN", "dropout in [0, 1]");
  EXPECT_EMBER_ERROR(nn::RNN(nn::RNNOptions(3, 4).nonlinearity("gelu")), "RNN", "nonlinearity", "gelu");
  nn::LSTM m(nn::LSTMOptions(3, 4).num_layers(2));
  EXPECT_EMBER_ERROR(m(zeros({5, 2, 6})), "LSTM", "input_size = 3", "[5, 2, 6]");
  EXPECT_EMBER_ERROR(m(zeros({2, 5, 2, 3})), "LSTM", "(seq_len, batch, input_size)", "[2, 5, 2, 3]");
  EXPECT_EMBER_ERROR(m(zeros({0, 2, 3})), "LSTM", "at least one step");
  EXPECT_EMBER_ERROR(m(zeros({5, 2, 3}, kFloat64)), "LSTM", "dtype float32", "float64");
  EXPECT_EMBER_ERROR(m(zeros({5, 2, 3}), std::make_tuple(zeros({1, 2, 4}), zeros({2, 2, 4}))), "LSTM",
                     "initial state of shape [2, 2, 4]", "[1, 2, 4]");
  nn::GRU g(3, 4);
  EXPECT_EMBER_ERROR(g(zeros({5, 3}), zeros({1, 2, 4})), "GRU", "[1, 4]", "unbatched");
}

// ---- cells ----

TEST(NnRnnCell, StepsAgreeWithTheLayersOverOneStep) {
  manual_seed(17);
  const Tensor x = seeded({3, 5}, 1, kFloat32), h = seeded({3, 6}, 2, kFloat32), c = seeded({3, 6}, 3, kFloat32);
  auto copy_params = [](nn::Module& layer, const nn::Module& cell) {
    TensorDict d;
    for (const auto& [k, v] : cell.state_dict()) d[k + "_l0"] = v;
    layer.load_state_dict(d);
  };
  nn::LSTMCell lc(5, 6);
  nn::LSTM l(5, 6);
  copy_params(*l, *lc);
  const auto [h1, c1] = lc(x, std::make_tuple(h, c));
  const auto [out, st] = l(x.unsqueeze(0), std::make_tuple(h.unsqueeze(0), c.unsqueeze(0)));
  EXPECT_TRUE(all_close(h1, out.select(0, 0), 0, 0));
  EXPECT_TRUE(all_close(c1, std::get<1>(st).select(0, 0), 0, 0));

  nn::GRUCell gc(5, 6);
  nn::GRU g(5, 6);
  copy_params(*g, *gc);
  EXPECT_TRUE(all_close(gc(x, h), std::get<0>(g(x.unsqueeze(0), h.unsqueeze(0))).select(0, 0), 0, 0));

  nn::RNNCell rc(nn::RNNCellOptions(5, 6).nonlinearity(kReLU));
  nn::RNN r(nn::RNNOptions(5, 6).nonlinearity(kReLU));
  copy_params(*r, *rc);
  EXPECT_TRUE(all_close(rc(x, h), std::get<0>(r(x.unsqueeze(0), h.unsqueeze(0))).select(0, 0), 0, 0));
}

TEST(NnRnnCell, DefaultStateIsZeroAndUnbatchedInputsWork) {
  manual_seed(19);
  nn::LSTMCell lc(4, 3);
  const Tensor x = seeded({2, 4}, 1, kFloat32);
  const auto [h, c] = lc(x);
  const auto [hz, cz] = lc(x, std::make_tuple(zeros({2, 3}), zeros({2, 3})));
  EXPECT_TRUE(all_close(h, hz, 0, 0));
  EXPECT_TRUE(all_close(c, cz, 0, 0));
  const auto [hu, cu] = lc(x.select(0, 1));
  EXPECT_EQ(hu.sizes(), IntArrayRef({3}));
  EXPECT_TRUE(all_close(hu, h.select(0, 1), 1e-6, 1e-7));
  nn::GRUCell gc(nn::GRUCellOptions(4, 3).bias(false));
  EXPECT_EQ(names(gc->named_parameters()), (std::vector<std::string>{"weight_ih", "weight_hh"}));
  EXPECT_EQ(gc(x.select(0, 0)).sizes(), IntArrayRef({3}));
}

TEST(NnRnnCell, BadInputsNameTheCell) {
  nn::LSTMCell lc(4, 3);
  EXPECT_EMBER_ERROR(lc(zeros({2, 5})), "LSTMCell", "input_size = 4", "[2, 5]");
  EXPECT_EMBER_ERROR(lc(zeros({2, 4}), std::make_tuple(zeros({2, 3}), zeros({3, 3}))), "LSTMCell",
                     "state of shape [2, 3]", "[3, 3]");
  nn::RNNCell rc(4, 3);
  EXPECT_EMBER_ERROR(rc(zeros({2, 4}, kFloat64)), "RNNCell", "dtype float32");
  std::ostringstream os;
  os << *rc;
  EXPECT_EQ(os.str(), "RNNCell(input_size=4, hidden_size=3, bias=true, nonlinearity=tanh)");
}

}  // namespace
}  // namespace ember::testing
