// Custom autograd Functions (ember/custom_function.h): the user's backward
// is what autograd runs, with the recording rules of the Note there.
#include <gtest/gtest.h>

#include <functional>

#include "ember/autograd.h"
#include "ember/custom_function.h"
#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using autograd::AutogradContext;
using autograd::Function;
using autograd::tensor_list;
using testing::all_close;
using testing::values;

// ---- the functions under test ----

struct Cube : Function<Cube> {
  static Tensor forward(AutogradContext& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * x * x;
  }
  static tensor_list backward(AutogradContext& ctx, tensor_list grad_outputs) {
    Tensor x = ctx.get_saved_variables()[0];
    return {grad_outputs[0] * 3.0 * x * x};
  }
};

// What the last Scale::forward saw; the tests read it.
bool scale_needed_x_grad = false, scale_needed_k_grad = false;

struct Scale : Function<Scale> {
  static Tensor forward(AutogradContext& ctx, const Tensor& x, double k) {
    scale_needed_x_grad = ctx.needs_input_grad(0);
    scale_needed_k_grad = ctx.needs_input_grad(1);
    ctx.saved_data["k"] = k;
    return x * k;
  }
  static tensor_list backward(AutogradContext& ctx, tensor_list grad_outputs) {
    return {grad_outputs[0] * std::get<double>(ctx.saved_data["k"]), Tensor()};
  }
};

struct AddOneInPlace : Function<AddOneInPlace> {
  static Tensor forward(AutogradContext& ctx, Tensor x) {
    x.add_(1.0);
    ctx.mark_dirty({x});
    return x;
  }
  static tensor_list backward(AutogradContext&, tensor_list grad_outputs) { return {grad_outputs[0]}; }
};

// Returns (2x, x > 0 as a float mask); the mask carries no gradient.
// `materialize` says whether backward gets zeros for the unused mask.
TensorList mask_grads_seen;  // the gradients the last backward received

struct DoubleAndMask : Function<DoubleAndMask> {
  static tensor_list forward(AutogradContext& ctx, const Tensor& x, bool materialize) {
    Tensor mask = (x > 0.0).to(x.dtype());
    ctx.mark_non_differentiable({mask});
    ctx.set_materialize_grads(materialize);
    return {x * 2.0, mask};
  }
  static tensor_list backward(AutogradContext&, tensor_list grad_outputs) {
    mask_grads_seen = grad_outputs;
    return {grad_outputs[0] * 2.0, Tensor()};
  }
};

struct TwoAndThreeTimes : Function<TwoAndThreeTimes> {
  static tensor_list forward(AutogradContext&, const Tensor& x) { return {x * 2.0, x * 3.0}; }
  static tensor_list backward(AutogradContext&, tensor_list g) { return {g[0] * 2.0 + g[1] * 3.0}; }
};

// k * (xs[0] + xs[1] + ...): a TensorList argument takes one slot per element.
struct ScaledSum : Function<ScaledSum> {
  static Tensor forward(AutogradContext& ctx, const TensorList& xs, double k) {
    ctx.saved_data["k"] = k;
    ctx.saved_data["n"] = static_cast<int64_t>(xs.size());
    Tensor sum = xs[0].clone();
    for (size_t i = 1; i < xs.size(); ++i) sum.add_(xs[i]);
    return sum * k;
  }
  static tensor_list backward(AutogradContext& ctx, tensor_list g) {
    const double k = std::get<double>(ctx.saved_data["k"]);
    tensor_list grads(static_cast<size_t>(std::get<int64_t>(ctx.saved_data["n"])), g[0] * k);
    grads.emplace_back();  // k
    return grads;
  }
};

struct Identity : Function<Identity> {
  static Tensor forward(AutogradContext&, const Tensor& x) { return x; }
  static tensor_list backward(AutogradContext&, tensor_list g) { return g; }
};

// Saves its own output.
struct Exp : Function<Exp> {
  static Tensor forward(AutogradContext& ctx, const Tensor& x) {
    Tensor r = x.exp();
    ctx.save_for_backward({r});
    return r;
  }
  static tensor_list backward(AutogradContext& ctx, tensor_list g) { return {g[0] * ctx.get_saved_variables()[0]}; }
};

struct Renamed : Function<Renamed> {
  static constexpr const char* name = "Doubler";
  static Tensor forward(AutogradContext&, const Tensor& x) { return x * 2.0; }
  static tensor_list backward(AutogradContext&, tensor_list g) { return {g[0] * 2.0}; }
};

struct TooFewGrads : Function<TooFewGrads> {
  static Tensor forward(AutogradContext&, const Tensor& x, double) { return x.clone(); }
  static tensor_list backward(AutogradContext&, tensor_list g) { return {g[0]}; }
};

struct WrongShapeGrad : Function<WrongShapeGrad> {
  static Tensor forward(AutogradContext&, const Tensor& x) { return x.clone(); }
  static tensor_list backward(AutogradContext&, tensor_list g) { return {g[0].sum()}; }
};

struct GradForDouble : Function<GradForDouble> {
  static Tensor forward(AutogradContext&, const Tensor& x, double) { return x.clone(); }
  static tensor_list backward(AutogradContext&, tensor_list g) { return {g[0], g[0]}; }
};

// ---- helpers ----

// d sum(v * f(x)) / dx by central differences, in float64.
std::vector<double> numerical_grad(const std::function<Tensor(const Tensor&)>& f, const Tensor& x, const Tensor& v,
                                   double eps = 1e-6) {
  NoGradGuard no_grad;
  std::vector<double> out;
  for (int64_t j = 0; j < x.numel(); ++j) {
    Tensor plus = x.detach().clone(), minus = x.detach().clone();
    plus.data_ptr<double>()[j] += eps;
    minus.data_ptr<double>()[j] -= eps;
    const double fp = (f(plus) * v).sum().item<double>(), fm = (f(minus) * v).sum().item<double>();
    out.push_back((fp - fm) / (2 * eps));
  }
  return out;
}

void expect_near(const std::vector<double>& actual, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tol) << "element " << i;
}

Tensor ones_f64(IntArrayRef sizes) { return ones(sizes, kFloat64); }

// ---- tests ----

TEST(CustomFunction, CubeGradientMatchesFiniteDifferences) {
  manual_seed(1);
  Tensor x = randn({2, 3}, kFloat64).requires_grad_();
  Tensor v = randn({2, 3}, kFloat64);
  Tensor y = Cube::apply(x);
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "CubeBackward");
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(values(y), values(x.detach() * x.detach() * x.detach()));
  autograd::backward({y}, {v});
  expect_near(values(x.grad()), numerical_grad([](const Tensor& t) { return Cube::apply(t); }, x, v), 1e-7);
}

TEST(CustomFunction, BackwardWrittenWithOpsIsDifferentiableAgain) {
  Tensor x = tensor({1.0, -2.0, 0.5}).requires_grad_();
  Tensor y = Cube::apply(x);
  Tensor dx = autograd::grad({y}, {x}, {ones_f64({3})}, std::nullopt, /*create_graph=*/true)[0];
  EXPECT_TRUE(all_close(dx.detach(), tensor({3.0, 12.0, 0.75})));
  Tensor ddx = autograd::grad({dx}, {x}, {ones_f64({3})})[0];
  EXPECT_TRUE(all_close(ddx, tensor({6.0, -12.0, 3.0})));  // 6x
}

TEST(CustomFunction, NonTensorArgumentsGetAnEmptySlotAndSavedData) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = Scale::apply(x, 2.5);
  EXPECT_TRUE(scale_needed_x_grad);
  EXPECT_FALSE(scale_needed_k_grad);
  EXPECT_EQ(y.grad_fn()->name(), "ScaleBackward");
  EXPECT_EQ(y.grad_fn()->next_functions().size(), 2u);  // x, k
  EXPECT_FALSE(y.grad_fn()->next_functions()[1].valid());
  autograd::backward({y}, {ones_f64({2})});
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2.5, 2.5}));
}

TEST(CustomFunction, RecordsNothingWithoutGradModeOrInputsThatRequireGrad) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  {
    NoGradGuard no_grad;
    Tensor y = Scale::apply(x, 2.0);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_FALSE(y.grad_fn());
    EXPECT_FALSE(scale_needed_x_grad);
  }
  Tensor y = Scale::apply(tensor({1.0}), 2.0);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(values(y), (std::vector<double>{2.0}));
}

TEST(CustomFunction, ForwardRunsWithGradModeOff) {
  struct ChecksGradMode : Function<ChecksGradMode> {
    static Tensor forward(AutogradContext&, const Tensor& x) {
      EXPECT_FALSE(is_grad_enabled());
      Tensor y = x * 2.0;
      EXPECT_FALSE(y.requires_grad());  // forward's own ops are not recorded
      return y;
    }
    static tensor_list backward(AutogradContext&, tensor_list g) { return {g[0] * 2.0}; }
  };
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = ChecksGradMode::apply(x);
  EXPECT_TRUE(is_grad_enabled());
  EXPECT_EQ(y.grad_fn()->name(), "ChecksGradModeBackward");
}

TEST(CustomFunction, MarkDirtyGivesTheInputTheNewHistory) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = Scale::apply(a, 2.0);  // a non-leaf: [2, 4]
  const uint32_t version = h._version();
  Tensor y = AddOneInPlace::apply(h);
  EXPECT_TRUE(y.is_same(h));
  EXPECT_GT(h._version(), version);
  EXPECT_EQ(values(h), (std::vector<double>{3.0, 5.0}));
  ASSERT_TRUE(h.grad_fn());
  EXPECT_EQ(h.grad_fn()->name(), "AddOneInPlaceBackward");
  EXPECT_EQ(h.grad_fn()->next_functions()[0].function->name(), "ScaleBackward");
  autograd::backward({h}, {ones_f64({2})});
  EXPECT_EQ(values(a.grad()), (std::vector<double>{2.0, 2.0}));
}

TEST(CustomFunction, MarkDirtyRefusesALeafThatRequiresGrad) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  EXPECT_EMBER_ERROR(AddOneInPlace::apply(a), "AddOneInPlace", "leaf tensor that requires grad", "in-place");
  // Without recording it is a plain in-place op.
  Tensor b = tensor({1.0});
  AddOneInPlace::apply(b);
  EXPECT_EQ(values(b), (std::vector<double>{2.0}));
}

TEST(CustomFunction, NonDifferentiableOutputsDoNotRequireGrad) {
  Tensor x = tensor({-1.0, 2.0, 3.0}).requires_grad_();
  tensor_list out = DoubleAndMask::apply(x, /*materialize=*/true);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].requires_grad());
  EXPECT_FALSE(out[1].requires_grad());
  EXPECT_EQ(values(out[1]), (std::vector<double>{0.0, 1.0, 1.0}));
  autograd::backward({out[0]}, {ones_f64({3})});
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2.0, 2.0, 2.0}));
  ASSERT_EQ(mask_grads_seen.size(), 2u);
  ASSERT_TRUE(mask_grads_seen[1].defined());  // materialized
  EXPECT_EQ(values(mask_grads_seen[1]), (std::vector<double>{0.0, 0.0, 0.0}));
}

TEST(CustomFunction, SetMaterializeGradsFalsePassesUndefinedGradients) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  tensor_list out = DoubleAndMask::apply(x, /*materialize=*/false);
  autograd::backward({out[0]}, {ones_f64({2})});
  ASSERT_EQ(mask_grads_seen.size(), 2u);
  EXPECT_FALSE(mask_grads_seen[1].defined());
  EXPECT_EQ(values(x.grad()), (std::vector<double>{2.0, 2.0}));
}

TEST(CustomFunction, SavedTensorModifiedInPlaceIsAnError) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = Scale::apply(a, 1.0);
  Tensor y = Cube::apply(h);
  {
    NoGradGuard no_grad;
    h.mul_(2.0);
  }
  EXPECT_EMBER_ERROR(autograd::backward({y}, {ones_f64({2})}), "CubeBackward", "modified by an in-place operation",
                     "version 1", "expected version 0");
}

TEST(CustomFunction, WrongNumberOfGradientsIsAnError) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = TooFewGrads::apply(x, 3.0);
  EXPECT_EMBER_ERROR(autograd::backward({y}, {ones_f64({1})}), "TooFewGradsBackward", "returned 1 gradients",
                     "expected 2");
}

TEST(CustomFunction, WrongGradientShapeIsAnError) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = WrongShapeGrad::apply(x);
  EXPECT_EMBER_ERROR(autograd::backward({y}, {ones_f64({2})}), "WrongShapeGradBackward", "shape []", "shape [2]");
}

TEST(CustomFunction, GradientForANonTensorArgumentIsAnError) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = GradForDouble::apply(x, 1.0);
  EXPECT_EMBER_ERROR(autograd::backward({y}, {ones_f64({1})}), "GradForDoubleBackward", "argument 1",
                     "not a tensor");
}

TEST(CustomFunction, MultipleOutputs) {
  Tensor x = tensor({1.0, -1.0}).requires_grad_();
  tensor_list out = TwoAndThreeTimes::apply(x);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].grad_fn() == out[1].grad_fn());
  EXPECT_EQ(out[0].output_nr(), 0u);
  EXPECT_EQ(out[1].output_nr(), 1u);
  autograd::backward({out[0], out[1]}, {ones_f64({2}), tensor({10.0, 100.0})});
  EXPECT_EQ(values(x.grad()), (std::vector<double>{32.0, 302.0}));
  // Only one output used: the other's gradient arrives as zeros.
  Tensor z = tensor({1.0}).requires_grad_();
  autograd::backward({TwoAndThreeTimes::apply(z)[1]}, {ones_f64({1})});
  EXPECT_EQ(values(z.grad()), (std::vector<double>{3.0}));
}

TEST(CustomFunction, TensorListArgumentsTakeOneSlotPerElement) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = tensor({3.0, 4.0});  // needs no gradient
  Tensor c = tensor({5.0, 6.0}).requires_grad_();
  Tensor y = ScaledSum::apply(TensorList{a, b, c}, 0.5);
  EXPECT_EQ(values(y), (std::vector<double>{4.5, 6.0}));
  const auto& edges = y.grad_fn()->next_functions();
  ASSERT_EQ(edges.size(), 4u);  // a, b, c, k
  EXPECT_TRUE(edges[0].valid());
  EXPECT_FALSE(edges[1].valid());
  EXPECT_TRUE(edges[2].valid());
  EXPECT_FALSE(edges[3].valid());
  autograd::backward({y}, {ones_f64({2})});
  EXPECT_EQ(values(a.grad()), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(values(c.grad()), (std::vector<double>{0.5, 0.5}));
  EXPECT_FALSE(b.grad().defined());
}

TEST(CustomFunction, ReturningAnInputLeavesItsHistoryAlone) {
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = Scale::apply(a, 3.0);
  Tensor y = Identity::apply(h);
  EXPECT_FALSE(y.is_same(h));
  EXPECT_EQ(h.grad_fn()->name(), "ScaleBackward");
  EXPECT_EQ(y.grad_fn()->name(), "IdentityBackward");
  autograd::backward({y}, {ones_f64({2})});
  EXPECT_EQ(values(a.grad()), (std::vector<double>{3.0, 3.0}));
}

TEST(CustomFunction, SavedOutputIsUsableAndMakesNoReferenceCycle) {
  Tensor x = tensor({0.0, 1.0}).requires_grad_();
  Tensor y = Exp::apply(x);
  std::weak_ptr<Node> node = y.grad_fn();
  autograd::backward({y}, {ones_f64({2})}, /*retain_graph=*/true);
  EXPECT_TRUE(all_close(x.grad(), tensor({1.0, std::exp(1.0)})));
  y = Tensor();
  EXPECT_TRUE(node.expired());  // the node kept its output without owning it
}

TEST(CustomFunction, SecondBackwardWithoutRetainGraphIsAnError) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = Cube::apply(x);
  autograd::backward({y}, {ones_f64({1})});
  EXPECT_EMBER_ERROR(autograd::backward({y}, {ones_f64({1})}), "CubeBackward", "second time");
}

TEST(CustomFunction, NameMemberOverridesTheTypeName) {
  Tensor x = tensor({1.0}).requires_grad_();
  EXPECT_EQ(Renamed::apply(x).grad_fn()->name(), "DoublerBackward");
}

TEST(CustomFunction, ComposesWithBuiltInOps) {
  Tensor x = tensor({0.5, 1.5}).requires_grad_();
  Tensor y = (Cube::apply(x.sin()) * 2.0).sum();  // d/dx 2 sin(x)^3 = 6 sin(x)^2 cos(x)
  y.backward();
  const std::vector<double> xs = {0.5, 1.5};
  std::vector<double> expected;
  for (double v : xs) expected.push_back(6 * std::sin(v) * std::sin(v) * std::cos(v));
  expect_near(values(x.grad()), expected, 1e-12);
}

}  // namespace
}  // namespace ember
