// The autograd engine: graph building, backward/grad, grad modes, in-place
// and view histories, hooks, errors. Derivative formulas of single ops are
// checked by gradcheck (autograd_gradcheck.cpp); here a few ops stand in.
#include <gtest/gtest.h>

#include <thread>

#include "autograd/autograd_meta.h"
#include "ember/autograd.h"
#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using testing::all_close;
using testing::values;

Tensor leaf(std::initializer_list<double> v) { return tensor(v).requires_grad_(); }

TEST(AutogradEngine, ProductRuleAndAccumulation) {
  Tensor a = leaf({1, 2, 3});
  Tensor b = leaf({4, 5, 6});
  Tensor y = (a * b).sum();
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward");
  y.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_EQ(values(a.grad()), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{1, 2, 3}));
  y.backward();  // accumulates
  EXPECT_EQ(values(a.grad()), (std::vector<double>{8, 10, 12}));
}

// A linear layer's weight gradient reaches the weight through t()'s backward
// as a transposed view; it is stored without a copy, as a plain contiguous
// tensor, and still accumulates correctly.
TEST(AutogradEngine, TransposedGradientIsStoredWithoutACopy) {
  Tensor w = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}).view({2, 3}).requires_grad_();
  Tensor x = tensor({1.0, -1.0, 2.0, 0.5, 0.0, 1.0}).view({2, 3});
  linear(x, w).sum().backward();
  ASSERT_TRUE(w.grad().is_contiguous());
  EXPECT_FALSE(w.grad().is_view());
  // d/dw of sum(x @ w^T): every row of the gradient is the column sum of x.
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1.5, -1, 3, 1.5, -1, 3}));
  linear(x, w).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{3, -2, 6, 3, -2, 6}));
}

// Two leaves whose gradients are views of one tensor (add's backward passes the
// same gradient on to both t() nodes): neither may keep it, or accumulating
// into one would change the other.
TEST(AutogradEngine, GradientsThatShareMemoryAreNotAliased) {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0}).view({2, 2}).requires_grad_();
  Tensor b = tensor({5.0, 6.0, 7.0, 8.0}).view({2, 2}).requires_grad_();
  (a.t() + b.t()).sum().backward();
  (a.t() * 2).sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>(4, 3.0)));
  EXPECT_EQ(values(b.grad()), (std::vector<double>(4, 1.0)));
}

TEST(AutogradEngine, FanOutAndFanIn) {
  Tensor a = leaf({2, 3});
  Tensor y = (a * a + a).sum();  // dy/da = 2a + 1
  y.backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{5, 7}));
  // The same tensor used by two branches that meet again.
  Tensor b = leaf({1.5});
  Tensor c = b.exp();
  Tensor z = (c * c.sin() + c).sum();
  z.backward();
  const double e = std::exp(1.5);
  EXPECT_NEAR(values(b.grad())[0], (std::sin(e) + e * std::cos(e) + 1) * e, 1e-12);
}

TEST(AutogradEngine, GradientsOfBroadcastAndDtypes) {
  Tensor a = randn({3, 1}, kFloat64).requires_grad_();
  Tensor b = randn({4}, kFloat32).requires_grad_();
  Tensor y = (a + b).sum();  // a broadcast over 4 columns, b over 3 rows; promoted to f64
  y.backward();
  EXPECT_EQ(a.grad().dtype(), kFloat64);
  EXPECT_EQ(b.grad().dtype(), kFloat32);
  EXPECT_EQ(values(a.grad()), (std::vector<double>(3, 4.0)));
  EXPECT_EQ(values(b.grad()), (std::vector<double>(4, 3.0)));
}

TEST(AutogradEngine, LongChainDoesNotOverflowTheStack) {
  Tensor x = leaf({1.0});
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y * 1.0 + 0.0;
  y.backward();
  EXPECT_EQ(values(x.grad())[0], 1.0);
  // A graph that is never run is freed without recursion too.
  Tensor z = x;
  for (int i = 0; i < 100000; ++i) z = z + 1.0;
  z = Tensor();
}

TEST(AutogradEngine, GradModes) {
  Tensor a = leaf({1, 2});
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = a * 2;
    EXPECT_FALSE(y.requires_grad());
    {
      EnableGradGuard enable;
      EXPECT_TRUE((a * 2).requires_grad());
    }
    // Grad mode is per thread.
    bool other_thread_enabled = false;
    std::thread t([&] { other_thread_enabled = is_grad_enabled(); });
    t.join();
    EXPECT_TRUE(other_thread_enabled);
  }
  EXPECT_TRUE(is_grad_enabled());
  {
    InferenceMode guard;
    EXPECT_TRUE(is_inference_mode_enabled());
    EXPECT_FALSE((a * 2).requires_grad());
  }
  EXPECT_FALSE(is_inference_mode_enabled());
  EXPECT_TRUE((a * 2).requires_grad());
}

TEST(AutogradEngine, OnlyFloatingTensorsRequireGrad) {
  Tensor i = tensor({1, 2});
  EXPECT_EMBER_ERROR(i.requires_grad_(), "requires_grad_", "floating", "int64");
  Tensor a = leaf({1, 2});
  Tensor idx = a.argmax();
  EXPECT_FALSE(idx.requires_grad());
  Tensor cmp = a > 1.0;
  EXPECT_FALSE(cmp.requires_grad());
}

TEST(AutogradEngine, DetachSharesDataNotHistory) {
  Tensor a = leaf({1, 2});
  Tensor y = a * 3;
  Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.data_ptr(), y.data_ptr());
  Tensor z = y * 1;
  z.detach_();
  EXPECT_FALSE(z.requires_grad());
  EXPECT_TRUE(z.is_leaf());
}

TEST(AutogradEngine, SavedTensorModifiedInPlaceIsAnError) {
  Tensor a = leaf({1, 2});
  Tensor y = a.exp();  // exp saves its result
  Tensor z = y * 2;    // mul saves y (as its input)
  y.add_(1);
  EXPECT_EMBER_ERROR(z.sum().backward(), "modified by an in-place operation", "version 1", "expected version 0",
                     "[float64 [2]]", "Backward");
}

TEST(AutogradEngine, InPlaceOnLeafIsRefused) {
  Tensor a = leaf({1, 2});
  EXPECT_EMBER_ERROR(a.add_(1), "add_", "leaf", "in-place");
  EXPECT_EMBER_ERROR(a.select(0, 0).mul_(2), "mul_", "view of a leaf");
  {
    NoGradGuard no_grad;  // allowed without recording (optimiser updates)
    a.add_(1);
  }
  EXPECT_EQ(values(a), (std::vector<double>{2, 3}));
}

TEST(AutogradEngine, InPlaceOnNonLeafRebasesHistory) {
  Tensor a = leaf({1, 2});
  Tensor x = a * 2;
  x.mul_(3);
  x.exp_();
  EXPECT_EQ(x.grad_fn()->name(), "ExpBackward");
  x.sum().backward();
  // d/da exp(6a) = 6 exp(6a)
  EXPECT_TRUE(all_close(a.grad(), tensor({6 * std::exp(6.0), 6 * std::exp(12.0)}), 1e-12));
}

TEST(AutogradEngine, InPlaceOnViewUpdatesTheBase) {
  Tensor a = leaf({1, 2, 3});
  Tensor x = a * 1;
  Tensor v = x.slice(0, 1, 3);
  v.mul_(10);
  EXPECT_EQ(x.grad_fn()->name(), "CopySlices");
  EXPECT_EQ(values(x), (std::vector<double>{1, 20, 30}));
  (x * x).sum().backward();  // d/da of a0^2 + 100 a1^2 + 100 a2^2
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2, 400, 600}));

  // The view's own history follows the base's.
  Tensor b = leaf({1, 2, 3});
  Tensor y = b * 2;
  Tensor w = y.select(0, 2);
  y.mul_(y);  // y = 4 b^2, and w sees it
  w.backward();
  EXPECT_EQ(values(b.grad()), (std::vector<double>{0, 0, 24}));
}

TEST(AutogradEngine, CopyIntoSlicesOfABuffer) {
  Tensor w = leaf({1, 2});
  Tensor buf = zeros({4}, kFloat64);
  buf.slice(0, 1, 3).copy_(w * 3);
  EXPECT_TRUE(buf.requires_grad());
  (buf * tensor({1.0, 2.0, 3.0, 4.0})).sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{6, 9}));
}

TEST(AutogradEngine, ToDtypeIsDifferentiable) {
  Tensor a = leaf({1.5, 2.5});
  Tensor y = a.to(kFloat32) * 2;
  EXPECT_EQ(y.dtype(), kFloat32);
  y.sum().backward();
  EXPECT_EQ(a.grad().dtype(), kFloat64);
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2, 2}));
}

TEST(AutogradEngine, RetainGrad) {
  Tensor a = leaf({1, 2});
  Tensor h = a * 3;
  h.retain_grad();
  EXPECT_TRUE(h.retains_grad());
  (h * h).sum().backward();
  EXPECT_EQ(values(h.grad()), (std::vector<double>{6, 12}));
  Tensor g = a * 3;
  (g * g).sum().backward();
  EXPECT_FALSE(g.grad().defined());
}

TEST(AutogradEngine, HooksSeeAndReplaceGradients) {
  Tensor a = leaf({1, 2});
  std::vector<double> seen;
  const uint64_t h = a.register_hook([&](const Tensor& g) {
    seen = values(g);
    return g * 2;
  });
  Tensor mid = a * 5;
  mid.register_hook([](const Tensor& g) { return g + 1; });
  mid.sum().backward();
  EXPECT_EQ(seen, (std::vector<double>{10, 10}));  // (1 + 1) * 5
  EXPECT_EQ(values(a.grad()), (std::vector<double>{20, 20}));
  a.remove_hook(h);
  a.set_grad(Tensor());
  (a * 5).sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{5, 5}));
}

TEST(AutogradEngine, PostAccumulateGradHook) {
  Tensor a = leaf({1, 2});
  int calls = 0;
  a.register_post_accumulate_grad_hook([&](const Tensor& t) {
    ++calls;
    EXPECT_TRUE(t.is_same(a));
    EXPECT_EQ(values(t.grad()), (std::vector<double>{3, 3}));
  });
  (a * 3).sum().backward();
  EXPECT_EQ(calls, 1);
}

TEST(AutogradEngine, GradFunction) {
  Tensor x = leaf({2.0});
  Tensor y = x * x * x;
  TensorList g = autograd::grad({y}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_EQ(values(g[0])[0], 12.0);
  EXPECT_FALSE(x.grad().defined());  // grad() leaves .grad alone
  TensorList g2 = autograd::grad({g[0]}, {x});
  EXPECT_EQ(values(g2[0])[0], 12.0);  // 6x

  Tensor unused = leaf({1.0});
  Tensor z = x * 2;
  EXPECT_EMBER_ERROR(autograd::grad({z}, {unused}), "grad", "not part of the graph", "allow_unused");
  TensorList r = autograd::grad({x * 2}, {x, unused}, {}, std::nullopt, false, /*allow_unused=*/true);
  EXPECT_EQ(values(r[0])[0], 2.0);
  EXPECT_FALSE(r[1].defined());
}

TEST(AutogradEngine, GradWithRespectToAnIntermediate) {
  Tensor x = leaf({1, 2});
  Tensor h = x * 2;
  Tensor y = (h * h).sum();
  TensorList g = autograd::grad({y}, {h});
  EXPECT_EQ(values(g[0]), (std::vector<double>{4, 8}));
}

TEST(AutogradEngine, BackwardWithInputs) {
  Tensor a = leaf({1});
  Tensor b = leaf({2});
  (a * b).backward(Tensor(), std::nullopt, false, {a});
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2}));
  EXPECT_FALSE(b.grad().defined());
}

TEST(AutogradEngine, BadInputErrors) {
  Tensor a = leaf({1, 2});
  EXPECT_EMBER_ERROR((a * 2).backward(), "backward", "one-element", "[2]");
  EXPECT_EMBER_ERROR(tensor({1.0}).backward(), "backward", "does not require grad");
  Tensor y = (a * a).sum();
  y.backward();
  EXPECT_EMBER_ERROR(y.backward(), "second time", "retain_graph");
  Tensor z = a * 2;
  EXPECT_EMBER_ERROR(z.backward(ones({3}, kFloat64)), "backward", "grad_outputs[0]", "[3]", "[2]");
  EXPECT_EMBER_ERROR(autograd::grad({z.sum()}, {tensor({1.0})}), "grad", "does not require grad");
}

TEST(AutogradEngine, AnomalyModeNamesTheForwardOp) {
  Tensor a = leaf({-1.0, 4.0});
  {
    autograd::DetectAnomalyGuard anomaly;
    Tensor y = a.sqrt().sum();
    EXPECT_EMBER_ERROR(y.backward(), "SqrtBackward", "NaN", "sqrt(Tensor[2] float64)");
  }
  Tensor y = a.sqrt().sum();
  y.backward();  // without anomaly mode the NaN just flows
  EXPECT_TRUE(std::isnan(values(a.grad())[0]));
}

TEST(AutogradEngine, GraphvizOfTheGraph) {
  Tensor a = leaf({1, 2});
  Tensor w = randn({2, 3}, kFloat64).requires_grad_();
  Tensor y = a.unsqueeze(0).mm(w).relu().sum();
  const std::string dot = autograd::to_dot(y);
  for (const char* part : {"digraph", "SumBackward", "ReluBackward", "MmBackward", "UnsqueezeBackward",
                           "AccumulateGrad", "leaf [2, 3] float64", "saved"}) {
    EXPECT_NE(dot.find(part), std::string::npos) << part << "\n" << dot;
  }
}

// ---- regressions found in review (expected values from PyTorch 1.13) ----

TEST(AutogradEngine, BaseOverwrittenAfterAnInPlaceOpOnItsView) {
  Tensor x = leaf({1, 2, 3, 4});
  Tensor w = leaf({1, 1, 1, 1});
  Tensor b = x * 2;
  b.slice(0, 0, 2).mul_(3);
  b.copy_(w);
  b.sum().backward();
  EXPECT_EQ(values(w.grad()), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_TRUE(!x.grad().defined() || values(x.grad()) == (std::vector<double>{0, 0, 0, 0}));

  Tensor y = leaf({1.5, 2.5, 3.5});
  Tensor c = y * 1;
  Tensor v = c.slice(0, 0, 2);
  c.add_(1);
  (v.floor().sum() + c.sum()).backward();  // floor's zero gradient reaches a stale view
  EXPECT_EQ(values(y.grad()), (std::vector<double>{1, 1, 1}));
}

TEST(AutogradEngine, SecondDerivativeThroughAnInPlaceOpThatReadsSelf) {
  Tensor x = leaf({1, 2, 3});
  Tensor c = x * 1;
  c.mul_(x);  // c = x^2
  Tensor g = autograd::grad({(c * c).sum()}, {x}, {}, std::nullopt, true)[0];  // 4 x^3
  EXPECT_EQ(values(g), (std::vector<double>{4, 32, 108}));
  EXPECT_EQ(values(autograd::grad({g.sum()}, {x})[0]), (std::vector<double>{12, 48, 108}));
}

TEST(AutogradEngine, CreateGraphGradientIsNotSharedBetweenLeaves) {
  Tensor a = leaf({1, 2});
  Tensor b = leaf({3, 4});
  (a + b).sum().backward(Tensor(), std::nullopt, /*create_graph=*/true);
  (a + b).sum().backward();
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2, 2}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{2, 2}));
}

TEST(AutogradEngine, ViewMadeWithoutGradIsAPlainAlias) {
  Tensor x = leaf({1, 2, 3});
  Tensor v;
  {
    NoGradGuard no_grad;
    v = x.slice(0, 0, 2);
  }
  EXPECT_FALSE(v.requires_grad());
  EXPECT_TRUE(v.is_leaf());
  ((x * 1).sum() + (v * 5).sum()).backward();
  EXPECT_EQ(values(x.grad()), (std::vector<double>{1, 1, 1}));
}

TEST(AutogradEngine, RetainGradAndHooksFollowInPlaceOps) {
  Tensor x = leaf({1, 2});
  Tensor y = x * 2;
  y.retain_grad();
  y.mul_(3);
  (y * y).sum().backward();
  EXPECT_EQ(values(y.grad()), (std::vector<double>{12, 24}));  // d/dy of y^2 at the final y

  Tensor b = leaf({1, 2}) * 1;
  Tensor v = b.slice(0, 0, 2);
  v.retain_grad();
  v.mul_(2);
  (v * v).sum().backward();
  EXPECT_EQ(values(v.grad()), (std::vector<double>{4, 8}));

  Tensor z = leaf({1, 2});
  Tensor h = z * 2;
  const uint64_t id = h.register_hook([](const Tensor& g) { return g * 100; });
  h.add_(1);
  h.remove_hook(id);
  h.sum().backward();
  EXPECT_EQ(values(z.grad()), (std::vector<double>{2, 2}));
}

TEST(AutogradEngine, GradRunsNoHooksOffThePath) {
  Tensor x = leaf({1, 2});
  Tensor w = leaf({3, 4});
  int calls = 0;
  w.register_hook([&](const Tensor&) {
    ++calls;
    return Tensor();
  });
  autograd::grad({(x * w).sum()}, {x});
  EXPECT_EQ(calls, 0);
}

TEST(AutogradEngine, RootGradientTakesTheOutputsDtype) {
  Tensor x = ones({2}, kFloat32).requires_grad_();
  (x * 2).backward(ones({2}, kFloat64));
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2, 2}));
}

TEST(AutogradEngine, HookMayNotChangeTheShape) {
  Tensor x = leaf({1, 2});
  x.register_hook([](const Tensor& g) { return g.sum(); });
  EXPECT_EMBER_ERROR((x * 2).sum().backward(), "hook", "changed its shape", "[2]");
}

}  // namespace
}  // namespace ember
