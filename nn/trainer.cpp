// Trainer (<ember/trainer.h>): the loop, evaluation, checkpoints and resume.
// See Note [Trainer steps and resume].
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "ember/amp.h"
#include "ember/autograd.h"
#include "ember/data/distributed_sampler.h"
#include "ember/error.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/utils.h"
#include "ember/profiler.h"
#include "ember/trainer.h"

namespace ember {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Sums of a pass, turned into means at the end.
struct RunningMetrics {
  double loss_sum = 0;
  double correct = 0;
  int64_t samples = 0;

  void add(const Tensor& output, const Tensor& target, const Tensor& loss, bool classification) {
    const int64_t n = output.size(0);
    loss_sum += loss.item<double>() * static_cast<double>(n);
    if (classification) correct += output.argmax(1).eq(target).to(kFloat64).sum().item<double>();
    samples += n;
  }
  EvalResult result() const {
    if (samples == 0) return {};
    const double n = static_cast<double>(samples);
    return {loss_sum / n, correct / n, samples};
  }
  // The sums as doubles, and back (sample counts stay far below 2^53).
  std::vector<double> sums() const { return {loss_sum, correct, static_cast<double>(samples)}; }
  static RunningMetrics of(const std::vector<double>& sums) {
    return {sums[0], sums[1], static_cast<int64_t>(sums[2])};
  }
};

}  // namespace

double EpochMetrics::get(const std::string& name) const {
  if (name == "train_loss") return train.loss;
  if (name == "train_acc") return train.accuracy;
  if (name == "lr") return lr;
  if (name == "seconds") return seconds;
  if (name == "data_wait_seconds") return data_wait_seconds;
  if (name == "test_loss" || name == "test_acc") {
    EMBER_CHECK(test.has_value(), "EpochMetrics: '", name, "' needs an eval loader, and fit() was given none");
    return name == "test_loss" ? test->loss : test->accuracy;
  }
  EMBER_FAIL("EpochMetrics: unknown metric '", name,
             "' (expected train_loss, train_acc, test_loss, test_acc, lr, seconds or data_wait_seconds)");
}

Trainer::Trainer(TrainerOptions options) : options_(std::move(options)) {
  EMBER_CHECK(options_.epochs >= 0, "Trainer: epochs must be >= 0, got ", options_.epochs);
  EMBER_CHECK(options_.accumulate_grad_batches >= 1, "Trainer: accumulate_grad_batches must be >= 1, got ",
              options_.accumulate_grad_batches);
  EMBER_CHECK(!options_.clip_grad_norm || *options_.clip_grad_norm > 0, "Trainer: clip_grad_norm must be > 0, got ",
              options_.clip_grad_norm.value_or(0));
}

Tensor Trainer::compute_loss(const Tensor& output, const Tensor& target) const {
  if (options_.loss) return options_.loss(output, target);
  return nn::functional::cross_entropy(output, target);
}

double Trainer::current_lr() const {
  if (optimizer_ == nullptr || optimizer_->param_groups().empty()) return 0;
  return optimizer_->param_groups().front().options().lr();
}

FitResult Trainer::fit(const TrainableModel& model, optim::Optimizer& optimizer, optim::LRScheduler* scheduler,
                       data::DataLoader& train_loader, data::DataLoader* eval_loader) {
  EMBER_CHECK(model.module != nullptr && model.forward, "Trainer::fit: the model has no module or no forward");
  module_ = model.module;
  optimizer_ = &optimizer;
  scheduler_ = scheduler;
  train_loader_ = &train_loader;
  stop_requested_ = false;
  stop_agreed_ = false;
  epochs_completed_ = 0;
  step_ = 0;
  ddp_.reset();
  group_ = options_.ddp ? options_.ddp->process_group()
                        : (distributed::is_initialized() ? distributed::get_default_group() : nullptr);
  if (!options_.resume_from.empty()) resume(options_.resume_from);
  if (group_) start_distributed(model);

  FitResult result;
  optimizer.zero_grad(options_.zero_grad_set_to_none);
  for (auto& callback : options_.callbacks) callback->on_train_start(*this);
  agree_to_stop();
  for (int64_t epoch = epochs_completed_ + 1; epoch <= options_.epochs && !stop_agreed_; ++epoch) {
    for (auto& callback : options_.callbacks) callback->on_epoch_start(*this, epoch);
    if (auto* sampler = dynamic_cast<data::DistributedSampler*>(train_loader.options().sampler.get()))
      sampler->set_epoch(static_cast<uint64_t>(epoch - 1));
    const auto start = std::chrono::steady_clock::now();
    const double wait_before = train_loader.wait_seconds();
    bool complete = false;
    EpochMetrics metrics;
    metrics.epoch = epoch;
    metrics.train = train_epoch(model, epoch, complete);
    if (!complete) break;  // stopped inside the epoch: it does not count
    metrics.lr = last_step_lr_;  // not current_lr(): a per-step schedule has already moved on (to 0 at its end)
    if (scheduler != nullptr && options_.scheduler_interval == SchedulerInterval::kEpoch) scheduler->step();
    if (eval_loader != nullptr) metrics.test = evaluate(model, *eval_loader);
    metrics.seconds = seconds_since(start);
    metrics.data_wait_seconds = train_loader.wait_seconds() - wait_before;
    epochs_completed_ = epoch;
    result.history.push_back(metrics);
    for (auto& callback : options_.callbacks) callback->on_epoch_end(*this, metrics);
    agree_to_stop();
  }
  result.stopped = stop_agreed_;
  for (auto& callback : options_.callbacks) callback->on_train_end(*this, result);
  if (!options_.ddp) ddp_.reset();  // its hooks go with it
  return result;
}

EvalResult Trainer::train_epoch(const TrainableModel& model, int64_t epoch, bool& complete) {
  data::DataLoader& loader = *train_loader_;
  model.module->train();
  const auto start = std::chrono::steady_clock::now();
  const double wait_before = loader.wait_seconds();
  const int64_t k = options_.accumulate_grad_batches;
  RunningMetrics running;
  RunningMetrics everyone;  // under DDP: all ranks' sums (else the same as running)
  BatchProgress progress;
  progress.epoch = epoch;
  progress.batches_per_epoch = static_cast<int64_t>(loader.size());
  // A resumed epoch counts on from where the checkpoint left it.
  progress.batch = progress.resumed_after = static_cast<int64_t>(loader.resumed_batches());
  int64_t pending = 0;  // batches whose gradients wait for the next step
  complete = true;
  for (data::Example& batch : loader) {
    std::optional<profiler::Range> step_range;
    if (profiler::is_profiling()) step_range.emplace("ProfilerStep#" + std::to_string(step_));
    const bool steps = pending + 1 == k || progress.batch + 1 == progress.batches_per_epoch;
    Tensor output, loss;
    auto forward = [&] {
      amp::autocast mixed(options_.autocast.value_or(DType::BFloat16), options_.autocast.has_value());
      output = model.forward(batch.data);
      loss = compute_loss(output, batch.target);
      return loss;
    };
    if (ddp_ && !steps) {
      auto local = ddp_->no_sync();  // gradients accumulate here until the batch that steps
      ddp_->forward(forward);
      (loss / static_cast<double>(k)).backward();
    } else {
      ddp_ ? ddp_->forward(forward) : forward();
      (k == 1 ? loss : loss / static_cast<double>(k)).backward();
    }
    {
      NoGradGuard no_grad;
      running.add(output.detach(), batch.target, loss.detach(), options_.classification);
    }
    if (++pending == k) {
      optimizer_step();
      pending = 0;
    }
    step_range.reset();
    ++progress.batch;
    // Under DDP the progress is every rank's, and so is the decision to stop.
    everyone = running;
    if (group_) {
      std::vector<double> sums = running.sums();
      sums.push_back(stop_requested_ ? 1 : 0);
      sum_across_ranks(sums);
      stop_agreed_ = sums.back() > 0;
      sums.pop_back();
      everyone = RunningMetrics::of(sums);
    }
    const EvalResult so_far = everyone.result();
    progress.step = step_;
    progress.loss = so_far.loss;
    progress.accuracy = so_far.accuracy;
    progress.samples = so_far.samples;
    progress.seconds = seconds_since(start);
    progress.data_wait_seconds = loader.wait_seconds() - wait_before;
    for (auto& callback : options_.callbacks) callback->on_batch_end(*this, progress);
    // A stop requested by these callbacks is agreed on after the next batch (or the epoch).
    if (!group_) stop_agreed_ = stop_requested_;
    if (stop_agreed_ && progress.batch < progress.batches_per_epoch) {
      complete = false;
      break;
    }
  }
  if (complete && pending > 0) optimizer_step();  // the epoch's last, shorter accumulation
  return everyone.result();
}

void Trainer::optimizer_step() {
  if (options_.clip_grad_norm) nn::clip_grad_norm_(optimizer_->parameters(), *options_.clip_grad_norm);
  last_step_lr_ = current_lr();
  optimizer_->step();
  optimizer_->zero_grad(options_.zero_grad_set_to_none);
  ++step_;
  if (scheduler_ != nullptr && options_.scheduler_interval == SchedulerInterval::kStep) scheduler_->step();
}

EvalResult Trainer::evaluate(const TrainableModel& model, data::DataLoader& loader) {
  EMBER_CHECK(model.module != nullptr && model.forward, "Trainer::evaluate: the model has no module or no forward");
  NoGradGuard no_grad;
  const bool was_training = model.module->is_training();
  model.module->eval();
  RunningMetrics running;
  for (data::Example& batch : loader) {
    amp::autocast mixed(options_.autocast.value_or(DType::BFloat16), options_.autocast.has_value());
    const Tensor output = model.forward(batch.data);
    running.add(output, batch.target, compute_loss(output, batch.target), options_.classification);
  }
  model.module->train(was_training);
  if (!group()) return running.result();
  std::vector<double> sums = running.sums();
  sum_across_ranks(sums);
  return RunningMetrics::of(sums).result();
}

TrainingCheckpoint Trainer::make_checkpoint() const {
  EMBER_CHECK(module_ != nullptr && optimizer_ != nullptr, "Trainer::make_checkpoint: no fit() has started");
  TrainingCheckpoint checkpoint;
  checkpoint.states["model"] = module_->state_dict();
  checkpoint.states["optimizer"] = optimizer_->state_dict();
  if (scheduler_ != nullptr) checkpoint.states["scheduler"] = scheduler_->state_dict();
  checkpoint.states["train_data"] = train_loader_->state_dict();
  checkpoint.epoch = epochs_completed_;
  checkpoint.step = step_;
  checkpoint.info = options_.info;
  capture_global_rng(checkpoint);
  return checkpoint;
}

void Trainer::save_checkpoint(const std::string& path) const {
  if (is_main_process()) save_training_checkpoint(make_checkpoint(), path);
  if (group_) group_->barrier()->wait();  // the file is there for every rank once this returns
}

void Trainer::resume(const std::string& path) {
  const TrainingCheckpoint checkpoint = load_training_checkpoint(path);
  // The counters must describe this run: `step` optimiser steps make `epoch`
  // whole epochs and at most one partial one (the checksum guards against
  // damage, not against a file written by hand or by another program).
  const auto batches = static_cast<int64_t>(train_loader_->size());
  const int64_t per_epoch = std::max<int64_t>(1, (batches + options_.accumulate_grad_batches - 1) /
                                                     options_.accumulate_grad_batches);
  int64_t first = 0, last = 0;
  EMBER_CHECK(checkpoint.epoch >= 0 && checkpoint.step >= 0 &&
                  !__builtin_mul_overflow(checkpoint.epoch, per_epoch, &first) &&
                  !__builtin_add_overflow(first, per_epoch, &last) && checkpoint.step >= first &&
                  checkpoint.step <= last,
              "Trainer: cannot resume from ", path, ": its counters (epoch ", checkpoint.epoch, ", step ",
              checkpoint.step, ") do not fit this run's ", per_epoch,
              " optimiser steps per epoch (same data, batch size and accumulate_grad_batches as the saved run?)");
  auto part = [&](const char* name) -> const TensorDict& {
    auto it = checkpoint.states.find(name);
    EMBER_CHECK(it != checkpoint.states.end(), "Trainer: cannot resume from ", path, ": it has no '", name,
                "' state");
    return it->second;
  };
  module_->load_state_dict(part("model"));
  optimizer_->load_state_dict(part("optimizer"));
  if (scheduler_ != nullptr) scheduler_->load_state_dict(part("scheduler"));
  train_loader_->load_state_dict(part("train_data"));
  restore_global_rng(checkpoint);
  epochs_completed_ = checkpoint.epoch;
  step_ = checkpoint.step;
}

}  // namespace ember
