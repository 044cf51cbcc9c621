// gradcheck itself, and gradcheck over the op-info table.
//
//   Gradcheck.*                  gradcheck and gradgradcheck on hand-written
//                                functions: they pass on correct gradients,
//                                fail on wrong ones naming the element, and
//                                refuse unusable inputs
//   Formulas.MatchDifferentiableFlags  a row flagged differentiable has a
//                                derivative formula, and an op with a formula
//                                is flagged
//   OpInfo/
//     OpInfoGradcheck.MatchesFiniteDifferences/<op>  gradcheck on every
//                                Float64 sample of a differentiable row (see
//                                Note [Which samples])
//     OpInfoGradgradcheck.SecondDerivatives/<op>  gradgradcheck on a
//                                representative subset (kSecondOrder)
// A summary line at the end says how much was checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autograd/formula.h"
#include "core/dispatcher.h"
#include "ember/autograd.h"
#include "ember/gradcheck.h"
#include "tests/op_info.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

using autograd::gradcheck;
using autograd::GradcheckResult;
using autograd::gradgradcheck;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---------------------------------------------------------------------------
// gradcheck on hand-written functions

Tensor input(IntArrayRef sizes, uint64_t seed) {
  Generator g(seed);
  return randn(sizes, kFloat64, &g).requires_grad_();
}

TEST(Gradcheck, PassesOnCorrectGradients) {
  const Tensor x = input({2, 3}, 1), y = input({3}, 2);
  auto fn = [](const TensorList& in) {
    return TensorList{in[0].tanh() * in[1] + in[0].exp() / (in[1].abs() + 1), (in[0] * in[0]).sum({1})};
  };
  const GradcheckResult r = gradcheck(fn, {x, y});
  EXPECT_TRUE(r) << r.report;
  EXPECT_TRUE(contains(r.report, "2 inputs, 2 outputs")) << r.report;
}

TEST(Gradcheck, LeavesTheInputsAsTheyWere) {
  const Tensor x = input({4, 5}, 3).detach().transpose(0, 1).requires_grad_();  // strided
  const Tensor before = x.detach().clone();
  EXPECT_TRUE(gradcheck([](const TensorList& in) { return TensorList{in[0].sin()}; }, {x}));
  EXPECT_TRUE(bitwise_equal(x.detach(), before));
}

TEST(Gradcheck, IgnoresInputsThatDoNotRequireGradAndIntegerOutputs) {
  const Tensor x = input({5}, 4), c = randn({5}, kFloat32);
  auto fn = [](const TensorList& in) {
    auto [values, indices] = (in[0] * in[1].to(kFloat64)).sort();
    return TensorList{values, indices};
  };
  const GradcheckResult r = gradcheck(fn, {x, c});
  EXPECT_TRUE(r) << r.report;
  EXPECT_TRUE(contains(r.report, "1 inputs, 1 outputs")) << r.report;
}

// A backward that is wrong for one element: a hook doubles the gradient of y[1, 2].
TensorList wrong_at_1_2(const TensorList& in) {
  const Tensor y = in[0] * in[1];
  y.register_hook([](const Tensor& g) {
    Tensor scale = ones(g.sizes(), kFloat64);
    scale.select(0, 1).select(0, 2).fill_(2.0);
    return g * scale;
  });
  return {y.sum()};
}

// The number printed right after `label` in a report (NaN when absent).
double number_after(const std::string& report, const std::string& label) {
  const size_t at = report.find(label);
  return at == std::string::npos ? NAN : std::stod(report.substr(at + label.size()));
}

TEST(Gradcheck, FailsOnAWrongGradientAndNamesTheElement) {
  const Tensor x = input({2, 3}, 5), w = input({2, 3}, 6).detach();
  const GradcheckResult r = gradcheck(wrong_at_1_2, {x, w});
  ASSERT_FALSE(r) << r.report;
  EXPECT_TRUE(contains(r.report, "1 of 6 Jacobian elements differ")) << r.report;
  EXPECT_TRUE(contains(r.report, "d output 0[] / d input 0[1, 2]")) << r.report;
  // The report's values: d sum(x * w) / dx[1, 2] is w[1, 2]; the hook doubled it.
  const double w12 = w.select(0, 1).select(0, 2).item<double>();
  EXPECT_NEAR(number_after(r.report, "numerical "), w12, 1e-8) << r.report;
  EXPECT_NEAR(number_after(r.report, "analytical "), 2 * w12, 1e-8) << r.report;
  EXPECT_TRUE(contains(r.report, "atol 1e-05 + rtol 0.001")) << r.report;
}

TEST(Gradcheck, RefusesUnusableInputs) {
  auto fn = [](const TensorList& in) { return TensorList{in[0] * 2}; };
  EXPECT_EMBER_ERROR(gradcheck(fn, {randn({3}).requires_grad_()}), "gradcheck", "Float64");
  EXPECT_EMBER_ERROR(gradcheck(fn, {randn({3}, kFloat64)}), "gradcheck", "no input requires grad");
  const Tensor expanded = randn({1, 3}, kFloat64).expand({2, 3}).detach().requires_grad_();
  EXPECT_EMBER_ERROR(gradcheck(fn, {expanded}), "gradcheck", "share memory");
}

TEST(Gradcheck, GradgradcheckPassesOnCorrectSecondDerivatives) {
  const Tensor x = input({2, 3}, 8), y = input({3}, 9);
  auto fn = [](const TensorList& in) { return TensorList{in[0] * in[0] * in[1].sigmoid(), in[0].tanh().sum()}; };
  const GradcheckResult r = gradgradcheck(fn, {x, y});
  EXPECT_TRUE(r) << r.report;
}

TEST(Gradcheck, GradgradcheckFailsWhenBackwardDropsTheGraph) {
  // The hook detaches the gradient: the first derivative no longer records
  // its dependence on the grad_output v, though it is linear in v.
  const Tensor x = input({4}, 10);
  auto fn = [](const TensorList& in) {
    const Tensor y = in[0].exp();
    y.register_hook([](const Tensor& g) { return g.detach(); });
    return TensorList{y};
  };
  const GradcheckResult r = gradgradcheck(fn, {x});
  ASSERT_FALSE(r) << r.report;
  EXPECT_TRUE(contains(r.report, "gradgradcheck")) << r.report;
  EXPECT_TRUE(contains(r.report, "/ d input 1[")) << r.report;  // input 1 is v
}

// ---------------------------------------------------------------------------
// gradcheck over the op-info table
//
// Note [Which samples]
// A differentiable row is checked on its SampleSize::Small samples in
// Float64. Float64 tensor arguments (not Scalars wrapped as 0-d tensors)
// are the inputs that require grad; integer, bool and other floating
// arguments (copy_ from float32) stay constants. In-place rows work on a
// clone of argument 0; a row's gradcheck_wrapper rewrites the arguments
// (the linalg ops that read one triangle of A). Skipped: samples that must raise (an `error`, or a
// reference that fails), samples with non-finite tensor values (the
// "special" ones) or non-finite results (NaN fill values, var of one
// element, the mean of nothing), and the per-op points listed in kSkips,
// where the function has no derivative.

struct Skip {
  const char* op;
  const char* sample;  // nullptr: the whole op
  const char* why;
};

const std::vector<Skip> kSkips = {
    {"sort", "ties", "equal values: the sorted values have no derivative there"},
    {"sort", "ties_descending", "equal values: the sorted values have no derivative there"},
    {"topk", "ties", "equal values: the selected values have no derivative there"},
    {"topk", "ties_smallest", "equal values: the selected values have no derivative there"},
    {"index_put_", "dim0", "indices 4 and -1 repeat a row without accumulate: the value written last wins, so the "
                           "other has no influence, yet its gradient is grad[row] (as in PyTorch)"},
    {"index_put_", "dim1", "indices 0 and -4 repeat a column without accumulate (see dim0)"},
    {"uniform_", nullptr, "the values do not depend on self: the gradient is zero by definition"},
    {"normal_", nullptr, "the values do not depend on self: the gradient is zero by definition"},
    {"random_", nullptr, "the values do not depend on self: the gradient is zero by definition"},
    {"bernoulli_", nullptr, "0/1 draws: piecewise constant in p, the gradient is zero by definition"},
    {"linalg_qr", "r_mode", "mode='r' computes no Q, and the derivative needs it (an error, as in PyTorch)"},
    {"linalg_qr", "tall_complete", "Q's last m - n columns are any completion: not differentiable (an error, as in "
                                   "PyTorch)"},
    {"linalg_qr", "empty_columns_complete", "complete with m > n (see tall_complete)"},
    {"linalg_svd", "tall_full", "U's last m - n columns are any completion; their gradient is ignored, so finite "
                                "differences of them mean nothing"},
    {"linalg_svd", "wide_full", "Vh's last n - m rows are any completion (see tall_full)"},
    {"linalg_svd", "rank_deficient", "a zero singular value: U's last column is not determined by A, and its "
                                     "gradient divides by it (inf, as in PyTorch)"},
};

const Skip* skip_of(const std::string& op, const std::string& sample) {
  for (const Skip& s : kSkips) {
    if (op == s.op && (s.sample == nullptr || sample == s.sample)) return &s;
  }
  return nullptr;
}

bool is_input(const Tensor& t) { return t.defined() && t.dtype() == kFloat64 && !t.impl()->is_wrapped_number(); }

bool all_finite(const Tensor& t) {
  if (!t.defined() || !t.is_floating_point()) return true;
  for (double v : values(t)) {
    if (!std::isfinite(v)) return false;
  }
  return true;
}

// Every tensor argument (list elements too) is finite. Scalars may not be
// (norm's p = inf); a NaN or inf fill value shows in the results instead.
bool finite_arguments(const Sample& s) {
  for (const IValue& v : s.args) {
    if (v.is_tensor() && !all_finite(v.tensor())) return false;
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) {
        if (!all_finite(t)) return false;
      }
    }
  }
  return true;
}

// pow of a negative base and a fractional exponent is NaN, and d/d exponent
// needs log(base): the base is made positive (|x| + 0.5), keeping its layout.
void prepare(const OpInfo& row, Sample& s) {
  if ((row.name != "pow" && row.name != "pow_") || !s.error.empty()) return;  // error inputs stay as they are
  Tensor base = s.args[0].tensor();
  if (is_input(base)) base.abs_().add_(0.5);
}

// One sample as a function of its Float64 tensors.
struct SampleFunction {
  TensorList inputs;  // each requires grad
  autograd::GradcheckFunction fn;
};

SampleFunction as_function(const OpInfo& row, const Sample& sample) {
  // Where each input goes: (argument, list element or -1).
  std::vector<std::pair<size_t, int64_t>> slots;
  std::vector<size_t> slot_input;
  std::map<const TensorImpl*, size_t> seen;  // a tensor passed twice is one input
  SampleFunction f;
  auto add = [&](const Tensor& t, size_t a, int64_t e) {
    if (!is_input(t)) return;
    auto [it, fresh] = seen.emplace(t.impl(), f.inputs.size());
    if (fresh) f.inputs.push_back(t.detach().requires_grad_());
    slots.emplace_back(a, e);
    slot_input.push_back(it->second);
  };
  for (size_t a = 0; a < sample.args.size(); ++a) {
    const IValue& v = sample.args[a];
    if (v.is_tensor()) add(v.tensor(), a, -1);
    if (v.is_tensor_list()) {
      for (size_t e = 0; e < v.tensor_list().size(); ++e) add(v.tensor_list()[e], a, static_cast<int64_t>(e));
    }
  }
  const bool in_place = row.kind == OpKind::InPlace;
  f.fn = [&row, sample, slots, slot_input, in_place](const TensorList& xs) {
    Sample call = sample;
    for (size_t k = 0; k < slots.size(); ++k) {
      const auto [a, e] = slots[k];
      const Tensor& x = xs[slot_input[k]];
      if (e < 0) call.args[a] = IValue::Payload(x);
      else std::get<TensorList>(call.args[a].payload())[static_cast<size_t>(e)] = x;
    }
    if (in_place) call.args[0] = IValue::Payload(call.args[0].tensor().clone());
    if (row.gradcheck_wrapper) row.gradcheck_wrapper(call.args);
    return run_sample(row, call);
  };
  return f;
}

// Why a sample is not gradchecked, or "" when it is.
std::string unchecked_because(const OpInfo& row, const Sample& s) {
  if (!s.error.empty()) return "must raise";
  if (row.reference && row.reference(RefArgs(s, s.out_dtype.value_or(row.out_dtype(kFloat64)))).fails)
    return "must raise";
  if (const Skip* k = skip_of(row.name, s.name)) return k->why;
  if (!finite_arguments(s)) return "non-finite arguments";
  bool any_input = false;
  for (const IValue& v : s.args) {
    if (v.is_tensor()) any_input |= is_input(v.tensor());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.tensor_list()) any_input |= is_input(t);
    }
  }
  if (!any_input) return "no Float64 tensor argument";
  NoGradGuard no_grad;
  for (const Tensor& out : run_sample(row, copy_sample(s))) {
    if (!all_finite(out)) return "non-finite results";
  }
  return "";
}

// The samples gradcheck runs on for a row (prepared).
std::vector<Sample> checked_samples(const OpInfo& row) {
  std::vector<Sample> out;
  if (!row.differentiable || row.rejects_dtype(kFloat64) ||
      std::find(row.dtypes.begin(), row.dtypes.end(), kFloat64) == row.dtypes.end())
    return out;
  for (Sample& s : row.make_samples(kFloat64, SampleSize::Small)) {
    prepare(row, s);
    if (unchecked_because(row, s).empty()) out.push_back(std::move(s));
  }
  return out;
}

struct Counts {
  std::set<std::string> ops, second_order_ops;
  int64_t samples = 0;
};
Counts& counts() {
  static Counts c;
  return c;
}

class GradcheckSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    const Counts& c = counts();
    if (c.ops.empty() && c.second_order_ops.empty()) return;
    std::cout << "gradcheck: " << c.ops.size() << " ops, " << c.samples << " samples; gradgradcheck: "
              << c.second_order_ops.size() << " ops\n";
  }
};
[[maybe_unused]] ::testing::Environment* const kSummary = ::testing::AddGlobalTestEnvironment(new GradcheckSummary);

TEST(Formulas, MatchDifferentiableFlags) {
  for (const OpInfo& row : op_infos()) {
    const OpEntry* op = Dispatcher::instance().find(row.name);
    ASSERT_NE(op, nullptr) << row.name;
    const bool has_formula = autograd::find_formula(*op) != nullptr;
    if (row.differentiable) {
      EXPECT_TRUE(has_formula) << row.name << " is flagged differentiable in its tests/op_info_<family>.cpp row but has no "
                               << "derivative formula (autograd/formulas_*.cpp)";
    } else {
      EXPECT_FALSE(has_formula) << row.name << " has a derivative formula but its op-info row is not flagged "
                                << "differentiable (tests/op_info_<family>.cpp)";
      EXPECT_TRUE(autograd::is_non_differentiable(*op))
          << row.name << " is not differentiable but is not registered as such (register_non_differentiable)";
    }
  }
}

class OpInfoGradcheck : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpInfoGradcheck, MatchesFiniteDifferences) {
  const OpInfo& row = *GetParam();
  const std::vector<Sample> samples = checked_samples(row);
  if (samples.empty()) {
    const Skip* whole_op = skip_of(row.name, "");
    ASSERT_NE(whole_op, nullptr) << row.name << ": no sample can be gradchecked";
    GTEST_SKIP() << whole_op->why;
  }
  counts().ops.insert(row.name);
  for (const Sample& s : samples) {
    SCOPED_TRACE(row.name + " sample '" + s.name + "'");
    ++counts().samples;
    const SampleFunction f = as_function(row, s);
    try {
      const GradcheckResult r = gradcheck(f.fn, f.inputs);
      EXPECT_TRUE(r) << r.report;
    } catch (const Error& e) {
      ADD_FAILURE() << "ember::Error: " << e.what();
    }
  }
}

// The ops gradgradcheck runs on: one or more from each family.
const std::set<std::string> kSecondOrder = {
    "mul", "div", "pow", "exp", "tanh", "sigmoid", "gelu", "softplus", "maximum", "where",  // elementwise
    "atan2", "logaddexp", "lerp",
    "sum", "mean", "prod", "var", "norm", "logsumexp",                                      // reductions
    "mm", "addmm", "index", "cat", "expand", "select",                                      // linear algebra, views
    "softmax", "log_softmax", "layer_norm", "convolution", "cross_entropy_loss", "avg_pool2d", "gather", "elu"};  // nn

class OpInfoGradgradcheck : public ::testing::TestWithParam<const OpInfo*> {};

TEST_P(OpInfoGradgradcheck, SecondDerivatives) {
  const OpInfo& row = *GetParam();
  const std::vector<Sample> samples = checked_samples(row);
  ASSERT_FALSE(samples.empty()) << row.name << ": no sample can be gradchecked";
  counts().second_order_ops.insert(row.name);
  for (const Sample& s : samples) {
    SCOPED_TRACE(row.name + " sample '" + s.name + "'");
    const SampleFunction f = as_function(row, s);
    try {
      const GradcheckResult r = gradgradcheck(f.fn, f.inputs);
      EXPECT_TRUE(r) << r.report;
    } catch (const Error& e) {
      ADD_FAILURE() << "ember::Error: " << e.what();
    }
  }
}

std::vector<const OpInfo*> rows_where(bool (*keep)(const OpInfo&)) {
  std::vector<const OpInfo*> out;
  for (const OpInfo& r : op_infos()) {
    if (keep(r)) out.push_back(&r);
  }
  return out;
}

std::string row_name(const ::testing::TestParamInfo<const OpInfo*>& info) { return info.param->name; }

bool is_differentiable(const OpInfo& r) { return r.differentiable; }
bool in_second_order_subset(const OpInfo& r) { return kSecondOrder.count(r.name) > 0; }

INSTANTIATE_TEST_SUITE_P(OpInfo, OpInfoGradcheck, ::testing::ValuesIn(rows_where(is_differentiable)), row_name);
INSTANTIATE_TEST_SUITE_P(OpInfo, OpInfoGradgradcheck, ::testing::ValuesIn(rows_where(in_second_order_subset)),
                         row_name);

}  // namespace
}  // namespace ember::testing
