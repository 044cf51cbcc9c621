// ProfileSteps (<ember/trainer.h>): the profiler over a window of a
// Trainer's optimiser steps, as `ember train --profile-steps` uses it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "ember/data.h"
#include "ember/nn.h"
#include "ember/optim.h"
#include "ember/trainer.h"
#include "tests/test_util.h"

namespace ember {
namespace {

namespace prof = ember::profiler;

// 64 samples in 3 classes; with batches of 8, 8 steps an epoch.
std::shared_ptr<data::TensorDataset> synthetic_data() {
  Generator g(7);
  Tensor x = randn({64, 4}, {}, &g);
  Tensor y = (x.narrow(1, 0, 1).squeeze(1) > 0).to(kInt64);
  return std::make_shared<data::TensorDataset>(x, y);
}

struct FitRun {
  FitResult result;
  int64_t steps = 0;
};

FitRun fit_with(const std::shared_ptr<ProfileSteps>& profiling, int64_t epochs) {
  manual_seed(0);
  nn::Sequential model(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 3));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  data::DataLoader loader(synthetic_data(), {.batch_size = 8, .shuffle = true, .seed = 3});
  TrainerOptions options;
  options.epochs = epochs;
  options.callbacks = {profiling};
  Trainer trainer(options);
  FitRun run;
  run.result = trainer.fit(model, opt, nullptr, loader, nullptr);
  run.steps = trainer.step();
  return run;
}

std::vector<std::string> step_ranges(const prof::Profile& p) {
  std::vector<std::string> names;
  for (const prof::Event& e : p.events())
    if (e.parent_id == 0 && e.name.rfind("ProfilerStep#", 0) == 0) names.push_back(e.name);
  return names;
}

TEST(ProfileSteps, ProfilesExactlyTheWindowAndWritesTheTrace) {
  const auto trace = std::filesystem::temp_directory_path() / ("ember_profile_steps_" + std::to_string(::getpid()));
  auto profiling = std::make_shared<ProfileSteps>(5, 10, trace.string());
  const FitRun run = fit_with(profiling, 2);
  EXPECT_EQ(run.steps, 16);  // training went on after the window
  ASSERT_NE(profiling->profile(), nullptr);
  const prof::Profile& p = *profiling->profile();
  EXPECT_EQ(step_ranges(p), (std::vector<std::string>{"ProfilerStep#5", "ProfilerStep#6", "ProfilerStep#7",
                                                       "ProfilerStep#8", "ProfilerStep#9"}));
  int optimizer_steps = 0;
  for (const prof::Event& e : p.events()) optimizer_steps += e.kind == prof::EventKind::Optimizer;
  EXPECT_EQ(optimizer_steps, 5);
  std::ifstream in(trace);
  const nlohmann::json doc = nlohmann::json::parse(in);
  int x_events = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) x_events += e["ph"] == "X";
  EXPECT_EQ(x_events, static_cast<int>(p.events().size()));
  std::filesystem::remove(trace);
}

TEST(ProfileSteps, CanStopTrainingAfterTheWindow) {
  auto profiling = std::make_shared<ProfileSteps>(0, 3, "", prof::ProfileOptions{}, /*request_stop=*/true);
  const FitRun run = fit_with(profiling, 5);
  EXPECT_TRUE(run.result.stopped);
  EXPECT_EQ(run.steps, 3);
  ASSERT_NE(profiling->profile(), nullptr);
  EXPECT_EQ(step_ranges(*profiling->profile()),
            (std::vector<std::string>{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"}));
}

TEST(ProfileSteps, AWindowPastTheEndEndsWithTraining) {
  auto profiling = std::make_shared<ProfileSteps>(6, 100, "");
  const FitRun run = fit_with(profiling, 1);
  EXPECT_EQ(run.steps, 8);
  ASSERT_NE(profiling->profile(), nullptr);
  EXPECT_EQ(step_ranges(*profiling->profile()), (std::vector<std::string>{"ProfilerStep#6", "ProfilerStep#7"}));
  EXPECT_FALSE(prof::is_profiling());
}

TEST(ProfileSteps, BadWindowIsAnError) {
  EXPECT_EMBER_ERROR(ProfileSteps(5, 5, ""), "ProfileSteps", "5:5");
  EXPECT_EMBER_ERROR(ProfileSteps(-1, 3, ""), "0 <= first < end");
}

}  // namespace
}  // namespace ember
