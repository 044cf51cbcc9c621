// BatchPipeline: the engine room of the DataLoader. It loads batches by
// number, either inline or in worker threads that run ahead of the consumer,
// and hands them out strictly in number order (Note [DataLoader workers and
// order] in <ember/data/dataloader.h>).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "ember/data/example.h"

namespace ember::data::detail {

class BatchPipeline {
 public:
  // Loads batch k; nothing when there is no batch k (the end of a stream).
  // Runs concurrently for different k when there are workers.
  using LoadFn = std::function<std::optional<Example>(size_t batch)>;

  // num_workers 0 loads in the consumer's thread. Otherwise up to
  // num_workers * prefetch_factor batches are in flight; with `persistent`
  // the threads outlive stop() and serve the next run.
  BatchPipeline(size_t num_workers, size_t prefetch_factor, bool persistent);
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  // Begins a run that hands out batches first, first + 1, ... below `end`
  // (SIZE_MAX when only a load can tell where the stream ends). Any earlier
  // run must have been stopped.
  void start(LoadFn load, size_t first, size_t end);
  // The next batch of the run, or nothing after its last. An exception thrown
  // while loading the batch is rethrown here. Adds the time spent blocked to `waited`.
  std::optional<Example> next(double& waited);
  // Ends the run: drops batches not started and waits for those being loaded.
  void stop();

 private:
  struct Result {
    std::optional<Example> example;
    std::exception_ptr error;
  };
  void worker_loop();
  void issue_locked();  // queues batches up to the prefetch window

  const size_t num_workers_;
  const size_t window_;
  const bool persistent_;

  std::mutex mutex_;
  std::condition_variable work_cv_;  // workers: a batch is queued, or shut down
  std::condition_variable done_cv_;  // consumer: a result arrived, or a load finished
  std::shared_ptr<LoadFn> load_;
  uint64_t run_ = 0;                 // results of older runs are dropped
  std::deque<size_t> queue_;
  std::map<size_t, Result> results_;
  size_t next_issue_ = 0, next_take_ = 0, end_ = 0;
  size_t loading_ = 0;               // loads in progress
  bool shutdown_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ember::data::detail
