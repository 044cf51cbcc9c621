// Second derivatives of the activations: each fused f_backward op has its own
// formula (autograd/formulas_activation.cpp), checked here by gradgradcheck
// away from the kinks.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/gradcheck.h"
#include "ember/nn/functional/activation.h"

namespace ember {
namespace {

namespace F = ember::nn::functional;

// Float64 values in [-5, 5) that keep 0.05 away from the kinks 0 and +-3.
Tensor away_from_kinks(IntArrayRef shape, uint64_t seed) {
  manual_seed(seed);
  Tensor x = rand(shape, kFloat64) * 10 - 5;
  for (double k : {0.0, 3.0, -3.0}) x = where((x - k).abs().lt(0.05), x + 0.1, x);
  return x.detach().requires_grad_();
}

void expect_second_derivatives(const autograd::GradcheckFunction& fn, const char* what) {
  const Tensor x = away_from_kinks({3, 7}, 5);
  const autograd::GradcheckResult first = autograd::gradcheck(fn, {x});
  EXPECT_TRUE(first.ok) << what << ": " << first.report;
  const autograd::GradcheckResult second = autograd::gradgradcheck(fn, {x});
  EXPECT_TRUE(second.ok) << what << ": " << second.report;
}

TEST(ActivationGradgrad, EveryActivationIsTwiceDifferentiable) {
  expect_second_derivatives([](const TensorList& in) { return TensorList{F::leaky_relu(in[0], 0.3)}; }, "leaky_relu");
  expect_second_derivatives([](const TensorList& in) { return TensorList{F::elu(in[0], 1.7)}; }, "elu");
  expect_second_derivatives([](const TensorList& in) { return TensorList{F::hardswish(in[0])}; }, "hardswish");
  expect_second_derivatives([](const TensorList& in) { return TensorList{F::hardsigmoid(in[0])}; }, "hardsigmoid");
  expect_second_derivatives([](const TensorList& in) { return TensorList{F::mish(in[0])}; }, "mish");
  expect_second_derivatives([](const TensorList& in) { return TensorList{F::log_sigmoid(in[0])}; }, "log_sigmoid");
}

}  // namespace
}  // namespace ember
