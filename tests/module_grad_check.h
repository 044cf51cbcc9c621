// Checks the value of every parameter's gradient, not only that it exists:
// for each parameter p and a random direction v, the gradient's projection
// <dL/dp, v> must equal the central finite difference
// (L(p + eps v) - L(p - eps v)) / (2 eps), in float64, and be non-zero.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "ember/generator.h"
#include "ember/nn.h"

namespace ember::testing {

// `module` must already be float64; `loss()` runs the forward and returns a
// scalar. Randomness inside it (dropout) repeats: the generator is reseeded
// before every call.
inline void expect_parameter_grads_match_finite_differences(nn::Module& module, const std::function<Tensor()>& loss,
                                                            double eps = 1e-6, double tol = 1e-6) {
  auto run = [&] {
    manual_seed(1234);
    return loss();
  };
  module.zero_grad();
  run().backward();
  int64_t direction_seed = 77;
  for (const auto& entry : module.named_parameters()) {
    const std::string& name = entry.key();
    Tensor p = entry.value();
    ASSERT_EQ(p.dtype(), kFloat64) << name;
    ASSERT_TRUE(p.grad().defined()) << name << " got no gradient";
    manual_seed(static_cast<uint64_t>(direction_seed++));
    const Tensor v = randn(p.sizes(), kFloat64);
    const double analytic = (p.grad() * v).sum().item<double>();
    double numeric = 0;
    {
      NoGradGuard no_grad;
      p.add_(v * eps);
      const double plus = run().item<double>();
      p.sub_(v * (2 * eps));
      const double minus = run().item<double>();
      p.add_(v * eps);
      numeric = (plus - minus) / (2 * eps);
    }
    EXPECT_NE(analytic, 0.0) << name << ": the gradient is zero along a random direction";
    EXPECT_NEAR(analytic, numeric, tol * (1 + std::abs(numeric))) << name;
  }
}

}  // namespace ember::testing
