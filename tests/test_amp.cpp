// Autocast (which ops run in which dtype, gradients back to float32) and
// GradScaler (scaling, skipped steps, growth and backoff).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/dispatcher.h"
#include "ember/amp.h"
#include "ember/ember.h"
#include "ember/optim/sgd.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace F = ember::nn::functional;

TEST(Autocast, MatrixProductsAndConvolutionsRunInTheLowerDtype) {
  manual_seed(0);
  const Tensor a = randn({8, 16}), b = randn({16, 4});
  const Tensor w = randn({3, 2, 3, 3}), x = randn({1, 2, 6, 6});
  // The references, outside autocast: float32 products of the inputs rounded
  // to bfloat16, then rounded once (what a bf16 kernel accumulating in
  // float32 gives, to within the order of its sums).
  auto rounded = [](const Tensor& t) { return t.to(kBFloat16).to(kFloat32); };
  const Tensor want_mm = rounded(rounded(a).matmul(rounded(b)));
  const Tensor want_conv = rounded(F::conv2d(rounded(x), rounded(w)));
  amp::autocast guard(kBFloat16);
  const Tensor c = a.matmul(b);
  EXPECT_EQ(c.dtype(), kBFloat16);
  EXPECT_TRUE(all_close(c.to(kFloat32), want_mm, 1.0 / 128, 1e-6));  // one bf16 rounding
  EXPECT_EQ(F::linear(a, b.t()).dtype(), kBFloat16);
  EXPECT_EQ(F::linear(a.to(kBFloat16), b.t(), zeros({4})).dtype(), kBFloat16);  // mixed inputs: cast, not refused
  const Tensor conv = F::conv2d(x, w);
  EXPECT_EQ(conv.dtype(), kBFloat16);
  EXPECT_TRUE(all_close(conv.to(kFloat32), want_conv, 1.0 / 128, 1e-6));
  EXPECT_EQ(a.to(kFloat64).matmul(b.to(kFloat64)).dtype(), kFloat64);  // float64 is never cast
}

TEST(Autocast, ReductionsLossesAndSoftmaxRunInFloat32) {
  const Tensor h = randn({4, 10}).to(kBFloat16);
  amp::autocast guard(kBFloat16);
  EXPECT_EQ(F::softmax(h, -1).dtype(), kFloat32);
  EXPECT_EQ(h.sum().dtype(), kFloat32);
  EXPECT_EQ(F::cross_entropy(h, tensor({1, 0, 3, 9})).dtype(), kFloat32);
  EXPECT_EQ(h.exp().dtype(), kFloat32);
  // Other ops keep type promotion: bf16 + f32 is f32, bf16 relu stays bf16.
  EXPECT_EQ((h + ones({4, 10})).dtype(), kFloat32);
  EXPECT_EQ(h.relu().dtype(), kBFloat16);
}

TEST(Autocast, GradientsFlowBackToFloat32ParametersAndMatchFloat32Training) {
  manual_seed(1);
  const Tensor x = randn({32, 20}), y = randint(0, 5, {32});
  const Tensor w0 = randn({5, 20}) * 0.3;
  Tensor w_ref = w0.clone().requires_grad_();
  F::cross_entropy(F::linear(x, w_ref), y).backward();
  Tensor w = w0.clone().requires_grad_();
  Tensor loss;
  {
    amp::autocast guard(kBFloat16);
    loss = F::cross_entropy(F::linear(x, w), y);
  }
  EXPECT_EQ(loss.dtype(), kFloat32);
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  EXPECT_TRUE(all_close(w.grad(), w_ref.grad(), 5e-2, 5e-3));
}

TEST(Autocast, ScopesNestAndRestore) {
  const Tensor a = randn({2, 2});
  EXPECT_FALSE(amp::is_autocast_enabled());
  {
    amp::autocast outer(kBFloat16);
    EXPECT_TRUE(amp::is_autocast_enabled());
    {
      amp::autocast inner(kFloat16);
      EXPECT_EQ(amp::autocast_dtype(), kFloat16);
      EXPECT_EQ(a.mm(a).dtype(), kFloat16);
      {
        amp::autocast off(kBFloat16, /*enabled=*/false);
        EXPECT_EQ(a.mm(a).dtype(), kFloat32);
      }
      EXPECT_EQ(a.mm(a).dtype(), kFloat16);
    }
    EXPECT_EQ(amp::autocast_dtype(), kBFloat16);
    EXPECT_EQ(a.mm(a).dtype(), kBFloat16);
  }
  EXPECT_FALSE(amp::is_autocast_enabled());
  EXPECT_EQ(a.mm(a).dtype(), kFloat32);
}

TEST(Autocast, PoliciesNameRegisteredOpsAndBadDtypesAreErrors) {
  for (const char* op : {"mm", "bmm", "addmm", "convolution", "flash_attention"}) {
    EXPECT_NE(Dispatcher::instance().find(op), nullptr) << op;
    EXPECT_EQ(amp::cast_policy(op), amp::CastPolicy::LowerPrecision) << op;
  }
  for (const char* op : {"softmax", "log_softmax", "layer_norm", "cross_entropy_loss", "sum", "mean", "logsumexp"}) {
    EXPECT_NE(Dispatcher::instance().find(op), nullptr) << op;
    EXPECT_EQ(amp::cast_policy(op), amp::CastPolicy::Float32) << op;
  }
  EXPECT_EQ(amp::cast_policy("add"), amp::CastPolicy::Promote);
  EXPECT_EMBER_ERROR(amp::autocast guard(kFloat32), "amp::autocast", "bfloat16 or float16");
}

TEST(GradScaler, ScalesUnscalesAndStepsOnFiniteGradients) {
  Tensor p = ones({3}).requires_grad_();
  optim::SGD sgd({p}, optim::SGDOptions(0.5));
  amp::GradScaler scaler(amp::GradScalerOptions{.init_scale = 8.0, .growth_interval = 2});
  const Tensor loss = (p * tensor({1.0f, 2.0f, 3.0f})).sum();
  const Tensor scaled = scaler.scale(loss);
  EXPECT_DOUBLE_EQ(scaled.item<double>(), 48.0);
  scaled.backward();
  EXPECT_TRUE(scaler.step(sgd));  // grads unscaled to (1, 2, 3), then p -= 0.5 * g
  EXPECT_TRUE(all_close(p.detach(), tensor({0.5f, 0.0f, -0.5f}), 0, 0));
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.get_scale(), 8.0);
  sgd.zero_grad();
  scaler.scale((p * 1.0).sum()).backward();
  EXPECT_TRUE(scaler.step(sgd));
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.get_scale(), 16.0);  // two clean steps: grown
}

TEST(GradScaler, SkipsTheStepAndBacksOffOnInfOrNaN) {
  Tensor p = ones({2}).requires_grad_();
  optim::SGD sgd({p}, optim::SGDOptions(0.1));
  amp::GradScaler scaler(amp::GradScalerOptions{.init_scale = 1024.0});
  const double inf = std::numeric_limits<double>::infinity();
  scaler.scale((p * tensor({1.0, inf}).to(kFloat32)).sum()).backward();
  EXPECT_FALSE(scaler.step(sgd));
  EXPECT_TRUE(all_close(p.detach(), ones({2}), 0, 0));  // untouched
  scaler.update();
  EXPECT_DOUBLE_EQ(scaler.get_scale(), 512.0);

  amp::GradScaler restored;
  restored.load_state_dict(scaler.state_dict());
  EXPECT_DOUBLE_EQ(restored.get_scale(), 512.0);
  EXPECT_EMBER_ERROR(restored.update(), "GradScaler::update");
  EXPECT_EMBER_ERROR(amp::GradScaler(amp::GradScalerOptions{.backoff_factor = 2.0}), "backoff_factor");
}

}  // namespace
}  // namespace ember::testing
