// Golden trajectories: ember's optimisers and schedulers against torch 1.13.
//
// tests/golden/optim/*.safetensors are written by
// tools/golden/make_optim_golden.py, whose docstring gives the layout.
// GoldenOptim/OptimizerTrajectory.MatchesTorch/<case>: the case's optimiser,
// built from the stored options (by option name, through
// OptimizerOptions::fields()), runs the stored gradients from the stored
// parameters; after each step every parameter must match torch's.
// GoldenOptim/SchedulerSequence.MatchesTorch/<case>: the lrs (and OneCycleLR's
// momentum) after construction and each step must match torch's to 1e-12.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/optim.h"
#include "tests/golden_compare.h"

namespace ember {
namespace {

using ember::testing::values_match;
using nlohmann::json;
namespace optim = ember::optim;

std::string golden_path(const std::string& file) { return std::string(EMBER_TEST_DATA_DIR) + "/optim/" + file; }

const SafetensorsFile& golden_file(const std::string& file) {
  static std::map<std::string, SafetensorsFile> files;
  auto it = files.find(file);
  if (it == files.end()) it = files.emplace(file, load_safetensors(golden_path(file))).first;
  return it->second;
}

// Case names, read when the tests are registered; an unreadable file gives
// one case that fails with the reason.
std::vector<std::string> case_names(const std::string& file) {
  std::vector<std::string> names;
  try {
    for (const auto& [name, spec] : golden_file(file).metadata) names.push_back(name);
  } catch (const std::exception&) {
    return {"unreadable"};
  }
  if (names.empty()) return {"no_cases"};
  return names;
}

Tensor stored(const SafetensorsFile& f, const std::string& key) {
  auto it = f.tensors.find(key);
  return it == f.tensors.end() ? Tensor() : it->second;
}

// ---- optimisers ----

std::unique_ptr<optim::OptimizerOptions> default_options(const std::string& kind) {
  if (kind == "SGD") return std::make_unique<optim::SGDOptions>(0.1);
  if (kind == "Adam") return std::make_unique<optim::AdamOptions>();
  if (kind == "AdamW") return std::make_unique<optim::AdamWOptions>();
  if (kind == "RMSprop") return std::make_unique<optim::RMSpropOptions>();
  if (kind == "Adagrad") return std::make_unique<optim::AdagradOptions>();
  return nullptr;
}

// Options of `kind` with every option in `spec` set by name.
std::unique_ptr<optim::OptimizerOptions> options_from(const std::string& kind, const json& spec) {
  std::unique_ptr<optim::OptimizerOptions> o = default_options(kind);
  const std::vector<optim::OptionField> fields = o->fields();
  for (const auto& [name, value] : spec.items()) {
    bool found = false;
    for (const optim::OptionField& f : fields) {
      if (f.name != name) continue;
      if (f.number)
        *f.number = value.get<double>();
      else
        *f.flag = value.get<bool>();
      found = true;
    }
    EXPECT_TRUE(found) << kind << " has no option '" << name << "'";
  }
  return o;
}

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& kind, std::vector<optim::ParamGroup> groups,
                                                 const optim::OptimizerOptions& defaults) {
  if (kind == "SGD") return std::make_unique<optim::SGD>(groups, static_cast<const optim::SGDOptions&>(defaults));
  if (kind == "Adam") return std::make_unique<optim::Adam>(groups, static_cast<const optim::AdamOptions&>(defaults));
  if (kind == "AdamW") return std::make_unique<optim::AdamW>(groups, static_cast<const optim::AdamWOptions&>(defaults));
  if (kind == "RMSprop")
    return std::make_unique<optim::RMSprop>(groups, static_cast<const optim::RMSpropOptions&>(defaults));
  return std::make_unique<optim::Adagrad>(groups, static_cast<const optim::AdagradOptions&>(defaults));
}

class OptimizerTrajectory : public ::testing::TestWithParam<std::string> {};

TEST_P(OptimizerTrajectory, MatchesTorch) {
  const std::string& name = GetParam();
  const SafetensorsFile* file = nullptr;
  try {
    file = &golden_file("optimizers.safetensors");
  } catch (const std::exception& e) {
    FAIL() << golden_path("optimizers.safetensors") << ": " << e.what();
  }
  ASSERT_TRUE(file->metadata.count(name)) << "no cases";
  const json spec = json::parse(file->metadata.at(name));
  const std::string kind = spec.at("optimizer").get<std::string>();
  ASSERT_NE(default_options(kind), nullptr) << "unknown optimiser " << kind;
  const double rtol = spec.at("rtol").get<double>(), atol = spec.at("atol").get<double>();

  TensorList params;
  for (size_t i = 0; stored(*file, name + ".param" + std::to_string(i)).defined(); ++i)
    params.push_back(stored(*file, name + ".param" + std::to_string(i)).clone().requires_grad_());
  ASSERT_FALSE(params.empty());
  std::vector<optim::ParamGroup> groups;
  std::unique_ptr<optim::OptimizerOptions> first_options;
  for (const json& g : spec.at("groups")) {
    std::vector<Tensor> group_params;
    for (size_t i : g.at("params").get<std::vector<size_t>>()) group_params.push_back(params.at(i));
    std::unique_ptr<optim::OptimizerOptions> o = options_from(kind, g.at("options"));
    groups.emplace_back(group_params, *o);
    if (!first_options) first_options = std::move(o);
  }
  std::unique_ptr<optim::Optimizer> opt = make_optimizer(kind, groups, *first_options);

  const int64_t steps = spec.at("steps").get<int64_t>();
  for (int64_t k = 0; k < steps; ++k) {
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor grad = stored(*file, name + ".grad" + std::to_string(k) + "." + std::to_string(i));
      params[i].set_grad(grad.defined() ? grad.clone() : Tensor());
    }
    opt->step();
    for (size_t i = 0; i < params.size(); ++i) {
      const Tensor expected = stored(*file, name + ".step" + std::to_string(k) + "." + std::to_string(i));
      ASSERT_TRUE(expected.defined());
      EXPECT_EQ(params[i].dtype(), expected.dtype());
      EXPECT_TRUE(values_match(params[i].detach(), expected, rtol, atol))
          << kind << " step " << k + 1 << ", parameter " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenOptim, OptimizerTrajectory, ::testing::ValuesIn(case_names("optimizers.safetensors")),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ---- schedulers ----

std::vector<double> numbers(const json& v) {
  if (v.is_array()) return v.get<std::vector<double>>();
  return {v.get<double>()};
}

// A scheduler of `kind` on `opt`, with torch's arguments (defaults where absent).
std::shared_ptr<optim::LRScheduler> make_scheduler(optim::Optimizer& opt, const std::string& kind, const json& a) {
  if (kind == "StepLR")
    return std::make_shared<optim::StepLR>(opt, a.at("step_size").get<int64_t>(), a.value("gamma", 0.1));
  if (kind == "MultiStepLR")
    return std::make_shared<optim::MultiStepLR>(opt, a.at("milestones").get<std::vector<int64_t>>(),
                                                a.value("gamma", 0.1));
  if (kind == "ExponentialLR") return std::make_shared<optim::ExponentialLR>(opt, a.at("gamma").get<double>());
  if (kind == "CosineAnnealingLR")
    return std::make_shared<optim::CosineAnnealingLR>(opt, a.at("T_max").get<int64_t>(), a.value("eta_min", 0.0));
  if (kind == "LinearLR")
    return std::make_shared<optim::LinearLR>(opt, a.value("start_factor", 1.0 / 3), a.value("end_factor", 1.0),
                                             a.value("total_iters", int64_t{5}));
  if (kind == "OneCycleLR") {
    optim::OneCycleLROptions o(numbers(a.at("max_lr")), a.at("total_steps").get<int64_t>());
    o.pct_start(a.value("pct_start", 0.3))
        .anneal_strategy(a.value("anneal_strategy", std::string("cos")) == "cos" ? optim::AnnealStrategy::Cos
                                                                                 : optim::AnnealStrategy::Linear)
        .three_phase(a.value("three_phase", false))
        .div_factor(a.value("div_factor", 25.0))
        .final_div_factor(a.value("final_div_factor", 1e4))
        .base_momentum(numbers(a.value("base_momentum", json(0.85))))
        .max_momentum(numbers(a.value("max_momentum", json(0.95))));
    return std::make_shared<optim::OneCycleLR>(opt, o);
  }
  if (kind == "SequentialLR") {
    std::vector<std::shared_ptr<optim::LRScheduler>> parts;
    for (const json& s : a.at("schedulers"))
      parts.push_back(make_scheduler(opt, s.at("scheduler").get<std::string>(), s.at("args")));
    return std::make_shared<optim::SequentialLR>(opt, parts, a.at("milestones").get<std::vector<int64_t>>());
  }
  return nullptr;
}

optim::ReduceLROnPlateauOptions plateau_options(const json& a) {
  optim::ReduceLROnPlateauOptions o;
  o.mode(a.value("mode", std::string("min")) == "min" ? optim::PlateauMode::Min : optim::PlateauMode::Max)
      .factor(a.value("factor", 0.1))
      .patience(a.value("patience", int64_t{10}))
      .threshold(a.value("threshold", 1e-4))
      .threshold_mode(a.value("threshold_mode", std::string("rel")) == "rel" ? optim::ThresholdMode::Rel
                                                                             : optim::ThresholdMode::Abs)
      .cooldown(a.value("cooldown", int64_t{0}))
      .min_lr(numbers(a.value("min_lr", json(0.0))))
      .eps(a.value("eps", 1e-8));
  return o;
}

// Row `row` of a [steps + 1, groups] float64 tensor.
std::vector<double> row_of(const Tensor& t, int64_t row) {
  const Tensor r = t.select(0, row).contiguous();
  return std::vector<double>(r.data_ptr<double>(), r.data_ptr<double>() + r.numel());
}

void expect_row(const std::vector<double>& actual, const Tensor& expected, int64_t row, const char* what) {
  const std::vector<double> e = row_of(expected, row);
  ASSERT_EQ(actual.size(), e.size()) << what << " at step " << row;
  for (size_t g = 0; g < e.size(); ++g)
    EXPECT_NEAR(actual[g], e[g], 1e-12 * std::abs(e[g])) << what << " of group " << g << " at step " << row;
}

class SchedulerSequence : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerSequence, MatchesTorch) {
  const std::string& name = GetParam();
  const SafetensorsFile* file = nullptr;
  try {
    file = &golden_file("schedulers.safetensors");
  } catch (const std::exception& e) {
    FAIL() << golden_path("schedulers.safetensors") << ": " << e.what();
  }
  ASSERT_TRUE(file->metadata.count(name)) << "no cases";
  const json spec = json::parse(file->metadata.at(name));
  const std::string kind = spec.at("scheduler").get<std::string>();
  const std::string optimizer = spec.at("optimizer").get<std::string>();
  const Tensor lrs = stored(*file, name + ".lr");
  const Tensor momenta = stored(*file, name + ".momentum");
  ASSERT_TRUE(lrs.defined());

  // One group per starting lr, as the script builds them (SGD with momentum 0.9, or Adam).
  std::vector<optim::ParamGroup> groups;
  for (double lr : spec.at("lrs").get<std::vector<double>>()) {
    std::vector<Tensor> p = {zeros({2}).requires_grad_()};
    if (optimizer == "SGD")
      groups.emplace_back(p, optim::SGDOptions(lr).momentum(0.9));
    else
      groups.emplace_back(p, optim::AdamOptions(lr));
  }
  std::unique_ptr<optim::Optimizer> opt;
  if (optimizer == "SGD")
    opt = std::make_unique<optim::SGD>(groups, optim::SGDOptions(0.1));
  else
    opt = std::make_unique<optim::Adam>(groups);
  auto group_lrs = [&] {
    std::vector<double> out;
    for (const optim::ParamGroup& g : opt->param_groups()) out.push_back(g.options().lr());
    return out;
  };
  auto group_momenta = [&] {
    std::vector<double> out;
    for (optim::ParamGroup& g : opt->param_groups())
      out.push_back(*g.options().find_number(optimizer == "SGD" ? "momentum" : "beta1"));
    return out;
  };

  const int64_t steps = spec.at("steps").get<int64_t>();
  if (kind == "ReduceLROnPlateau") {
    const Tensor metrics = stored(*file, name + ".metrics");
    ASSERT_TRUE(metrics.defined());
    optim::ReduceLROnPlateau sched(*opt, plateau_options(spec.at("args")));
    expect_row(group_lrs(), lrs, 0, "lr");
    for (int64_t k = 0; k < steps; ++k) {
      sched.step(metrics[k].item<double>());
      expect_row(group_lrs(), lrs, k + 1, "lr");
      EXPECT_EQ(sched.get_last_lr(), group_lrs());
    }
    return;
  }
  std::shared_ptr<optim::LRScheduler> sched = make_scheduler(*opt, kind, spec.at("args"));
  ASSERT_NE(sched, nullptr) << "unknown scheduler " << kind;
  expect_row(group_lrs(), lrs, 0, "lr");
  EXPECT_EQ(sched->get_last_lr(), group_lrs());
  if (momenta.defined()) expect_row(group_momenta(), momenta, 0, "momentum");
  for (int64_t k = 0; k < steps; ++k) {
    opt->step();  // no gradients: nothing changes, as in the script
    sched->step();
    expect_row(group_lrs(), lrs, k + 1, "lr");
    EXPECT_EQ(sched->get_last_lr(), group_lrs());
    if (momenta.defined()) expect_row(group_momenta(), momenta, k + 1, "momentum");
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenOptim, SchedulerSequence, ::testing::ValuesIn(case_names("schedulers.safetensors")),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace ember
