// The Trainer (<ember/trainer.h>): resume, accumulation, callbacks, early
// stopping, the metrics files.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "ember/data.h"
#include "ember/nn.h"
#include "ember/optim.h"
#include "ember/trainer.h"
#include "tests/test_util.h"

namespace ember {
namespace {

namespace nn = ember::nn;

// A fresh folder under the system temp dir, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("ember_trainer_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

// 64 samples of 4 features in 3 classes (a linear rule, so a model can learn it).
std::shared_ptr<data::TensorDataset> synthetic_data(int64_t n = 64) {
  Generator g(7);
  Tensor x = randn({n, 4}, {}, &g);
  Tensor y = (x.narrow(1, 0, 1).squeeze(1) > 0).to(kInt64) + (x.narrow(1, 1, 1).squeeze(1) > 0.5).to(kInt64);
  return std::make_shared<data::TensorDataset>(x, y);
}

nn::Sequential tiny_mlp() {
  return nn::Sequential(nn::Linear(4, 8), nn::ReLU(), nn::Dropout(0.2), nn::Linear(8, 3));
}

// Parameters after training a freshly built tiny MLP with Adam and a cosine
// schedule to `epochs`, from scratch or from the checkpoint `resume_from`;
// with `save_to`, the final state is saved there.
std::vector<Tensor> train_tiny(int64_t epochs, const std::string& resume_from, const std::string& save_to) {
  manual_seed(resume_from.empty() ? 0 : 99);  // a resumed run must not depend on the seed it starts with
  nn::Sequential model = tiny_mlp();
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
  optim::CosineAnnealingLR sched(opt, 20);
  data::DataLoader loader(synthetic_data(), {.batch_size = 8, .shuffle = true, .seed = 3});
  TrainerOptions options;
  options.epochs = epochs;
  options.scheduler_interval = SchedulerInterval::kStep;
  options.resume_from = resume_from;
  Trainer trainer(options);
  trainer.fit(model, opt, &sched, loader, nullptr);
  if (!save_to.empty()) trainer.save_checkpoint(save_to);
  std::vector<Tensor> params;
  for (const Tensor& p : model->parameters()) params.push_back(p.detach().clone());
  return params;
}

TEST(Trainer, ResumeAtEpochBoundaryIsBitIdentical) {
  TempDir dir("resume");
  const std::string ckpt = (dir.path / "epoch2.ckpt").string();
  const std::vector<Tensor> straight = train_tiny(4, "", "");
  train_tiny(2, "", ckpt);
  const std::vector<Tensor> resumed = train_tiny(4, ckpt, "");
  ASSERT_EQ(straight.size(), resumed.size());
  for (size_t i = 0; i < straight.size(); ++i) {
    EXPECT_EQ(testing::values(straight[i]), testing::values(resumed[i])) << "parameter " << i;
  }
  // And the checkpoint records where it was taken.
  const TrainingCheckpoint back = load_training_checkpoint(ckpt);
  EXPECT_EQ(back.epoch, 2);
  EXPECT_EQ(back.step, 16);  // 8 batches per epoch
  for (const char* part : {"model", "optimizer", "scheduler", "train_data"}) EXPECT_TRUE(back.states.count(part));
}

// Stops at batch 3 of epoch 2 (after its optimiser step), as Ctrl-C does.
struct StopInsideSecondEpoch : Callback {
  void on_batch_end(Trainer& trainer, const BatchProgress& p) override {
    if (p.epoch == 2 && p.batch == 3) trainer.request_stop();
  }
};

TEST(Trainer, ResumeInsideAnEpochIsBitIdentical) {
  TempDir dir("resume_mid");
  const std::string ckpt = (dir.path / "mid.ckpt").string();
  const std::vector<Tensor> straight = train_tiny(3, "", "");
  {
    manual_seed(0);
    nn::Sequential model = tiny_mlp();
    optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
    optim::CosineAnnealingLR sched(opt, 20);
    data::DataLoader loader(synthetic_data(), {.batch_size = 8, .shuffle = true, .seed = 3});
    TrainerOptions options;
    options.epochs = 3;
    options.scheduler_interval = SchedulerInterval::kStep;
    options.callbacks = {std::make_shared<StopInsideSecondEpoch>()};
    Trainer trainer(options);
    EXPECT_TRUE(trainer.fit(model, opt, &sched, loader, nullptr).stopped);
    trainer.save_checkpoint(ckpt);
  }
  EXPECT_EQ(load_training_checkpoint(ckpt).step, 11);  // 8 + 3
  const std::vector<Tensor> resumed = train_tiny(3, ckpt, "");
  for (size_t i = 0; i < straight.size(); ++i) {
    EXPECT_EQ(testing::values(straight[i]), testing::values(resumed[i])) << "parameter " << i;
  }
}

// A run resumed inside an epoch counts its batches on from the checkpoint's
// and says that the epoch's train metrics cover only the rest.
TEST(Trainer, ResumeInsideAnEpochCountsOnAndSaysSo) {
  TempDir dir("resume_count");
  const std::string ckpt = (dir.path / "mid.ckpt").string();
  {
    manual_seed(0);
    nn::Sequential model = tiny_mlp();
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
    data::DataLoader loader(synthetic_data(), {.batch_size = 8, .shuffle = true, .seed = 3});
    TrainerOptions options;
    options.epochs = 3;
    options.callbacks = {std::make_shared<StopInsideSecondEpoch>()};
    Trainer trainer(options);
    trainer.fit(model, opt, nullptr, loader, nullptr);
    trainer.save_checkpoint(ckpt);
  }
  struct FirstBatch : Callback {
    std::vector<BatchProgress> seen;
    void on_batch_end(Trainer&, const BatchProgress& p) override { seen.push_back(p); }
  };
  auto first = std::make_shared<FirstBatch>();
  std::ostringstream log;
  nn::Sequential model = tiny_mlp();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  data::DataLoader loader(synthetic_data(), {.batch_size = 8, .shuffle = true, .seed = 3});
  TrainerOptions options;
  options.epochs = 3;
  options.resume_from = ckpt;
  options.callbacks = {first, std::make_shared<ProgressLogger>(log, 1, false)};
  Trainer trainer(options);
  trainer.fit(model, opt, nullptr, loader, nullptr);
  ASSERT_FALSE(first->seen.empty());
  EXPECT_EQ(first->seen.front().epoch, 2);
  EXPECT_EQ(first->seen.front().batch, 4);  // batches 1-3 ran before the checkpoint
  EXPECT_EQ(first->seen.front().resumed_after, 3);
  EXPECT_EQ(first->seen[5].epoch, 3);  // the next epoch starts afresh
  EXPECT_EQ(first->seen[5].batch, 1);
  EXPECT_EQ(first->seen[5].resumed_after, 0);
  EXPECT_NE(log.str().find("epoch 2: resumed after batch 3 of 8; this epoch's train metrics cover the batches from here on"),
            std::string::npos)
      << log.str();
}

TEST(Trainer, ResumeNeedsEveryPart) {
  TempDir dir("resume_parts");
  const std::string ckpt = (dir.path / "model_only.ckpt").string();
  nn::Sequential model = tiny_mlp();
  TrainingCheckpoint partial;
  partial.states["model"] = model->state_dict();
  save_training_checkpoint(partial, ckpt);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  data::DataLoader loader(synthetic_data(), {.batch_size = 8});
  TrainerOptions options;
  options.resume_from = ckpt;
  Trainer trainer(options);
  EXPECT_EMBER_ERROR(trainer.fit(model, opt, nullptr, loader, nullptr), "cannot resume", "'optimizer'");
}

// A checkpoint with a valid checksum but damaged contents (rewritten by a
// program, say) is refused, naming the value, instead of training on.
TEST(Trainer, ResumeRefusesCountersAndStatesThatCannotBeRight) {
  TempDir dir("resume_damaged");
  const std::string good = (dir.path / "good.ckpt").string(), bad = (dir.path / "bad.ckpt").string();
  train_tiny(2, "", good);
  const auto damaged = [&](const std::function<void(TrainingCheckpoint&)>& damage) {
    TrainingCheckpoint c = load_training_checkpoint(good);
    damage(c);
    save_training_checkpoint(c, bad);  // with a fresh checksum
    return bad;
  };
  EXPECT_EMBER_ERROR(train_tiny(4, damaged([](TrainingCheckpoint& c) { c.epoch = -5; }), ""), "epoch -5",
                     "do not fit");
  EXPECT_EMBER_ERROR(train_tiny(4, damaged([](TrainingCheckpoint& c) { c.step = 1000; }), ""), "step 1000",
                     "8 optimiser steps per epoch");
  EXPECT_EMBER_ERROR(train_tiny(4, damaged([](TrainingCheckpoint& c) {
                                  c.states["scheduler"]["last_lr"] = full({1}, NAN, kFloat64);
                                }),
                                ""),
                     "last_lr", "finite");
  EXPECT_EMBER_ERROR(train_tiny(4, damaged([](TrainingCheckpoint& c) {
                                  c.states["scheduler"]["last_epoch"] = scalar_tensor(-7, kInt64);
                                }),
                                ""),
                     "last_epoch", "-7");
  EXPECT_EMBER_ERROR(train_tiny(4, damaged([](TrainingCheckpoint& c) {
                                  Tensor& avg = c.states["optimizer"]["state.0.exp_avg_sq"];
                                  avg = full(avg.sizes(), NAN, kFloat32);
                                }),
                                ""),
                     "state.0.exp_avg_sq", "NaN");
}

// Final weights of a linear model after one epoch of SGD over 16 samples.
Tensor weights_after_epoch(size_t batch_size, int64_t accumulate, int64_t* steps) {
  manual_seed(1);
  nn::Linear model(4, 3);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.5));
  data::DataLoader loader(synthetic_data(16), {.batch_size = batch_size});
  TrainerOptions options;
  options.accumulate_grad_batches = accumulate;
  Trainer trainer(options);
  trainer.fit(model, opt, nullptr, loader, nullptr);
  *steps = trainer.step();
  return model->weight.detach().clone();
}

TEST(Trainer, TwoAccumulatedBatchesOfEightEqualOneBatchOfSixteen) {
  int64_t steps_one = 0, steps_two = 0;
  const Tensor one_batch = weights_after_epoch(16, 1, &steps_one);
  const Tensor accumulated = weights_after_epoch(8, 2, &steps_two);
  EXPECT_EQ(steps_one, 1);
  EXPECT_EQ(steps_two, 1);
  EXPECT_TRUE(testing::all_close(accumulated, one_batch, 1e-5, 1e-6));
  // Without accumulation the same batches of 8 take two steps and end elsewhere.
  int64_t steps_plain = 0;
  const Tensor plain = weights_after_epoch(8, 1, &steps_plain);
  EXPECT_EQ(steps_plain, 2);
  EXPECT_FALSE(testing::all_close(plain, one_batch, 1e-5, 1e-6));
}

// Writes down every hook call.
struct RecordingCallback : Callback {
  std::vector<std::string> calls;
  void on_train_start(Trainer&) override { calls.push_back("train_start"); }
  void on_epoch_start(Trainer&, int64_t epoch) override { calls.push_back("epoch_start " + std::to_string(epoch)); }
  void on_batch_end(Trainer&, const BatchProgress& p) override {
    calls.push_back("batch " + std::to_string(p.epoch) + "." + std::to_string(p.batch) + "/" +
                    std::to_string(p.batches_per_epoch) + " step " + std::to_string(p.step));
  }
  void on_epoch_end(Trainer& trainer, const EpochMetrics& m) override {
    calls.push_back("epoch_end " + std::to_string(m.epoch) + " completed " +
                    std::to_string(trainer.epochs_completed()));
  }
  void on_train_end(Trainer&, const FitResult& r) override {
    calls.push_back("train_end " + std::to_string(r.history.size()));
  }
};

TEST(Trainer, CallbacksAreCalledInOrder) {
  manual_seed(0);
  nn::Sequential model = tiny_mlp();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  data::DataLoader loader(synthetic_data(16), {.batch_size = 8});
  auto recorder = std::make_shared<RecordingCallback>();
  TrainerOptions options;
  options.epochs = 2;
  options.callbacks = {recorder};
  Trainer(options).fit(model, opt, nullptr, loader, nullptr);
  const std::vector<std::string> expected = {
      "train_start",        "epoch_start 1",         "batch 1.1/2 step 1", "batch 1.2/2 step 2",
      "epoch_end 1 completed 1", "epoch_start 2",    "batch 2.1/2 step 3", "batch 2.2/2 step 4",
      "epoch_end 2 completed 2", "train_end 2"};
  EXPECT_EQ(recorder->calls, expected);
}

TEST(Trainer, EarlyStoppingStopsAfterPatienceEpochsWithoutImprovement) {
  manual_seed(0);
  nn::Sequential model = tiny_mlp();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  data::DataLoader loader(synthetic_data(16), {.batch_size = 8});
  auto stopper = std::make_shared<EarlyStopping>("train_loss", /*patience=*/2);
  TrainerOptions options;
  options.epochs = 10;
  // A loss that never moves: every epoch after the first fails to improve.
  options.loss = [](const Tensor& output, const Tensor&) { return output.sum() * 0.0 + 1.0; };
  options.callbacks = {stopper};
  const FitResult result = Trainer(options).fit(model, opt, nullptr, loader, nullptr);
  EXPECT_TRUE(stopper->stopped());
  EXPECT_TRUE(result.stopped);
  EXPECT_EQ(result.history.size(), 3u);  // epoch 1 sets the best, epochs 2 and 3 do not beat it
}

TEST(Trainer, EvaluateAndMetricsFiles) {
  TempDir dir("metrics");
  manual_seed(0);
  nn::Sequential model = tiny_mlp();
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
  data::DataLoader train(synthetic_data(), {.batch_size = 8, .shuffle = true, .seed = 1});
  data::DataLoader test(synthetic_data(), {.batch_size = 32});
  auto checkpoints = std::make_shared<CheckpointCallback>(dir.path.string(), "test_acc", true);
  auto lrs = std::make_shared<LearningRateMonitor>();
  TrainerOptions options;
  options.epochs = 3;
  options.callbacks = {std::make_shared<MetricsLogger>(dir.path.string()), checkpoints, lrs};
  Trainer trainer(options);
  const FitResult result = trainer.fit(model, opt, nullptr, train, &test);
  ASSERT_EQ(result.history.size(), 3u);
  const EpochMetrics& last = result.history.back();
  ASSERT_TRUE(last.test.has_value());
  EXPECT_EQ(last.test->samples, 64);
  EXPECT_GT(last.get("test_acc"), 0.5);  // the rule is learnable; chance is about 1/3
  EXPECT_LT(last.get("train_loss"), result.history.front().get("train_loss"));
  // evaluate() agrees with the epoch's test metrics and leaves the mode alone.
  const EvalResult again = trainer.evaluate(TrainableModel::of(model), test);
  EXPECT_NEAR(again.accuracy, last.test->accuracy, 1e-12);
  EXPECT_TRUE(model->is_training());
  EXPECT_EQ(lrs->history().size(), 24u);
  EXPECT_EMBER_ERROR(last.get("f1"), "unknown metric 'f1'");

  std::ifstream csv(dir.path / "metrics.csv");
  std::vector<std::string> lines;
  for (std::string line; std::getline(csv, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "epoch,train_loss,train_acc,test_loss,test_acc,lr,seconds,data_wait_seconds");
  EXPECT_EQ(lines[3].substr(0, 2), "3,");
  std::stringstream svg;
  svg << std::ifstream(dir.path / "curves.svg").rdbuf();
  EXPECT_NE(svg.str().find("<svg"), std::string::npos);
  EXPECT_NE(svg.str().find("accuracy"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.path / "best.ckpt"));
  EXPECT_EQ(load_training_checkpoint((dir.path / "last.ckpt").string()).epoch, 3);
}

// The curves' y ticks sit at round values (steps of 1, 2 or 5 times a power
// of ten, printed with just enough decimals) and the legend above the frame.
TEST(Trainer, CurvesHaveRoundTicksAndTheLegendOffTheData) {
  std::vector<EpochMetrics> history(3);
  const double losses[] = {0.4732, 0.4197, 0.3901}, accs[] = {0.8113, 0.8472, 0.8730};
  for (int i = 0; i < 3; ++i) {
    history[i].epoch = i + 1;
    history[i].train = {losses[i], accs[i], 64};
    history[i].test = EvalResult{losses[i] + 0.01, accs[i] - 0.01, 64};
  }
  const std::string svg = training_curves_svg(history);
  const std::string tick = "text-anchor='end' font-size='11'>";
  std::vector<std::string> labels;
  for (size_t at = svg.find(tick); at != std::string::npos; at = svg.find(tick, at + 1)) {
    const size_t begin = at + tick.size();
    labels.push_back(svg.substr(begin, svg.find('<', begin) - begin));
  }
  ASSERT_GE(labels.size(), 6u);  // both panels
  for (const std::string& label : labels) {
    EXPECT_LE(label.size(), 4u) << label;  // "0.42", not "0.4197"
    const double v = std::stod(label) * 100;
    EXPECT_NEAR(v, std::round(v), 1e-9) << label;
  }
  EXPECT_NE(svg.find("y='34' text-anchor='end' font-size='12' fill='#1f77b4'>train"), std::string::npos);
}

TEST(Trainer, ProgressWritesPlainLinesUnlessOnATerminal) {
  for (bool terminal : {false, true}) {
    std::ostringstream out;
    manual_seed(0);
    nn::Sequential model = tiny_mlp();
    optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
    optim::CosineAnnealingLR sched(opt, 16);
    data::DataLoader loader(synthetic_data(), {.batch_size = 8});
    TrainerOptions options;
    options.epochs = 2;
    options.scheduler_interval = SchedulerInterval::kStep;
    options.callbacks = {std::make_shared<ProgressLogger>(out, 2, terminal)};
    Trainer trainer(options);
    trainer.fit(model, opt, &sched, loader, nullptr);
    const std::string text = out.str();
    EXPECT_EQ(text.find('\r') != std::string::npos, terminal) << text;
    if (!terminal) {
      EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;  // one line per epoch
      EXPECT_EQ(text.find("lr 0 "), std::string::npos) << text;  // the last step's lr, not the schedule's end
    }
  }
}

TEST(Trainer, StopInsideAnEpochLeavesItIncomplete) {
  manual_seed(0);
  nn::Sequential model = tiny_mlp();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  data::DataLoader loader(synthetic_data(), {.batch_size = 8});
  struct StopAtThirdBatch : Callback {
    void on_batch_end(Trainer& trainer, const BatchProgress& p) override {
      if (p.batch == 3) trainer.request_stop();
    }
  };
  TrainerOptions options;
  options.epochs = 2;
  options.callbacks = {std::make_shared<StopAtThirdBatch>()};
  Trainer trainer(options);
  const FitResult result = trainer.fit(model, opt, nullptr, loader, nullptr);
  EXPECT_TRUE(result.stopped);
  EXPECT_TRUE(result.history.empty());
  EXPECT_EQ(trainer.epochs_completed(), 0);
  EXPECT_EQ(trainer.step(), 3);
  EXPECT_EQ(trainer.make_checkpoint().epoch, 0);
}

TEST(Trainer, RejectsBadOptions) {
  TrainerOptions options;
  options.accumulate_grad_batches = 0;
  EXPECT_EMBER_ERROR(Trainer{options}, "accumulate_grad_batches must be >= 1");
  EXPECT_EMBER_ERROR(EarlyStopping("train_loss", 0), "patience must be >= 1");
}

}  // namespace
}  // namespace ember
