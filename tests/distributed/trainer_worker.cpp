// Trainer scenarios of the distributed worker (Note [Trainer under DDP]): a
// run checkpointed inside an epoch and resumed ends bit for bit where the
// uninterrupted run ends, on every rank; a run under `ember launch
// --max-restarts` whose rank 1 kills itself resumes from the last epoch's
// checkpoint and ends like the run that was never interrupted.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "ember/distributed/process_group.h"
#include "ember/ember.h"
#include "ember/trainer.h"

using namespace ember;
using namespace ember::distributed;

namespace {

struct NetImpl : nn::Module {
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::Dropout drop{nullptr};
  NetImpl() {
    fc1 = register_module("fc1", nn::Linear(6, 16));
    drop = register_module("drop", nn::Dropout(0.2));
    fc2 = register_module("fc2", nn::Linear(16, 3));
  }
  Tensor forward(const Tensor& x) { return fc2(drop(fc1(x).relu())); }
};
EMBER_MODULE(Net);

constexpr int64_t kSamples = 96;  // 48 per rank on 2 ranks: 6 batches of 8, 3 steps of 2 batches per epoch

std::shared_ptr<data::TensorDataset> dataset() {
  manual_seed(7);
  Tensor x = randn({kSamples, 6});
  Tensor y = randint(0, 3, {kSamples});
  return std::make_shared<data::TensorDataset>(x, y);
}

// One training run's objects; `init_seed` decides the initial weights (DDP
// replaces them with rank 0's, and a resume with the checkpoint's).
struct Run {
  Net net;
  std::unique_ptr<optim::Adam> optimizer;
  std::unique_ptr<optim::StepLR> scheduler;
  std::unique_ptr<data::DataLoader> loader;

  explicit Run(uint64_t init_seed) {
    manual_seed(init_seed);
    net = Net();
    optimizer = std::make_unique<optim::Adam>(net->parameters(), optim::AdamOptions(0.01));
    scheduler = std::make_unique<optim::StepLR>(*optimizer, 2, 0.5);
    auto sampler = std::make_shared<data::DistributedSampler>(kSamples, -1, -1, true, 3);
    loader = std::make_unique<data::DataLoader>(
        dataset(), data::DataLoaderOptions{.batch_size = 8, .seed = 5, .sampler = sampler, .name = "train"});
    manual_seed(11);  // the same on every rank: dropout draws alike
  }

  FitResult fit(TrainerOptions options) {
    options.epochs = 3;
    options.accumulate_grad_batches = 2;
    options.scheduler_interval = SchedulerInterval::kStep;
    Trainer trainer(options);
    return trainer.fit(net, *optimizer, scheduler.get(), *loader, nullptr);
  }
};

// Saves a checkpoint (every rank calls save_checkpoint; rank 0 writes) once `step` steps are done.
class SaveAtStep : public Callback {
 public:
  SaveAtStep(int64_t step, std::string path) : step_(step), path_(std::move(path)) {}
  void on_batch_end(Trainer& trainer, const BatchProgress& progress) override {
    if (saved_ || progress.step != step_) return;
    trainer.save_checkpoint(path_);
    saved_ = true;
  }

 private:
  int64_t step_;
  std::string path_;
  bool saved_ = false;
};

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return ca.sizes() == cb.sizes() && ca.dtype() == cb.dtype() &&
         std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// Whether every rank holds the same bits as rank 0.
bool same_on_all_ranks(ProcessGroup& pg, const Tensor& t) {
  Tensor root = t.contiguous().clone();
  pg.broadcast(root, 0)->wait();
  Tensor differs = full({1}, bitwise_equal(t, root) ? 0.0 : 1.0, kFloat64);
  pg.all_reduce(differs, ReduceOp::MAX)->wait();
  return differs.item<double>() == 0;
}

}  // namespace

// Run A trains 3 epochs uninterrupted and saves a checkpoint after step 4
// (inside epoch 2); run B starts from other weights, resumes from it and
// trains to the end. Every parameter must match bit for bit, on every rank.
int trainer_resume() {
  InitOptions o;
  o.timeout = std::chrono::milliseconds(std::atoi(std::getenv("EMBER_TEST_TIMEOUT_MS")));
  auto pg = init_process_group(o);
  const std::string checkpoint = std::string(std::getenv("EMBER_TEST_DIR")) + "/step4.ckpt";
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    if (ok) return;
    std::fprintf(stderr, "rank %d: CHECK FAILED: %s\n", pg->rank(), what.c_str());
    ++failures;
  };

  Run a(100 + static_cast<uint64_t>(pg->rank()));
  TrainerOptions options;
  options.callbacks = {std::make_shared<SaveAtStep>(4, checkpoint)};
  const FitResult first = a.fit(options);
  check(first.history.size() == 3, "run A trains 3 epochs");
  for (const EpochMetrics& m : first.history) {
    check(same_on_all_ranks(*pg, tensor({m.train.loss, m.train.accuracy, static_cast<double>(m.train.samples)})),
          "epoch metrics agree across ranks");
    check(m.train.samples == kSamples, "an epoch's metrics count every rank's samples");
  }

  Run b(200 + static_cast<uint64_t>(pg->rank()));
  TrainerOptions resumed;
  resumed.resume_from = checkpoint;
  const FitResult second = b.fit(resumed);
  check(second.history.size() == 2, "run B trains the rest of epoch 2 and epoch 3");

  const auto pa = a.net->named_parameters(), pb = b.net->named_parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    check(bitwise_equal(pa[i].second, pb[i].second), "resumed " + pa[i].first + " equals the uninterrupted run's");
    check(same_on_all_ranks(*pg, pb[i].second), pa[i].first + " is the same on every rank");
  }
  check(a.optimizer->state_dict().size() == b.optimizer->state_dict().size(), "optimiser state");
  check(a.scheduler->get_last_lr() == b.scheduler->get_last_lr(), "scheduler lr");
  std::fprintf(stderr, "rank %d: final train loss %.9g (A) %.9g (B)\n", pg->rank(), first.history.back().train.loss,
               second.history.back().train.loss);
  check(first.history.back().train.loss == second.history.back().train.loss, "the last epoch's metrics match");
  return failures == 0 ? 0 : 1;
}

// Kills this process (SIGKILL) after optimiser step `step`, once: only in the
// first run of an `ember launch --max-restarts` job.
class KillAtStep : public Callback {
 public:
  explicit KillAtStep(int64_t step) : step_(step) {}
  void on_batch_end(Trainer&, const BatchProgress& progress) override {
    if (progress.step == step_) ::raise(SIGKILL);
  }

 private:
  int64_t step_;
};

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

// Trains 3 epochs with a checkpoint (rank 0's last.ckpt in EMBER_TEST_DIR)
// after each; resumes from it when restarted (EMBER_RESTART_COUNT > 0).
// With EMBER_TEST_KILL_AT_STEP, rank 1 kills itself at that step in the
// first run. Writes every rank's final parameters to
// EMBER_TEST_DIR/final_rank<r>.safetensors.
int trainer_elastic() {
  std::printf("pid %d\n", static_cast<int>(::getpid()));
  std::fflush(stdout);
  InitOptions o;
  o.timeout = std::chrono::milliseconds(std::atoi(std::getenv("EMBER_TEST_TIMEOUT_MS")));
  auto pg = init_process_group(o);
  const std::string dir = std::getenv("EMBER_TEST_DIR");
  const std::string last = dir + "/last.ckpt";
  // Other initial weights in each run: only the resume can make a restarted run end like the first.
  Run run(100 + static_cast<uint64_t>(pg->rank()) + 1000 * static_cast<uint64_t>(env_int("EMBER_RESTART_COUNT")));
  TrainerOptions options;
  options.callbacks = {std::make_shared<CheckpointCallback>(dir, "train_loss", false)};
  const int kill_at = env_int("EMBER_TEST_KILL_AT_STEP");
  if (kill_at > 0 && pg->rank() == 1 && env_int("EMBER_RESTART_COUNT") == 0)
    options.callbacks.push_back(std::make_shared<KillAtStep>(kill_at));
  if (env_int("EMBER_RESTART_COUNT") > 0 && std::filesystem::exists(last)) {
    options.resume_from = last;
    std::fprintf(stderr, "rank %d: restart %d resumes from %s\n", pg->rank(), env_int("EMBER_RESTART_COUNT"),
                 last.c_str());
  }
  run.fit(options);
  save_safetensors(run.net->state_dict(), dir + "/final_rank" + std::to_string(pg->rank()) + ".safetensors");
  return 0;
}

// A training loader without a DistributedSampler is refused on every rank.
int trainer_needs_sampler() {
  InitOptions o;
  o.timeout = std::chrono::milliseconds(std::atoi(std::getenv("EMBER_TEST_TIMEOUT_MS")));
  init_process_group(o);
  Net net;
  optim::SGD optimizer(net->parameters(), optim::SGDOptions(0.1));
  data::DataLoader loader(dataset(), {.batch_size = 8, .shuffle = true, .name = "train"});
  try {
    Trainer({}).fit(net, optimizer, nullptr, loader, nullptr);
  } catch (const Error& e) {
    std::fprintf(stderr, "ERROR: %s\n", e.what());
    return std::string(e.what()).find("the training loader 'train' needs a data::DistributedSampler") !=
                   std::string::npos
               ? 0
               : 3;
  }
  return 4;
}
