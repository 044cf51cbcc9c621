// Derivative formulas of the elementwise ops and the reductions
// (autograd/formulas_elementwise.cpp, autograd/formulas_reduction.cpp):
// hand-checked gradients per family, the special points PyTorch defines
// (pow at 0, ties of maximum/amax/max, zeros in prod/cumprod, the norm at 0),
// and central differences in float64 for first and second derivatives.
// The op-info gradcheck (autograd_gradcheck.cpp) covers every sample.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "ember/autograd.h"
#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::all_close;
using ::ember::testing::values;
using Fn = std::function<Tensor(const Tensor&)>;
using Values = std::vector<double>;

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor f64(std::initializer_list<double> v) { return tensor(v); }

// d sum(f(x)) / dx.
Tensor grad_of(const Fn& f, const Tensor& x) {
  Tensor xr = x.detach().clone().requires_grad_();
  return autograd::grad({f(xr).sum()}, {xr})[0];
}

// Fixed, uneven weights, so a wrong gradient cannot hide behind symmetry.
Tensor weights_like(const Tensor& t) {
  return (arange(t.numel(), kFloat64) * 0.7).sin().add(1.3).reshape(t.sizes());
}

// Central differences of the scalar function h w.r.t. each element of x (float64).
Tensor numeric_grad(const std::function<double(const Tensor&)>& h, const Tensor& x, double eps = 1e-6) {
  Tensor xc = x.detach().clone().contiguous();
  Tensor out = zeros_like(xc);
  double* p = xc.data_ptr<double>();
  for (int64_t i = 0; i < xc.numel(); ++i) {
    const double saved = p[i];
    p[i] = saved + eps;
    const double hi = h(xc);
    p[i] = saved - eps;
    const double lo = h(xc);
    p[i] = saved;
    out.data_ptr<double>()[i] = (hi - lo) / (2 * eps);
  }
  return out;
}

// d sum(f(x) * w) / dx by autograd, with a graph of its own when `create_graph`.
Tensor weighted_grad(const Fn& f, const Tensor& x, const Tensor& w, bool create_graph = false) {
  Tensor xr = x.requires_grad() ? x : x.detach().clone().requires_grad_();
  return autograd::grad({(f(xr) * w).sum()}, {xr}, {}, std::nullopt, create_graph)[0];
}

::testing::AssertionResult matches_differences(const Fn& f, const Tensor& x, double tol = 1e-6) {
  const Tensor w = weights_like(f(x));
  auto h = [&](const Tensor& xs) {
    NoGradGuard no_grad;
    return (f(xs) * w).sum().item<double>();
  };
  return all_close(weighted_grad(f, x, w), numeric_grad(h, x), tol, tol);
}

// Second derivatives: d/dx sum(g(x) * v), g = d sum(f(x) * w) / dx recorded
// with create_graph, against central differences of g.
::testing::AssertionResult second_derivative_matches(const Fn& f, const Tensor& x, double tol = 1e-5) {
  const Tensor w = weights_like(f(x));
  const Tensor v = weights_like(x) - 1;
  Tensor xr = x.detach().clone().requires_grad_();
  const Tensor g = weighted_grad(f, xr, w, /*create_graph=*/true);
  // A gradient that does not depend on x (neg, relu, ...) has a zero second derivative.
  Tensor analytic = g.requires_grad()
                        ? autograd::grad({(g * v).sum()}, {xr}, {}, std::nullopt, false, /*allow_unused=*/true)[0]
                        : Tensor();
  if (!analytic.defined()) analytic = zeros_like(x);
  auto h = [&](const Tensor& xs) { return (weighted_grad(f, xs, w) * v).sum().item<double>(); };
  return all_close(analytic, numeric_grad(h, x), tol, tol);
}

// ---- binary arithmetic ----

TEST(ElementwiseFormulas, MulGradientIsTheOtherFactorSummedOverBroadcastDims) {
  Tensor x = f64({1, 2, 3, 4, 5, 6}).reshape({2, 3}).requires_grad_();
  Tensor y = f64({7, 8, 9}).requires_grad_();
  (x * y).sum().backward();
  EXPECT_EQ(values(x.grad()), (Values{7, 8, 9, 7, 8, 9}));
  EXPECT_EQ(values(y.grad()), (Values{5, 7, 9}));
  EXPECT_EQ(y.grad().sizes(), IntArrayRef({3}));
}

TEST(ElementwiseFormulas, AddAndSubScaleTheOtherGradientByAlpha) {
  Tensor x = f64({1, 2}).requires_grad_();
  Tensor y = f64({3, 4}).requires_grad_();
  (add(x, y, 2.5) + sub(x, y, 3)).sum().backward();
  EXPECT_EQ(values(x.grad()), (Values{2, 2}));
  EXPECT_EQ(values(y.grad()), (Values{-0.5, -0.5}));
}

TEST(ElementwiseFormulas, ScalarOperandsScaleTheGradient) {
  Tensor x = f64({1, 2}).requires_grad_();
  (x * 3 + 2 / x - x.pow(2)).sum().backward();  // 3 - 2/x^2 - 2x
  EXPECT_TRUE(all_close(x.grad(), f64({3 - 2 - 2, 3 - 0.5 - 4})));
}

TEST(ElementwiseFormulas, DivGradients) {
  Tensor x = f64({1, -2}).requires_grad_();
  Tensor y = f64({4, 0.5}).requires_grad_();
  (x / y).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), f64({0.25, 2})));
  EXPECT_TRUE(all_close(y.grad(), f64({-1.0 / 16, 8})));  // -x / y^2
}

TEST(ElementwiseFormulas, RoundedDivisionHasZeroGradient) {
  Tensor x = f64({5, -7}).requires_grad_();
  Tensor y = f64({2, 2}).requires_grad_();
  Tensor q = x.div(y, "floor");
  EXPECT_TRUE(q.requires_grad());
  (q + x).sum().backward();
  EXPECT_EQ(values(x.grad()), (Values{1, 1}));
}

TEST(ElementwiseFormulas, PowAtZeroFollowsPyTorch) {
  // d/dx x^e = e x^(e-1), except 0 where e == 0 (no 0 * inf).
  EXPECT_EQ(values(grad_of([](const Tensor& x) { return x.pow(2); }, f64({0, 3}))), (Values{0, 6}));
  EXPECT_EQ(values(grad_of([](const Tensor& x) { return x.pow(0); }, f64({0, 3}))), (Values{0, 0}));
  // d/de x^e = x^e log x, taken as 0 at x == 0 for e >= 0 (not 0 * -inf).
  const Tensor base = f64({0, 0, 2});
  const Values de = values(grad_of([&](const Tensor& e) { return base.pow(e); }, f64({2, 0, 3})));
  EXPECT_EQ(de[0], 0);
  EXPECT_EQ(de[1], 0);
  EXPECT_NEAR(de[2], 8 * std::log(2.0), 1e-12);
  // A Scalar base: d/dx 2^x = 2^x ln 2.
  EXPECT_TRUE(all_close(grad_of([](const Tensor& x) { return pow(2.0, x); }, f64({1, 3})),
                        f64({2 * std::numbers::ln2, 8 * std::numbers::ln2})));
}

TEST(ElementwiseFormulas, PowMatchesDifferencesInBothArguments) {
  const Tensor e = f64({0.5, 2, -1.5});
  EXPECT_TRUE(matches_differences([&](const Tensor& x) { return x.pow(e); }, f64({1.5, 0.7, 2.2})));
  const Tensor b = f64({1.5, 0.7, 2.2});
  EXPECT_TRUE(matches_differences([&](const Tensor& x) { return b.pow(x); }, e));
  EXPECT_TRUE(second_derivative_matches([&](const Tensor& x) { return x.pow(e); }, f64({1.5, 0.7, 2.2})));
}

// A float64 scalar exponent or base keeps all its digits in the backward
// (once computed as e - 1 and log(base) in float32: 1e-7 relative errors
// that the default gradcheck tolerances let through).
TEST(ElementwiseFormulas, PowWithScalarsIsExactToFloat64) {
  const double third = 1.0 / 3.0;
  const Values dx = values(grad_of([&](const Tensor& x) { return x.pow(third); }, f64({10, 0.25})));
  EXPECT_NEAR(dx[0], third * std::pow(10.0, third - 1), 1e-16);
  EXPECT_NEAR(dx[1], third * std::pow(0.25, third - 1), 1e-15);
  const Values db = values(grad_of([](const Tensor& x) { return pow(3.1, x); }, f64({0.7})));
  EXPECT_NEAR(db[0], std::log(3.1) * std::pow(3.1, 0.7), 1e-15);
}

TEST(ElementwiseFormulas, MaximumAndMinimumSplitTiesHalfAndHalf) {
  Tensor x = f64({1, 2, 3}).requires_grad_();
  Tensor y = f64({3, 2, 1}).requires_grad_();
  maximum(x, y).sum().backward();
  EXPECT_EQ(values(x.grad()), (Values{0, 0.5, 1}));
  EXPECT_EQ(values(y.grad()), (Values{1, 0.5, 0}));
  x.set_grad(Tensor());
  y.set_grad(Tensor());
  minimum(x, y).sum().backward();
  EXPECT_EQ(values(x.grad()), (Values{1, 0.5, 0}));
  EXPECT_EQ(values(y.grad()), (Values{0, 0.5, 1}));
}

TEST(ElementwiseFormulas, RemainderGradients) {
  Tensor x = f64({5.5, -7}).requires_grad_();
  Tensor y = f64({2, 3}).requires_grad_();
  x.remainder(y).sum().backward();
  EXPECT_EQ(values(x.grad()), (Values{1, 1}));
  EXPECT_EQ(values(y.grad()), (Values{-2, 3}));  // -floor(x / y)
}

TEST(ElementwiseFormulas, WhereRoutesTheGradientByTheCondition) {
  Tensor a = f64({1, 2, 3}).requires_grad_();
  Tensor b = f64({4}).requires_grad_();
  where(tensor({true, false, true}), a, b).sum().backward();
  EXPECT_EQ(values(a.grad()), (Values{1, 0, 1}));
  EXPECT_EQ(values(b.grad()), (Values{1}));
}

TEST(ElementwiseFormulas, ComparisonsAndLogicalOpsAreNotDifferentiable) {
  Tensor x = f64({1, 2}).requires_grad_();
  EXPECT_FALSE(x.gt(1).requires_grad());
  EXPECT_FALSE(x.eq(x).requires_grad());
  EXPECT_FALSE(x.isnan().requires_grad());
  EXPECT_FALSE(x.ne(0).logical_and(x.ne(2)).requires_grad());
}

// ---- unary ops ----

TEST(ElementwiseFormulas, UnaryOpsMatchDifferences) {
  const Tensor x = f64({0.3, -1.2, 0.8, 1.7});
  const Tensor pos = f64({0.3, 1.2, 0.8, 1.7});
  const std::vector<std::pair<std::string, Fn>> on_any = {
      {"neg", [](const Tensor& t) { return -t; }},
      {"abs", [](const Tensor& t) { return t.abs(); }},
      {"exp", [](const Tensor& t) { return t.exp(); }},
      {"exp2", [](const Tensor& t) { return t.exp2(); }},
      {"expm1", [](const Tensor& t) { return t.expm1(); }},
      {"sin", [](const Tensor& t) { return t.sin(); }},
      {"cos", [](const Tensor& t) { return t.cos(); }},
      {"tan", [](const Tensor& t) { return t.tan(); }},
      {"tanh", [](const Tensor& t) { return t.tanh(); }},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }},
      {"relu", [](const Tensor& t) { return t.relu(); }},
      {"silu", [](const Tensor& t) { return t.silu(); }},
      {"erf", [](const Tensor& t) { return t.erf(); }},
      {"reciprocal", [](const Tensor& t) { return t.reciprocal(); }},
      {"gelu", [](const Tensor& t) { return t.gelu(); }},
      {"gelu_tanh", [](const Tensor& t) { return t.gelu("tanh"); }},
      {"softplus", [](const Tensor& t) { return t.softplus(); }},
      {"softplus_beta", [](const Tensor& t) { return t.softplus(2, 1); }},
  };
  for (const auto& [name, f] : on_any) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(matches_differences(f, x));
    EXPECT_TRUE(second_derivative_matches(f, x));
  }
  const std::vector<std::pair<std::string, Fn>> on_positive = {
      {"log", [](const Tensor& t) { return t.log(); }},
      {"log2", [](const Tensor& t) { return t.log2(); }},
      {"log1p", [](const Tensor& t) { return t.log1p(); }},
      {"sqrt", [](const Tensor& t) { return t.sqrt(); }},
      {"rsqrt", [](const Tensor& t) { return t.rsqrt(); }},
  };
  for (const auto& [name, f] : on_positive) {
    SCOPED_TRACE(name);
    EXPECT_TRUE(matches_differences(f, pos));
    EXPECT_TRUE(second_derivative_matches(f, pos));
  }
}

TEST(ElementwiseFormulas, PiecewiseConstantOpsHaveZeroGradient) {
  const std::vector<Fn> ops = {
      [](const Tensor& t) { return t.sign(); }, [](const Tensor& t) { return t.floor(); },
      [](const Tensor& t) { return t.ceil(); },  [](const Tensor& t) { return t.round(); },
      [](const Tensor& t) { return t.trunc(); },
  };
  for (const Fn& f : ops) {
    Tensor x = f64({0.3, -1.7}).requires_grad_();
    (f(x) + x).sum().backward();
    EXPECT_EQ(values(x.grad()), (Values{1, 1}));
  }
}

TEST(ElementwiseFormulas, ReluPassesTheGradientWherePositiveOnly) {
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.relu(); }, f64({-1, 0, 2}))), (Values{0, 0, 1}));
}

TEST(ElementwiseFormulas, SoftplusAboveTheThresholdIsTheIdentity) {
  // beta 2, threshold 1: 2 * 0.75 > 1 takes the linear branch.
  const Values g = values(grad_of([](const Tensor& t) { return t.softplus(2, 1); }, f64({0.75, 0.25})));
  EXPECT_EQ(g[0], 1);
  EXPECT_NEAR(g[1], 1 / (1 + std::exp(-0.5)), 1e-12);
}

TEST(ElementwiseFormulas, ClampPassesTheGradientInsideTheClosedRange) {
  auto f = [](const Tensor& t) { return t.clamp(-1, 1); };
  EXPECT_EQ(values(grad_of(f, f64({-2, -1, 0, 1, 2}))), (Values{0, 1, 1, 1, 0}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.clamp(0.5); }, f64({0, 1}))), (Values{0, 1}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.clamp(std::nullopt, 0.5); }, f64({0, 1}))),
            (Values{1, 0}));
}

TEST(ElementwiseFormulas, MaskedFillDropsTheGradientOfFilledPositions) {
  const Tensor mask = tensor({true, false, true});
  EXPECT_EQ(values(grad_of([&](const Tensor& t) { return t.masked_fill(mask, 5); }, f64({1, 2, 3}))),
            (Values{0, 1, 0}));
}

TEST(ElementwiseFormulas, InPlaceOpsUseTheOutOfPlaceFormula) {
  Tensor x = f64({1, 2}).requires_grad_();
  Tensor y = f64({3, 4}).requires_grad_();
  Tensor z = x.clone();
  z.mul_(y);
  z.exp_();
  z.sum().backward();  // d/dx exp(x y) = y exp(x y)
  EXPECT_TRUE(all_close(x.grad(), f64({3 * std::exp(3.0), 4 * std::exp(8.0)}), 1e-12));
  EXPECT_TRUE(all_close(y.grad(), f64({1 * std::exp(3.0), 2 * std::exp(8.0)}), 1e-12));
  Tensor p = f64({3, -2}).requires_grad_();
  Tensor q = p * 1;
  q.pow_(3);
  q.sum().backward();
  EXPECT_EQ(values(p.grad()), (Values{27, 12}));
  Tensor c = f64({-2, 0.5, 3}).requires_grad_();
  Tensor d = c * 1;
  d.clamp_(0, 1);
  d.sum().backward();
  EXPECT_EQ(values(c.grad()), (Values{0, 1, 0}));
}

TEST(ElementwiseFormulas, Float32GradientsKeepTheInputDtype) {
  Tensor x = tensor({1.f, 2.f}).requires_grad_();
  Tensor y = tensor({3.0, 4.0}).requires_grad_();  // float64
  (x * y).sum().backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_EQ(y.grad().dtype(), kFloat64);
  EXPECT_EQ(values(x.grad()), (Values{3, 4}));
}

// ---- reductions ----

TEST(ReductionFormulas, SumAndMeanSpreadTheGradient) {
  const Tensor x = arange(6, kFloat64).reshape({2, 3});
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.sum({1}) * f64({1, 2}); }, x)),
            (Values{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.sum({0}, true) * f64({1, 2, 3}); }, x)),
            (Values{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.mean({0}); }, x)), Values(6, 0.5));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.mean(); }, x)), Values(6, 1.0 / 6));
  // A float64 sum of a float32 input: the gradient comes back float32.
  Tensor y = tensor({1.f, 2.f}).requires_grad_();
  y.sum({}, false, kFloat64).backward();
  EXPECT_EQ(y.grad().dtype(), kFloat32);
  EXPECT_EQ(values(y.grad()), (Values{1, 1}));
}

TEST(ReductionFormulas, ProdIsExactWithZeros) {
  auto prod_all = [](const Tensor& t) { return t.prod(); };
  EXPECT_EQ(values(grad_of(prod_all, f64({2, 3, 4}))), (Values{12, 8, 6}));
  EXPECT_EQ(values(grad_of(prod_all, f64({2, 0, 3}))), (Values{0, 6, 0}));
  EXPECT_EQ(values(grad_of(prod_all, f64({0, 2, 0}))), (Values{0, 0, 0}));
  auto prod_rows = [](const Tensor& t) { return t.prod({1}); };
  EXPECT_EQ(values(grad_of(prod_rows, f64({1, 0, 3, 2, 3, 4}).reshape({2, 3}))), (Values{0, 3, 0, 12, 8, 6}));
}

TEST(ReductionFormulas, ProdOverSeveralDimsMatchesDifferences) {
  const Tensor x = (arange(24, kFloat64) * 0.37).cos().reshape({2, 3, 4});
  Tensor with_zero = x.clone();
  with_zero.index_put_({1, 2, 0}, 0.0);
  for (const Tensor& t : {x, with_zero}) {
    EXPECT_TRUE(matches_differences([](const Tensor& a) { return a.prod({0, 2}); }, t));
    EXPECT_TRUE(matches_differences([](const Tensor& a) { return a.prod({-1}, true); }, t));
    EXPECT_TRUE(matches_differences([](const Tensor& a) { return a.prod(); }, t));
  }
}

TEST(ReductionFormulas, ProdIsTwiceDifferentiableThroughZeros) {
  // Hessian of x0 x1 x2 times ones: row sums of the pairwise products of the others.
  auto hessian_row_sums = [](const Tensor& x) {
    Tensor xr = x.clone().requires_grad_();
    Tensor g = autograd::grad({xr.prod()}, {xr}, {}, std::nullopt, true)[0];
    return values(autograd::grad({g.sum()}, {xr})[0]);
  };
  EXPECT_EQ(hessian_row_sums(f64({2, 0, 3})), (Values{3, 5, 2}));
  EXPECT_EQ(hessian_row_sums(f64({0, 2, 0})), (Values{2, 0, 2}));
  EXPECT_TRUE(second_derivative_matches([](const Tensor& a) { return a.prod({1}); },
                                        f64({1.5, 0, 2, 0.5, 3, 4, 0, 0, 2}).reshape({3, 3})));
}

TEST(ReductionFormulas, AmaxAndAminSplitTiesEvenly) {
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.amax(); }, f64({1, 3, 3, 2}))), (Values{0, 0.5, 0.5, 0}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.amin({1}); }, f64({1, 1, 2, 5, 4, 4}).reshape({2, 3}))),
            (Values{0.5, 0.5, 0, 0, 0.5, 0.5}));
}

TEST(ReductionFormulas, MaxAndMinOverADimSendTheGradientToTheReturnedIndex) {
  const Tensor x = f64({1, 3, 3, 2, 5, 0}).reshape({2, 3});
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return std::get<0>(t.max(1)); }, x)), (Values{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return std::get<0>(t.min(0, true)); }, x)),
            (Values{1, 1, 0, 0, 0, 1}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return std::get<0>(t.max(0)); }, f64({4}).reshape({}))), (Values{1}));
}

TEST(ReductionFormulas, VarAndStdFollowTheCorrection) {
  const Tensor x = f64({1, 2, 3, 4});
  EXPECT_TRUE(all_close(grad_of([](const Tensor& t) { return t.var(); }, x), f64({-1, -1.0 / 3, 1.0 / 3, 1})));
  EXPECT_TRUE(all_close(grad_of([](const Tensor& t) { return t.var({0}, 0); }, x), f64({-0.75, -0.25, 0.25, 0.75})));
  const Tensor m = (arange(12, kFloat64) * 0.9).sin().reshape({3, 4});
  EXPECT_TRUE(matches_differences([](const Tensor& t) { return t.var({1}, 1, true); }, m));
  EXPECT_TRUE(matches_differences([](const Tensor& t) { return t.std({0}); }, m));
  EXPECT_TRUE(matches_differences([](const Tensor& t) { return t.std({}, 0); }, m));
  EXPECT_TRUE(second_derivative_matches([](const Tensor& t) { return t.std({1}); }, m));
  // std of a constant row is 0: its gradient is 0, not NaN.
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.std(); }, f64({2, 2, 2}))), Values(3, 0.0));
}

TEST(ReductionFormulas, NormForEachOrder) {
  const Tensor x = f64({0.5, -1.5, 2, -0.25, 1, 0.75}).reshape({2, 3});
  for (double p : {1.0, 2.0, 3.0, 1.5, 0.5, -1.0, kInf, -kInf}) {
    SCOPED_TRACE(p);
    EXPECT_TRUE(matches_differences([p](const Tensor& t) { return t.norm(p, {1}); }, x));
    EXPECT_TRUE(matches_differences([p](const Tensor& t) { return t.norm(p); }, x));
  }
  EXPECT_TRUE(second_derivative_matches([](const Tensor& t) { return t.norm(2, {0}, true); }, x));
  EXPECT_TRUE(second_derivative_matches([](const Tensor& t) { return t.norm(3); }, x));
  // The subgradient at 0 is 0, and the 0-"norm" (a count) has none.
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.norm(); }, zeros({3}, kFloat64))), Values(3, 0.0));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.norm(0) + t.sum(); }, x)), Values(6, 1.0));
  // The inf-norm splits ties of |x| evenly.
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.norm(kInf); }, f64({-2, 1, 2}))),
            (Values{-0.5, 0, 0.5}));
}

TEST(ReductionFormulas, LogsumexpGradientIsTheSoftmax) {
  const Tensor x = f64({1, 2, 3});
  const Tensor e = x.exp();
  EXPECT_TRUE(all_close(grad_of([](const Tensor& t) { return t.logsumexp({0}); }, x), e / e.sum()));
  const Tensor m = (arange(6, kFloat64) * 1.3).sin().reshape({2, 3});
  EXPECT_TRUE(matches_differences([](const Tensor& t) { return t.logsumexp({1}, true); }, m));
  EXPECT_TRUE(second_derivative_matches([](const Tensor& t) { return t.logsumexp({0}); }, m));
}

TEST(ReductionFormulas, CumsumGradientIsTheReversedCumsum) {
  const Tensor w = f64({1, 2, 3, 4});
  EXPECT_EQ(values(grad_of([&](const Tensor& t) { return t.cumsum(0) * w; }, zeros({4}, kFloat64))),
            (Values{10, 9, 7, 4}));
  const Tensor m = (arange(12, kFloat64) * 0.4).cos().reshape({3, 4});
  EXPECT_TRUE(matches_differences([](const Tensor& t) { return t.cumsum(0); }, m));
  EXPECT_TRUE(matches_differences([](const Tensor& t) { return t.cumsum(-1); }, m));
}

TEST(ReductionFormulas, CumprodIsExactWithZeros) {
  auto cumprod0 = [](const Tensor& t) { return t.cumprod(0); };
  // y = [2, 0, 0, 0]: d sum(y) / dx = [1, x0 (1 + x2 + x2 x3), 0, 0].
  EXPECT_EQ(values(grad_of(cumprod0, f64({2, 0, 3, 4}))), (Values{1, 32, 0, 0}));
  EXPECT_EQ(values(grad_of(cumprod0, f64({0, 2, 3}))), (Values{9, 0, 0}));
  EXPECT_EQ(values(grad_of(cumprod0, f64({2, 0, 3, 0, 5}))), (Values{1, 8, 0, 0, 0}));
  const Tensor m = (arange(12, kFloat64) * 0.6).sin().add(0.2).reshape({3, 4});
  Tensor with_zeros = m.clone();
  with_zeros.index_put_({1, 1}, 0.0);
  with_zeros.index_put_({2, 3}, 0.0);
  with_zeros.index_put_({2, 1}, 0.0);
  for (const Tensor& t : {m, with_zeros}) {
    EXPECT_TRUE(matches_differences([](const Tensor& a) { return a.cumprod(1); }, t));
    EXPECT_TRUE(matches_differences([](const Tensor& a) { return a.cumprod(0); }, t));
    EXPECT_TRUE(second_derivative_matches([](const Tensor& a) { return a.cumprod(1); }, t));
  }
}

TEST(ReductionFormulas, ADtypeArgumentGivesTheGradientBackInTheInputDtype) {
  const std::vector<std::pair<std::string, Fn>> ops = {
      {"sum", [](const Tensor& t) { return t.sum({1}, false, kFloat64); }},
      {"prod", [](const Tensor& t) { return t.prod({0}, true, kFloat64); }},
      {"cumsum", [](const Tensor& t) { return t.cumsum(1, kFloat64); }},
      {"cumprod", [](const Tensor& t) { return t.cumprod(1, kFloat64); }},
  };
  const Tensor x = tensor({0.5f, 2.f, -1.f, 1.5f, 0.f, 3.f}).reshape({2, 3});
  for (const auto& [name, f] : ops) {
    SCOPED_TRACE(name);
    const Tensor g32 = grad_of(f, x);
    EXPECT_EQ(g32.dtype(), kFloat32);
    EXPECT_TRUE(all_close(g32, grad_of(f, x.to(kFloat64)), 1e-6));
  }
}

TEST(ReductionFormulas, ZeroDimInputs) {
  const Tensor x = f64({3}).reshape({});
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.sum({0}); }, x)), (Values{1}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.prod({0}); }, x)), (Values{1}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.cumsum(0); }, x)), (Values{1}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.cumprod(0); }, x)), (Values{1}));
  EXPECT_EQ(values(grad_of([](const Tensor& t) { return t.amax({0}); }, x)), (Values{1}));
}

TEST(ReductionFormulas, ArgReductionsAreNotDifferentiable) {
  Tensor x = f64({1, 2}).requires_grad_();
  EXPECT_FALSE(x.argmax().requires_grad());
  EXPECT_FALSE(x.argmin(0).requires_grad());
  EXPECT_FALSE(x.all().requires_grad());
  EXPECT_FALSE(x.any().requires_grad());
  EXPECT_FALSE(std::get<1>(x.max(0)).requires_grad());
}

}  // namespace
}  // namespace ember
