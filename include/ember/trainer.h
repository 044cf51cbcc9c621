// ember::Trainer: the training loop, written once: forward, loss, backward,
// gradient accumulation and clipping, optimiser and scheduler steps, metrics,
// evaluation, callbacks, checkpoints and resume.
//
//   ember::nn::Sequential model(...);
//   ember::optim::AdamW opt(model->parameters(), ember::optim::AdamWOptions(1e-3));
//   ember::data::DataLoader train(train_set, {.batch_size = 64, .shuffle = true, .seed = 0});
//   ember::data::DataLoader test(test_set, {.batch_size = 1000});
//
//   ember::TrainerOptions options;
//   options.epochs = 5;
//   options.callbacks = {std::make_shared<ember::ProgressLogger>(),
//                        std::make_shared<ember::CheckpointCallback>("out", "test_acc")};
//   ember::Trainer trainer(options);
//   ember::FitResult result = trainer.fit(model, opt, nullptr, train, &test);
//
// Note [Trainer steps and resume]
// One optimiser step follows every accumulate_grad_batches batches (and the
// last batch of an epoch): each batch's loss is divided by that count before
// backward, so k accumulated batches of n give the gradient of one batch of
// k*n (for mean losses). The scheduler steps after each optimiser step
// (SchedulerInterval::kStep) or after each epoch (kEpoch).
// make_checkpoint() captures the model, the optimiser, the scheduler, the
// training loader (its generator and sampler, see Note [DataLoader state]),
// the global generator, the epochs completed and the steps taken. fit() with
// options.resume_from loads all of it and continues: a run resumed at the end
// of epoch k and trained to n ends with the parameters of an uninterrupted run
// to n, bit for bit. A checkpoint taken inside an epoch (request_stop, Ctrl-C)
// resumes with the next batch of that epoch; gradients accumulated but not yet
// applied are lost, and that epoch's metrics cover only the batches after it.
//
// Note [Trainer under DDP]
// With a process group initialised (or options.ddp given), fit() trains the
// model under nn::parallel::DistributedDataParallel: every rank runs fit()
// with the same options, and the training loader must take a
// data::DistributedSampler (the Trainer sets its epoch at each epoch start).
// Accumulated batches skip the gradient all-reduce (no_sync) until the batch
// that steps. The metrics are sums all-reduced across ranks: one small
// all-reduce per batch (which also carries request_stop, so all ranks stop
// after the same batch) and one per evaluation, so every rank sees the same
// numbers. Only rank 0 (is_main_process()) writes: the built-in callbacks
// that write files or print do nothing on the other ranks, and
// save_checkpoint writes on rank 0, then waits for all ranks (a barrier).
// Resuming, every rank reads the same checkpoint: rank 0's state, which is
// every rank's state (the sampler's epoch and the batch position are the
// same on all ranks, and ranks that share the seed draw the same numbers).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/data/dataloader.h"
#include "ember/nn/module.h"
#include "ember/nn/parallel/distributed.h"
#include "ember/optim/lr_scheduler.h"
#include "ember/optim/optimizer.h"
#include "ember/profiler.h"
#include "ember/tensor.h"
#include "ember/training_checkpoint.h"

namespace ember {

// A module and how to call it: Module has no virtual forward, so the Trainer
// takes the forward as a function. TrainableModel::of(holder) builds one
// from any module holder whose forward takes one Tensor.
struct TrainableModel {
  std::shared_ptr<nn::Module> module;
  std::function<Tensor(const Tensor&)> forward;

  template <class Impl>
  static TrainableModel of(const nn::ModuleHolder<Impl>& holder) {
    std::shared_ptr<Impl> impl = holder.ptr();
    return {impl, [raw = impl.get()](const Tensor& x) { return raw->forward(x); }};
  }
};

// Loss of a batch: (model output, target) -> a scalar to minimise.
using LossFunction = std::function<Tensor(const Tensor& output, const Tensor& target)>;

enum class SchedulerInterval { kStep, kEpoch };

// Loss and accuracy of a pass over a loader.
struct EvalResult {
  double loss = 0;      // mean over samples
  double accuracy = 0;  // fraction of argmax(output, 1) == target; 0 when not classifying
  int64_t samples = 0;
};

// One finished epoch. Epochs count from 1.
struct EpochMetrics {
  int64_t epoch = 0;
  EvalResult train;
  std::optional<EvalResult> test;  // when fit() was given an eval loader
  double lr = 0;                   // the first group's lr in the epoch's last optimiser step
  double seconds = 0;
  double data_wait_seconds = 0;    // time the loop waited for training batches

  // A metric by name: train_loss, train_acc, test_loss, test_acc, lr,
  // seconds, data_wait_seconds. An unknown name, or a test metric without
  // an eval loader, is an ember::Error.
  double get(const std::string& name) const;
};

// Where the loop is, after each training batch.
struct BatchProgress {
  int64_t epoch = 0;              // counting from 1
  int64_t batch = 0;              // batches done in this epoch, counting from 1
  int64_t batches_per_epoch = 0;
  int64_t resumed_after = 0;      // batches of this epoch done before a resume (0 otherwise)
  int64_t step = 0;               // optimiser steps since the start of training
  double loss = 0;                // this epoch's running mean loss (since the resume, in a resumed epoch)
  double accuracy = 0;            // this epoch's running accuracy (likewise)
  int64_t samples = 0;            // samples seen this epoch (likewise)
  double seconds = 0;             // since the epoch started
  double data_wait_seconds = 0;   // of those, waiting for batches
};

struct FitResult {
  std::vector<EpochMetrics> history;  // the epochs this call ran
  bool stopped = false;               // request_stop() ended training early
};

class Trainer;
class SummaryWriter;

// Hooks into the loop; every method does nothing unless overridden. Called
// in the order the callbacks were given.
class Callback {
 public:
  virtual ~Callback() = default;
  virtual void on_train_start(Trainer& /*trainer*/) {}
  virtual void on_epoch_start(Trainer& /*trainer*/, int64_t /*epoch*/) {}
  virtual void on_batch_end(Trainer& /*trainer*/, const BatchProgress& /*progress*/) {}
  virtual void on_epoch_end(Trainer& /*trainer*/, const EpochMetrics& /*metrics*/) {}
  virtual void on_train_end(Trainer& /*trainer*/, const FitResult& /*result*/) {}
};

struct TrainerOptions {
  int64_t epochs = 1;  // fit() trains until this many epochs are complete
  int64_t accumulate_grad_batches = 1;
  std::optional<double> clip_grad_norm;  // max norm of all gradients together
  SchedulerInterval scheduler_interval = SchedulerInterval::kEpoch;
  bool zero_grad_set_to_none = true;
  // Runs forward and loss under amp::autocast(*autocast) (kBFloat16; see docs/amp.md).
  std::optional<DType> autocast;
  LossFunction loss;          // empty: cross entropy
  bool classification = true;  // computes accuracy (argmax of dim 1 against the target)
  std::vector<std::shared_ptr<Callback>> callbacks;
  // Copied into every checkpoint's info (ember's version is added), e.g. seed, threads, config.
  std::map<std::string, std::string> info;
  // A checkpoint to continue from (see Note [Trainer steps and resume]).
  std::string resume_from;
  // Distributed training (Note [Trainer under DDP]): a DistributedDataParallel
  // of the model to train with; when null and a process group is initialised,
  // fit() makes one over the default group with ddp_options.
  std::shared_ptr<nn::parallel::DistributedDataParallel> ddp;
  nn::parallel::DistributedDataParallelOptions ddp_options;
};

class Trainer {
 public:
  explicit Trainer(TrainerOptions options);

  // Trains until options.epochs epochs are complete (or request_stop()).
  // `scheduler` and `eval_loader` may be null. Evaluates on eval_loader after
  // each epoch.
  FitResult fit(const TrainableModel& model, optim::Optimizer& optimizer, optim::LRScheduler* scheduler,
                data::DataLoader& train_loader, data::DataLoader* eval_loader);
  template <class Impl>
  FitResult fit(const nn::ModuleHolder<Impl>& model, optim::Optimizer& optimizer, optim::LRScheduler* scheduler,
                data::DataLoader& train_loader, data::DataLoader* eval_loader) {
    return fit(TrainableModel::of(model), optimizer, scheduler, train_loader, eval_loader);
  }

  // Mean loss and accuracy over `loader`, in eval mode without grad; the
  // module's training mode is restored afterwards. Under a process group,
  // every rank calls it and gets the mean over all ranks' batches.
  EvalResult evaluate(const TrainableModel& model, data::DataLoader& loader);

  // Ends fit() after the current batch. Safe to call from any thread.
  void request_stop() { stop_requested_ = true; }
  bool stop_requested() const { return stop_requested_; }

  // The state of the fit() in progress (or the last one), for callbacks.
  TrainingCheckpoint make_checkpoint() const;
  // Under a process group every rank calls it: rank 0 writes, all wait for it.
  void save_checkpoint(const std::string& path) const;
  // This process's rank and the number of ranks (0 and 1 without a process
  // group); the main process (rank 0) is the one that writes files and logs.
  int rank() const;
  int world_size() const;
  bool is_main_process() const { return rank() == 0; }
  int64_t epochs_completed() const { return epochs_completed_; }
  int64_t step() const { return step_; }
  const TrainerOptions& options() const { return options_; }
  // The first parameter group's current lr (0 outside fit()).
  double current_lr() const;

 private:
  // One pass over the training loader: the epoch's train metrics. `complete`
  // is false when request_stop() broke the pass off before its last batch.
  EvalResult train_epoch(const TrainableModel& model, int64_t epoch, bool& complete);
  void optimizer_step();
  void resume(const std::string& path);
  Tensor compute_loss(const Tensor& output, const Tensor& target) const;
  // trainer_distributed.cpp (Note [Trainer under DDP]).
  std::shared_ptr<distributed::ProcessGroup> group() const;
  void start_distributed(const TrainableModel& model);
  void sum_across_ranks(std::vector<double>& values) const;
  // Whether any rank asked to stop (every rank gets the same answer).
  bool agree_to_stop();

  TrainerOptions options_;
  std::atomic<bool> stop_requested_{false};
  int64_t epochs_completed_ = 0;
  int64_t step_ = 0;
  double last_step_lr_ = 0;  // the first group's lr in the latest optimiser step
  // Set for the duration of fit() (kept after it, for make_checkpoint).
  std::shared_ptr<nn::Module> module_;
  optim::Optimizer* optimizer_ = nullptr;
  optim::LRScheduler* scheduler_ = nullptr;
  data::DataLoader* train_loader_ = nullptr;
  // Under a process group (set by fit()): the group and the model's DDP.
  std::shared_ptr<distributed::ProcessGroup> group_;
  std::shared_ptr<nn::parallel::DistributedDataParallel> ddp_;
  bool stop_agreed_ = false;  // a stop all ranks have agreed on
};

// ---- built-in callbacks ----

// Writes `dir`/last.ckpt after every epoch and `dir`/best.ckpt when the
// monitored metric improves (larger is better when `maximize`).
class CheckpointCallback : public Callback {
 public:
  CheckpointCallback(std::string dir, std::string monitor = "test_acc", bool maximize = true);
  void on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) override;
  std::optional<double> best() const { return best_; }

 private:
  std::string dir_, monitor_;
  bool maximize_;
  std::optional<double> best_;
};

// Stops training when the monitored metric has not improved by more than
// min_delta for `patience` epochs in a row.
class EarlyStopping : public Callback {
 public:
  EarlyStopping(std::string monitor, int64_t patience, bool maximize = false, double min_delta = 0);
  void on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) override;
  bool stopped() const { return stopped_; }

 private:
  std::string monitor_;
  int64_t patience_;
  bool maximize_;
  double min_delta_;
  std::optional<double> best_;
  int64_t epochs_without_improvement_ = 0;
  bool stopped_ = false;
};

// Records the lr after every batch: (step, lr) pairs.
class LearningRateMonitor : public Callback {
 public:
  void on_batch_end(Trainer& trainer, const BatchProgress& progress) override;
  const std::vector<std::pair<int64_t, double>>& history() const { return history_; }

 private:
  std::vector<std::pair<int64_t, double>> history_;
};

// One summary line per epoch on `out`; on a terminal also a progress line
// rewritten in place every `every_n_batches` batches (loss, accuracy,
// samples/s, ETA, time waiting for data). A file or pipe gets plain lines
// only: no carriage returns.
class ProgressLogger : public Callback {
 public:
  // `terminal`: whether `out` is a terminal (the in-place line is drawn only there).
  explicit ProgressLogger(std::ostream& out, int64_t every_n_batches = 20, bool terminal = false);
  ProgressLogger();  // std::cout, a terminal when stdout is one
  void on_batch_end(Trainer& trainer, const BatchProgress& progress) override;
  void on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) override;

 private:
  std::ostream& out_;
  int64_t every_;
  bool terminal_;
};

// Appends each epoch to `dir`/metrics.csv (epoch, train_loss, train_acc,
// test_loss, test_acc, lr, seconds, data_wait_seconds; the test columns are
// empty without an eval loader) and redraws `dir`/curves.svg: loss and
// accuracy per epoch, train and test. A fresh run truncates the CSV; a
// resumed one (epochs already completed) appends.
class MetricsLogger : public Callback {
 public:
  explicit MetricsLogger(std::string dir);
  void on_train_start(Trainer& trainer) override;
  void on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) override;

 private:
  std::string dir_;
  std::vector<EpochMetrics> history_;  // the epochs this run has seen, for the plot
};

// The SVG document MetricsLogger writes: two line plots side by side, loss
// and accuracy against the epoch.
std::string training_curves_svg(const std::vector<EpochMetrics>& history);

// Writes the run's metrics as TensorBoard scalars into a new event file in
// `log_dir` (ember::SummaryWriter, <ember/summary_writer.h>), at the optimiser
// step. Every `every_n_batches` batches (and at an epoch's last batch):
// train/loss and train/accuracy (means over the batches since the last
// point), train/lr, train/samples_per_second. After every epoch:
// epoch/train_loss, epoch/train_acc, epoch/test_loss and epoch/test_acc
// (with an eval loader), epoch/lr, epoch/samples_per_second; and, when
// `histograms_of` is given, a histogram of each of its parameters
// ("parameters/<name>"). Accuracies only when the Trainer classifies.
class TensorBoardLogger : public Callback {
 public:
  explicit TensorBoardLogger(std::string log_dir, int64_t every_n_batches = 10,
                             std::shared_ptr<nn::Module> histograms_of = nullptr);
  ~TensorBoardLogger() override;
  void on_train_start(Trainer& trainer) override;
  void on_batch_end(Trainer& trainer, const BatchProgress& progress) override;
  void on_epoch_end(Trainer& trainer, const EpochMetrics& metrics) override;
  // The event file (empty before fit() starts).
  std::string file_path() const;

 private:
  std::string log_dir_;
  int64_t every_;
  std::shared_ptr<nn::Module> histograms_of_;
  std::unique_ptr<SummaryWriter> writer_;
  // The epoch's running sums at the last point written, to average the batches since.
  int64_t epoch_ = 0;
  double loss_sum_ = 0, correct_ = 0, seconds_ = 0;
  int64_t samples_ = 0;
};

// Profiles optimiser steps [first, end) of fit() (counted from the start of
// training, so a resumed run counts on from its checkpoint): starts a
// profiler::Profile when `first` steps are done and stops it when `end` are
// (or when fit() ends), then writes a Chrome trace to `trace_path` unless it
// is empty. With request_stop, fit() ends once the window has been profiled.
// The Trainer marks each batch with a "ProfilerStep#<step>" range.
class ProfileSteps : public Callback {
 public:
  ProfileSteps(int64_t first, int64_t end, std::string trace_path, profiler::ProfileOptions options = {},
               bool request_stop = false);
  void on_train_start(Trainer& trainer) override;
  void on_batch_end(Trainer& trainer, const BatchProgress& progress) override;
  void on_train_end(Trainer& trainer, const FitResult& result) override;
  // The finished profile; null until the window has ended.
  const profiler::Profile* profile() const { return finished_ ? profile_.get() : nullptr; }

 private:
  void begin();
  void finish(Trainer& trainer);

  int64_t first_, end_;
  std::string trace_path_;
  profiler::ProfileOptions options_;
  bool request_stop_;
  std::unique_ptr<profiler::Profile> profile_;
  bool finished_ = false;
};

}  // namespace ember
