// Gradients of the recurrent layers and cells in float64 (gradcheck against
// finite differences): inputs, initial states and every parameter, through
// stacked, bidirectional, batch_first and unbatched calls; second derivatives
// of the LSTM (the composite route of autograd/formulas_rnn.cpp).
//   AutogradRnn.*
#include <gtest/gtest.h>

#include <string>

#include "ember/autograd.h"
#include "ember/gradcheck.h"
#include "ember/nn/modules/rnn.h"
#include "ember/nn/modules/rnn_cell.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace nn = ember::nn;
using autograd::gradcheck;
using autograd::GradcheckResult;
using autograd::gradgradcheck;

Tensor input(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return (randn(sizes, kFloat64, &g) * 0.7).requires_grad_();
}

// gradcheck (or gradgradcheck) of `forward` over the leading inputs and every
// parameter of `m` (in float64): gradcheck perturbs the parameters in place.
template <class Fn>
GradcheckResult check_module(nn::Module& m, TensorList inputs, Fn forward, bool second_order = false) {
  m.to(kFloat64);
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return second_order ? gradgradcheck(forward, inputs) : gradcheck(forward, inputs);
}

TEST(AutogradRnn, LstmStackedBidirectional) {
  manual_seed(1);
  nn::LSTM m(nn::LSTMOptions(3, 2).num_layers(2).bidirectional(true));
  const Tensor x = input({3, 2, 3}, 1), h0 = input({4, 2, 2}, 2), c0 = input({4, 2, 2}, 3);
  const GradcheckResult r = check_module(*m, {x, h0, c0}, [&](const TensorList& in) {
    const auto [out, state] = m(in[0], std::make_tuple(in[1], in[2]));
    return TensorList{out, std::get<0>(state), std::get<1>(state)};
  });
  EXPECT_TRUE(r) << r.report;
}

TEST(AutogradRnn, LstmBatchFirstUnbatchedAndNoBias) {
  manual_seed(2);
  nn::LSTM m(nn::LSTMOptions(2, 3).batch_first(true).bias(false));
  const GradcheckResult r = check_module(*m, {input({2, 4, 2}, 4), input({4, 2}, 5)}, [&](const TensorList& in) {
    const auto [out, state] = m(in[0]);
    const auto [out_u, state_u] = m(in[1]);
    return TensorList{out, std::get<1>(state), out_u, std::get<1>(state_u)};
  });
  EXPECT_TRUE(r) << r.report;
}

TEST(AutogradRnn, LstmSecondDerivatives) {
  manual_seed(3);
  nn::LSTM m(nn::LSTMOptions(2, 2).bidirectional(true));
  const GradcheckResult r = check_module(
      *m, {input({2, 1, 2}, 6), input({2, 1, 2}, 7), input({2, 1, 2}, 8)},
      [&](const TensorList& in) {
        const auto [out, state] = m(in[0], std::make_tuple(in[1], in[2]));
        return TensorList{out, std::get<1>(state)};
      },
      /*second_order=*/true);
  EXPECT_TRUE(r) << r.report;
}

TEST(AutogradRnn, GruStackedBidirectional) {
  manual_seed(4);
  nn::GRU m(nn::GRUOptions(3, 2).num_layers(2).bidirectional(true));
  const GradcheckResult r = check_module(*m, {input({3, 2, 3}, 9), input({4, 2, 2}, 10)}, [&](const TensorList& in) {
    const auto [out, h] = m(in[0], in[1]);
    return TensorList{out, h};
  });
  EXPECT_TRUE(r) << r.report;
}

TEST(AutogradRnn, RnnTanhAndRelu) {
  for (const char* act : {kTanh, kReLU}) {
    SCOPED_TRACE(act);
    manual_seed(5);
    nn::RNN m(nn::RNNOptions(3, 2).num_layers(2).nonlinearity(act));
    const GradcheckResult r = check_module(*m, {input({3, 2, 3}, 11)}, [&](const TensorList& in) {
      const auto [out, h] = m(in[0]);
      return TensorList{out, h};
    });
    EXPECT_TRUE(r) << r.report;
  }
}

TEST(AutogradRnn, Cells) {
  manual_seed(6);
  nn::LSTMCell lc(3, 2);
  GradcheckResult r = check_module(*lc, {input({2, 3}, 12), input({2, 2}, 13), input({2, 2}, 14)},
                                   [&](const TensorList& in) {
                                     const auto [h, c] = lc(in[0], std::make_tuple(in[1], in[2]));
                                     return TensorList{h, c};
                                   });
  EXPECT_TRUE(r) << r.report;
  nn::GRUCell gc(3, 2);
  r = check_module(*gc, {input({2, 3}, 15), input({2, 2}, 16)},
                   [&](const TensorList& in) { return TensorList{gc(in[0], in[1])}; });
  EXPECT_TRUE(r) << r.report;
  nn::RNNCell rc(3, 2);
  r = check_module(*rc, {input({3}, 17), input({2}, 18)},
                   [&](const TensorList& in) { return TensorList{rc(in[0], in[1])}; });
  EXPECT_TRUE(r) << r.report;
}

}  // namespace
}  // namespace ember::testing
