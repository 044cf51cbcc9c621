// The F:: activations composed of ember ops (nn/functional_activation_composite.cpp)
// and the F:: names of ember's elementwise ops: values against the formulas
// written elementwise in double, first and second derivatives by gradcheck,
// and PyTorch's gradients at the kinks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

// Values away from the kinks (so finite differences are exact enough), and both signs.
Tensor sample(uint64_t seed) {
  Generator g(seed);
  return (randn({3, 8}, kFloat64, &g) * 3).requires_grad_();
}

struct Case {
  std::string name;
  std::function<Tensor(const Tensor&)> fn;
  std::function<double(double)> formula;
};

std::vector<Case> cases() {
  constexpr double kSeluAlpha = 1.6732632423543772848170429916717, kSeluScale = 1.0507009873554804934193349852946;
  return {
      {"relu", [](const Tensor& x) { return F::relu(x); }, [](double v) { return std::max(v, 0.0); }},
      {"relu6", [](const Tensor& x) { return F::relu6(x); }, [](double v) { return std::min(std::max(v, 0.0), 6.0); }},
      {"hardtanh", [](const Tensor& x) { return F::hardtanh(x, -2.0, 1.5); },
       [](double v) { return std::min(std::max(v, -2.0), 1.5); }},
      {"gelu", [](const Tensor& x) { return F::gelu(x); },
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {"gelu_tanh", [](const Tensor& x) { return F::gelu(x, "tanh"); },
       [](double v) {
         return 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
       }},
      {"silu", [](const Tensor& x) { return F::silu(x); }, [](double v) { return v / (1 + std::exp(-v)); }},
      {"sigmoid", [](const Tensor& x) { return F::sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"tanh", [](const Tensor& x) { return F::tanh(x); }, [](double v) { return std::tanh(v); }},
      {"softplus", [](const Tensor& x) { return F::softplus(x, 2.0, 4.0); },
       [](double v) { return 2 * v > 4 ? v : std::log1p(std::exp(2 * v)) / 2; }},
      {"selu", [](const Tensor& x) { return F::selu(x); },
       [=](double v) { return kSeluScale * (v > 0 ? v : kSeluAlpha * std::expm1(v)); }},
      {"celu", [](const Tensor& x) { return F::celu(x, 0.5); },
       [](double v) { return v > 0 ? v : 0.5 * std::expm1(v / 0.5); }},
      {"softsign", [](const Tensor& x) { return F::softsign(x); }, [](double v) { return v / (1 + std::fabs(v)); }},
      {"tanhshrink", [](const Tensor& x) { return F::tanhshrink(x); }, [](double v) { return v - std::tanh(v); }},
      {"threshold", [](const Tensor& x) { return F::threshold(x, 0.5, -3.0); },
       [](double v) { return v > 0.5 ? v : -3.0; }},
  };
}

// The formula applied to each value of x, as a tensor of x's shape.
Tensor elementwise(const Tensor& x, const std::function<double(double)>& formula) {
  std::vector<double> out = values(x);
  for (double& v : out) v = formula(v);
  return from_blob(out.data(), x.sizes(), kFloat64).clone();
}

TEST(ActivationComposites, ValuesMatchTheFormulas) {
  const Tensor x = sample(1);
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(all_close(c.fn(x), elementwise(x, c.formula), 1e-12, 1e-12));
    const Tensor y32 = c.fn(x.detach().to(kFloat32));
    EXPECT_EQ(y32.dtype(), kFloat32);
    EXPECT_TRUE(all_close(y32, elementwise(x, c.formula), 1e-5, 1e-6));
  }
}

TEST(ActivationComposites, GradcheckAndGradgradcheck) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const autograd::GradcheckFunction fn = [&](const TensorList& in) { return TensorList{c.fn(in[0])}; };
    const auto first = autograd::gradcheck(fn, {sample(2)});
    EXPECT_TRUE(first.ok) << first.report;
    const auto second = autograd::gradgradcheck(fn, {sample(3)});
    EXPECT_TRUE(second.ok) << second.report;
  }
}

// PyTorch's gradients at the kinks: hardtanh (and relu6) pass none at the
// bounds, threshold none at x == threshold, celu 1 at 0.
TEST(ActivationComposites, GradientsAtTheKinks) {
  const Tensor x = tensor({-1.0, 0.0, 0.5, 1.0, 6.0}).requires_grad_();
  auto grad_of = [&](const Tensor& y) {
    x.set_grad(Tensor());
    y.sum().backward();
    return values(x.grad());
  };
  EXPECT_EQ(grad_of(F::hardtanh(x)), (std::vector<double>{0, 1, 1, 0, 0}));
  EXPECT_EQ(grad_of(F::relu6(x)), (std::vector<double>{0, 0, 1, 1, 0}));
  EXPECT_EQ(grad_of(F::threshold(x, 0.5, 2.0)), (std::vector<double>{0, 0, 0, 1, 1}));
  EXPECT_EQ(grad_of(F::celu(x, 2.0))[1], 1.0);
}

TEST(ActivationComposites, GluHalvesTheDim) {
  const Tensor x = sample(3);  // (3, 8)
  const Tensor y = F::glu(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({3, 4}));
  const Tensor a = x.narrow(1, 0, 4), b = x.narrow(1, 4, 4);
  EXPECT_TRUE(all_close(y, a * b.sigmoid(), 0, 0));
  const auto r = autograd::gradcheck([](const TensorList& in) { return TensorList{F::glu(in[0], 0)}; },
                                     {sample(4).narrow(0, 0, 2).detach().requires_grad_()});
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_EMBER_ERROR(F::glu(sample(5), 0), "glu", "even", "3");
  EXPECT_EMBER_ERROR(F::glu(tensor({1.0}).squeeze()), "glu", "0-d");
}

TEST(ActivationComposites, ArgumentErrors) {
  EXPECT_EMBER_ERROR(F::hardtanh(sample(6), 1.0, -1.0), "hardtanh", "min_val", "max_val");
  EXPECT_EMBER_ERROR(F::celu(sample(7), 0.0), "celu", "alpha");
}

}  // namespace
}  // namespace ember::testing
