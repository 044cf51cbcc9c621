// See batch_pipeline.h.
#include "data/batch_pipeline.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "ember/autograd.h"
#include "ember/error.h"
#include "ember/profiler.h"

namespace ember::data::detail {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

BatchPipeline::BatchPipeline(size_t num_workers, size_t prefetch_factor, bool persistent)
    : num_workers_(num_workers), window_(num_workers * prefetch_factor), persistent_(persistent) {
  EMBER_CHECK(num_workers_ == 0 || prefetch_factor > 0, "DataLoader: prefetch_factor must be positive with ",
              num_workers_, " workers, got 0");
}

BatchPipeline::~BatchPipeline() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ++run_;
    queue_.clear();
    shutdown_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void BatchPipeline::start(LoadFn load, size_t first, size_t end) {
  std::unique_lock<std::mutex> lock(mutex_);
  load_ = std::make_shared<LoadFn>(std::move(load));
  ++run_;
  next_issue_ = next_take_ = first;
  end_ = end;
  if (num_workers_ == 0) return;
  while (threads_.size() < num_workers_) threads_.emplace_back([this] { worker_loop(); });
  issue_locked();
  lock.unlock();
  work_cv_.notify_all();
}

void BatchPipeline::issue_locked() {
  while (next_issue_ < end_ && next_issue_ < next_take_ + window_) queue_.push_back(next_issue_++);
}

std::optional<Example> BatchPipeline::next(double& waited) {
  if (num_workers_ == 0) {
    if (!load_ || next_take_ >= end_) return std::nullopt;
    const auto t0 = std::chrono::steady_clock::now();
    const size_t batch = next_take_++;
    std::optional<Example> example;
    try {
      example = (*load_)(batch);
    } catch (...) {
      waited += seconds_since(t0);
      throw;
    }
    waited += seconds_since(t0);
    if (!example) end_ = batch;
    return example;
  }

  std::unique_lock<std::mutex> lock(mutex_);
  if (!load_ || next_take_ >= end_) return std::nullopt;
  const auto t0 = std::chrono::steady_clock::now();
  done_cv_.wait(lock, [&] { return results_.count(next_take_) > 0; });
  waited += seconds_since(t0);
  auto node = results_.extract(next_take_);
  Result result = std::move(node.mapped());
  const size_t batch = next_take_++;
  if (!result.example && !result.error) {
    // The stream ended at this batch: the loads queued after it would find nothing either.
    end_ = batch;
    queue_.clear();
    return std::nullopt;
  }
  issue_locked();
  lock.unlock();
  work_cv_.notify_all();
  if (result.error) std::rethrow_exception(result.error);
  return std::move(result.example);
}

void BatchPipeline::stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  ++run_;
  queue_.clear();
  done_cv_.wait(lock, [&] { return loading_ == 0; });
  std::map<size_t, Result> dropped = std::move(results_);
  results_.clear();
  load_.reset();
  next_issue_ = next_take_ = end_ = 0;
  std::vector<std::thread> joining;
  if (!persistent_) {
    shutdown_ = true;
    joining = std::move(threads_);
    threads_.clear();
  }
  lock.unlock();
  work_cv_.notify_all();
  for (std::thread& t : joining) t.join();
  if (!persistent_) {
    std::lock_guard<std::mutex> relock(mutex_);
    shutdown_ = false;
  }
}

void BatchPipeline::worker_loop() {
  // Loading builds tensors that never need gradients.
  NoGradGuard no_grad;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return shutdown_ || !queue_.empty(); });
    if (shutdown_) return;
    const size_t batch = queue_.front();
    queue_.pop_front();
    const uint64_t run = run_;
    std::shared_ptr<LoadFn> load = load_;
    ++loading_;
    lock.unlock();
    Result result;
    try {
      // Batches loaded while a profile runs are recorded on this thread.
      profiler::ThreadGuard recorded("DataLoader worker");
      std::optional<profiler::Range> range;
      if (profiler::is_profiling()) range.emplace("DataLoader batch " + std::to_string(batch), profiler::EventKind::DataLoader);
      result.example = (*load)(batch);
    } catch (...) {
      result.error = std::current_exception();
    }
    lock.lock();
    --loading_;
    if (run == run_) results_.emplace(batch, std::move(result));
    done_cv_.notify_all();
  }
}

}  // namespace ember::data::detail
