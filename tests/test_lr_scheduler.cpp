// The schedulers' behaviour beyond the golden lr sequences
// (tests/golden_optim.cpp): state dicts that resume the same sequence,
// initial_lr shared between schedulers, momentum cycling, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <memory>

#include "ember/ember.h"
#include "ember/optim.h"
#include "tests/test_util.h"

namespace ember::testing {
namespace {

namespace optim = ember::optim;

std::vector<Tensor> one_param() { return {zeros({2}).requires_grad_()}; }

// An SGD optimiser with two groups (lr 0.1 and 0.05).
std::unique_ptr<optim::SGD> two_group_sgd() {
  return std::make_unique<optim::SGD>(
      std::vector<optim::ParamGroup>{{one_param()}, {one_param(), optim::SGDOptions(0.05).momentum(0.9)}},
      optim::SGDOptions(0.1).momentum(0.9));
}

std::vector<double> group_lrs(const optim::Optimizer& opt) {
  std::vector<double> out;
  for (const optim::ParamGroup& g : opt.param_groups()) out.push_back(g.options().lr());
  return out;
}

using MakeScheduler = std::function<std::shared_ptr<optim::LRScheduler>(optim::Optimizer&)>;

std::vector<std::pair<std::string, MakeScheduler>> scheduler_kinds() {
  return {
      {"StepLR", [](optim::Optimizer& o) { return std::make_shared<optim::StepLR>(o, 3, 0.5); }},
      {"MultiStepLR",
       [](optim::Optimizer& o) {
         return std::make_shared<optim::MultiStepLR>(o, std::vector<int64_t>{2, 9});
       }},
      {"ExponentialLR", [](optim::Optimizer& o) { return std::make_shared<optim::ExponentialLR>(o, 0.8); }},
      {"CosineAnnealingLR", [](optim::Optimizer& o) { return std::make_shared<optim::CosineAnnealingLR>(o, 6, 0.01); }},
      {"LinearLR", [](optim::Optimizer& o) { return std::make_shared<optim::LinearLR>(o, 0.2, 1.0, 10); }},
      {"OneCycleLR",
       [](optim::Optimizer& o) {
         return std::make_shared<optim::OneCycleLR>(o, optim::OneCycleLROptions({1.0}, 20).three_phase(true));
       }},
      {"SequentialLR",
       [](optim::Optimizer& o) {
         return std::make_shared<optim::SequentialLR>(
             o,
             std::vector<std::shared_ptr<optim::LRScheduler>>{std::make_shared<optim::LinearLR>(o, 0.1, 1.0, 4),
                                                              std::make_shared<optim::CosineAnnealingLR>(o, 8)},
             std::vector<int64_t>{4});
       }},
  };
}

// Run 7 steps, save; a fresh optimiser and scheduler load both state dicts;
// the next 10 steps give the same lrs (and momenta) as the original run.
TEST(LRSchedulerStateDict, ResumesTheSameSequence) {
  for (const auto& [kind, make] : scheduler_kinds()) {
    SCOPED_TRACE(kind);
    std::unique_ptr<optim::SGD> opt = two_group_sgd();
    std::shared_ptr<optim::LRScheduler> sched = make(*opt);
    for (int k = 0; k < 7; ++k) sched->step();
    const TensorDict opt_state = opt->state_dict(), sched_state = sched->state_dict();
    EXPECT_EQ(sched_state.at("kind." + kind).item<int64_t>(), 1);

    std::unique_ptr<optim::SGD> opt2 = two_group_sgd();
    std::shared_ptr<optim::LRScheduler> sched2 = make(*opt2);  // construct as before, then load
    opt2->load_state_dict(opt_state);
    sched2->load_state_dict(sched_state);
    EXPECT_EQ(sched2->last_epoch(), 7);
    EXPECT_EQ(sched2->get_last_lr(), sched->get_last_lr());
    for (int k = 0; k < 10; ++k) {
      sched->step();
      sched2->step();
      ASSERT_EQ(group_lrs(*opt2), group_lrs(*opt)) << "step " << 8 + k;
      ASSERT_EQ(*opt2->param_groups()[1].options().find_number("momentum"),
                *opt->param_groups()[1].options().find_number("momentum"));
    }
  }
}

TEST(LRSchedulerStateDict, RejectsAnotherScheduler) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  optim::StepLR step(*opt, 3);
  optim::ExponentialLR exp(*opt, 0.9);
  EXPECT_EMBER_ERROR(step.load_state_dict(exp.state_dict()), "StepLR::load_state_dict",
                     "the state dict is of ExponentialLR, expected StepLR");
  EXPECT_EMBER_ERROR(step.load_state_dict(opt->state_dict()), "the state dict is of SGD");
  TensorDict d = step.state_dict();
  d.erase("base_lrs");
  EXPECT_EMBER_ERROR(step.load_state_dict(d), "lacks 'base_lrs'");
  d = step.state_dict();
  d["last_lr"] = tensor({0.1});
  EXPECT_EMBER_ERROR(step.load_state_dict(d), "'last_lr' has 1 values, but the optimiser has 2 parameter groups");

  optim::SequentialLR seq(*opt, {std::make_shared<optim::StepLR>(*opt, 2), std::make_shared<optim::StepLR>(*opt, 3)},
                          {5});
  optim::SequentialLR other(
      *opt, {std::make_shared<optim::StepLR>(*opt, 2), std::make_shared<optim::ExponentialLR>(*opt, 0.5)}, {5});
  EXPECT_EMBER_ERROR(seq.load_state_dict(other.state_dict()), "scheduler 1 is a StepLR",
                     "no matching 'schedulers.1.kind.StepLR'");
  TensorDict extra = seq.state_dict();
  extra["schedulers.2.last_epoch"] = tensor({1});
  EXPECT_EMBER_ERROR(seq.load_state_dict(extra), "unexpected key 'schedulers.2.last_epoch'", "runs 2 schedulers");
}

// The first scheduler records each group's initial_lr; later ones start from
// it (PyTorch's setdefault), not from the lr the first one has set.
TEST(LRScheduler, SchedulersShareTheInitialLr) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  optim::LinearLR warmup(*opt, 0.5, 1.0, 4);
  EXPECT_EQ(group_lrs(*opt), (std::vector<double>{0.05, 0.025}));
  optim::StepLR later(*opt, 10);
  EXPECT_EQ(later.base_lrs(), (std::vector<double>{0.1, 0.05}));
  EXPECT_EQ(*opt->param_groups()[0].initial_lr(), 0.1);
  EXPECT_EQ(opt->state_dict().at("param_groups.1.initial_lr").item<double>(), 0.05);
}

TEST(LRScheduler, StepLRDecaysEveryStepSizeSteps) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  optim::StepLR sched(*opt, 2, 0.5);
  std::vector<double> first;
  for (int k = 0; k < 5; ++k) {
    first.push_back(sched.get_last_lr()[0]);
    sched.step();
  }
  EXPECT_EQ(first, (std::vector<double>{0.1, 0.1, 0.05, 0.05, 0.025}));
}

// A cosine run of 4 steps saved at its end (lr at eta_min) and resumed with
// T_max 12: the chainable form alone would stay at eta_min; relayout puts
// step 4 on the new curve, and the steps after follow it.
TEST(LRScheduler, RelayoutContinuesAResumedRunOnTheLongerSchedule) {
  std::unique_ptr<optim::SGD> saved_opt = two_group_sgd();
  optim::CosineAnnealingLR saved(*saved_opt, 4);
  for (int k = 0; k < 4; ++k) saved.step();
  EXPECT_EQ(saved.get_last_lr()[0], 0.0);

  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  optim::CosineAnnealingLR longer(*opt, 12);
  longer.load_state_dict(saved.state_dict());
  opt->load_state_dict(saved_opt->state_dict());
  ASSERT_TRUE(longer.relayout());
  const double pi = std::numbers::pi;
  for (int64_t t = 4; t < 12; ++t) {
    const double expected = 0.1 * (1 + std::cos(pi * static_cast<double>(t) / 12)) / 2;
    EXPECT_NEAR(longer.get_last_lr()[0], expected, 1e-15) << "step " << t;
    EXPECT_NEAR(group_lrs(*opt)[1], expected / 2, 1e-15) << "step " << t;
    longer.step();
  }
}

TEST(LRScheduler, RelayoutOfASequenceLaysOutTheSchedulerWhoseTurnItIs) {
  auto make = [](optim::Optimizer& opt, int64_t total) {
    auto warmup = std::make_shared<optim::LinearLR>(opt, 0.5, 1.0, 2);
    auto cosine = std::make_shared<optim::CosineAnnealingLR>(opt, total - 2);
    return std::make_shared<optim::SequentialLR>(opt, std::vector<std::shared_ptr<optim::LRScheduler>>{warmup, cosine},
                                                 std::vector<int64_t>{2});
  };
  std::unique_ptr<optim::SGD> saved_opt = two_group_sgd();
  auto saved = make(*saved_opt, 6);
  for (int k = 0; k < 6; ++k) saved->step();
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  auto longer = make(*opt, 10);
  longer->load_state_dict(saved->state_dict());
  ASSERT_TRUE(longer->relayout());
  // The cosine has taken 4 of its 8 steps: half way down.
  EXPECT_NEAR(longer->get_last_lr()[0], 0.05, 1e-15);
  EXPECT_NEAR(group_lrs(*opt)[0], 0.05, 1e-15);
  // Schedulers without a closed form keep their lr.
  std::unique_ptr<optim::SGD> plain = two_group_sgd();
  optim::OneCycleLR cycle(*plain, optim::OneCycleLROptions({0.1, 0.05}, 10));
  const std::vector<double> before = cycle.get_last_lr();
  EXPECT_FALSE(cycle.relayout());
  EXPECT_EQ(cycle.get_last_lr(), before);
}

TEST(OneCycleLR, CyclesBeta1OfAdamAndMomentumOfSgd) {
  optim::Adam adam(one_param(), optim::AdamOptions(1e-3));
  optim::OneCycleLR a(adam, optim::OneCycleLROptions({0.1}, 10));
  const auto beta1 = [&] {
    return std::get<0>(static_cast<optim::AdamOptions&>(adam.param_groups()[0].options()).betas());
  };
  EXPECT_EQ(beta1(), 0.95);
  EXPECT_DOUBLE_EQ(adam.param_groups()[0].options().lr(), 0.1 / 25);
  for (int k = 0; k < 2; ++k) a.step();  // the peak: step pct_start * 10 - 1 = 2
  EXPECT_DOUBLE_EQ(beta1(), 0.85);
  EXPECT_DOUBLE_EQ(adam.param_groups()[0].options().lr(), 0.1);

  optim::SGD sgd(one_param(), optim::SGDOptions(0.5));
  optim::OneCycleLR s(sgd, optim::OneCycleLROptions({0.1}, 10).max_momentum({0.9}).base_momentum({0.7}));
  EXPECT_EQ(static_cast<optim::SGDOptions&>(sgd.param_groups()[0].options()).momentum(), 0.9);
}

TEST(OneCycleLR, Errors) {
  optim::Adagrad adagrad(one_param());
  EXPECT_EMBER_ERROR(optim::OneCycleLR(adagrad, optim::OneCycleLROptions({0.1}, 10)),
                     "cycle_momentum needs an optimiser with a momentum or betas", "Adagrad");
  optim::OneCycleLR no_momentum(adagrad, optim::OneCycleLROptions({0.1}, 3).cycle_momentum(false));
  for (int k = 0; k < 3; ++k) no_momentum.step();  // step 3 == total_steps is still allowed, as in torch
  EXPECT_EMBER_ERROR(no_momentum.step(), "OneCycleLR: tried to step 5 times", "total_steps 3");

  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  EXPECT_EMBER_ERROR(optim::OneCycleLR(*opt, optim::OneCycleLROptions({0.1, 0.2, 0.3}, 10)),
                     "expected 1 or 2 values of max_lr");
  EXPECT_EMBER_ERROR(optim::OneCycleLR(*opt, optim::OneCycleLROptions({0.1}, 0)), "positive total_steps");
  EXPECT_EMBER_ERROR(optim::OneCycleLR(*opt, optim::OneCycleLROptions({0.1}, 10).pct_start(1.5)),
                     "pct_start in [0, 1]");
}

TEST(LRScheduler, RejectsBadArguments) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  EXPECT_EMBER_ERROR(optim::StepLR(*opt, 0), "StepLR: step_size must be >= 1");
  EXPECT_EMBER_ERROR(optim::CosineAnnealingLR(*opt, 0), "CosineAnnealingLR: T_max must be >= 1");
  EXPECT_EMBER_ERROR(optim::LinearLR(*opt, 0.0), "LinearLR: start_factor must be in (0, 1]");
  EXPECT_EMBER_ERROR(optim::LinearLR(*opt, 0.5, 1.5), "end_factor must be in [0, 1]");
  EXPECT_EMBER_ERROR(optim::SequentialLR(*opt, {std::make_shared<optim::StepLR>(*opt, 2)}, {3}),
                     "expected one milestone fewer than the 1 schedulers, got 1");
  std::unique_ptr<optim::SGD> other = two_group_sgd();
  EXPECT_EMBER_ERROR(
      optim::SequentialLR(*opt, {std::make_shared<optim::StepLR>(*opt, 2), std::make_shared<optim::StepLR>(*other, 2)},
                          {3}),
      "scheduler 1 (StepLR) drives another optimiser");
}

TEST(LRScheduler, AGroupAddedAfterTheSchedulerIsAnError) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  optim::ExponentialLR sched(*opt, 0.5);
  opt->add_param_group({one_param()});
  EXPECT_EMBER_ERROR(sched.step(), "ExponentialLR: the optimiser has 3 parameter groups",
                     "the scheduler was made for 2");
}

// ---- ReduceLROnPlateau ----

TEST(ReduceLROnPlateau, ReducesAfterPatienceThenCoolsDown) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  optim::ReduceLROnPlateau sched(*opt, optim::ReduceLROnPlateauOptions().factor(0.5).patience(1).cooldown(1));
  sched.step(1.0);  // best
  sched.step(1.0);  // bad 1
  EXPECT_EQ(group_lrs(*opt), (std::vector<double>{0.1, 0.05}));
  sched.step(1.0);  // bad 2 > patience: halve, cooldown 1
  EXPECT_EQ(group_lrs(*opt), (std::vector<double>{0.05, 0.025}));
  EXPECT_TRUE(sched.in_cooldown());
  sched.step(1.0);  // in cooldown: not counted
  sched.step(1.0);  // bad 1
  EXPECT_EQ(group_lrs(*opt), (std::vector<double>{0.05, 0.025}));
  sched.step(0.5);  // better
  EXPECT_EQ(sched.best(), 0.5);
  EXPECT_EQ(sched.num_bad_epochs(), 0);
  EXPECT_EQ(sched.get_last_lr(), group_lrs(*opt));
}

TEST(ReduceLROnPlateau, StateDictResumes) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  const auto options = optim::ReduceLROnPlateauOptions().factor(0.5).patience(2).cooldown(2).min_lr({0.01, 0.02});
  optim::ReduceLROnPlateau sched(*opt, options);
  const std::vector<double> metrics = {3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  for (int k = 0; k < 6; ++k) sched.step(metrics[k]);
  std::unique_ptr<optim::SGD> opt2 = two_group_sgd();
  optim::ReduceLROnPlateau sched2(*opt2, options);
  opt2->load_state_dict(opt->state_dict());
  sched2.load_state_dict(sched.state_dict());
  for (size_t k = 6; k < metrics.size(); ++k) {
    sched.step(metrics[k]);
    sched2.step(metrics[k]);
    ASSERT_EQ(group_lrs(*opt2), group_lrs(*opt)) << k;
  }
  EXPECT_EQ(group_lrs(*opt), (std::vector<double>{0.0125, 0.02}));  // min_lr holds group 1
}

TEST(ReduceLROnPlateau, RejectsBadOptions) {
  std::unique_ptr<optim::SGD> opt = two_group_sgd();
  EXPECT_EMBER_ERROR(optim::ReduceLROnPlateau(*opt, optim::ReduceLROnPlateauOptions().factor(1.0)),
                     "factor should be < 1.0");
  EXPECT_EMBER_ERROR(optim::ReduceLROnPlateau(*opt, optim::ReduceLROnPlateauOptions().min_lr({0, 0, 0})),
                     "expected 1 or 2 min_lr values");
  optim::ReduceLROnPlateau sched(*opt);
  optim::StepLR step(*opt, 2);
  EXPECT_EMBER_ERROR(sched.load_state_dict(step.state_dict()), "the state dict is of StepLR",
                     "expected ReduceLROnPlateau");
}

}  // namespace
}  // namespace ember::testing
