// The intra-op thread pool behind ember::parallel_for (see Note [Deterministic
// parallelism] in <ember/parallel.h>).
//
// Workers sleep on a condition variable between jobs. A job is a range of
// chunk indices; the caller and the workers claim chunks with one atomic
// counter, so which thread runs a chunk varies but the chunks themselves do not.
//
// Waking a sleeping thread takes ~40 us here, and milliseconds when its core
// has gone idle in a virtual machine: longer than many ops last, so a worker
// woken per op would mostly arrive after the caller had done all the chunks.
// A worker that finishes a job therefore polls for the next one for a short
// while (kPollTime) before it sleeps, as OpenMP runtimes do; a training step's
// ops follow each other closely enough that it stays awake through them.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "ember/error.h"
#include "ember/parallel.h"

namespace ember {
namespace {

thread_local bool t_in_parallel = false;

class ThreadPool {
 public:
  static ThreadPool& instance() {
    static ThreadPool* pool = new ThreadPool();  // leaked: workers may outlive static destructors
    return *pool;
  }

  int num_threads() const { return num_threads_.load(std::memory_order_relaxed); }

  void set_num_threads(int n) {
    EMBER_CHECK(n >= 1, "set_num_threads: expected a thread count >= 1, got ", n);
    std::lock_guard<std::mutex> run_lock(run_mutex_);
    std::unique_lock<std::mutex> lock(mutex_);
    while (static_cast<int>(workers_.size()) < n - 1) {
      workers_.emplace_back([this] { worker_loop(); });
    }
    num_threads_.store(n, std::memory_order_relaxed);
  }

  void run(int64_t begin, int64_t end, int64_t grain, detail::ChunkFn fn) {
    const int64_t chunks = (end - begin + grain - 1) / grain;
    const int threads = num_threads();
    if (threads <= 1 || t_in_parallel) {  // nested parallel regions run inline
      run_inline(begin, end, grain, chunks, fn);
      return;
    }
    std::lock_guard<std::mutex> run_lock(run_mutex_);  // one job at a time
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = Job{begin, end, grain, chunks, &fn};
      next_chunk_.store(0, std::memory_order_relaxed);
      done_chunks_ = 0;
      error_ = nullptr;
      open_slots_ = std::min<int64_t>(threads - 1, chunks - 1);
      ++generation_;
      published_generation_.store(generation_, std::memory_order_release);
    }
    cv_.notify_all();
    work_on_job();
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return done_chunks_ == job_.chunks && running_workers_ == 0; });
    open_slots_ = 0;  // a worker that wakes late must not join a finished job
    if (error_) std::rethrow_exception(error_);
  }

 private:
  struct Job {
    int64_t begin = 0, end = 0, grain = 1, chunks = 0;
    detail::ChunkFn* fn = nullptr;
  };

  ThreadPool() {
    unsigned hw = std::thread::hardware_concurrency();
    set_num_threads(hw == 0 ? 1 : static_cast<int>(hw));
  }

  static void run_inline(int64_t begin, int64_t end, int64_t grain, int64_t chunks, detail::ChunkFn fn) {
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t b = begin + c * grain;
      fn(b, std::min(end, b + grain));
    }
  }

  // Claims chunks until none are left.
  void work_on_job() {
    const bool was_parallel = t_in_parallel;
    t_in_parallel = true;
    int64_t ran = 0;
    for (;;) {
      const int64_t c = next_chunk_.fetch_add(1, std::memory_order_relaxed);
      if (c >= job_.chunks) break;
      const int64_t b = job_.begin + c * job_.grain;
      try {
        (*job_.fn)(b, std::min(job_.end, b + job_.grain));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
      }
      ++ran;
    }
    t_in_parallel = was_parallel;
    std::lock_guard<std::mutex> lock(mutex_);
    done_chunks_ += ran;
  }

  static constexpr std::chrono::microseconds kPollTime{200};

  // Polls for a job newer than `seen` for up to kPollTime; the caller then
  // takes the mutex either way, so a job found here is not missed.
  void poll_for_job(uint64_t seen) const {
    const auto until = std::chrono::steady_clock::now() + kPollTime;
    do {
      for (int i = 0; i < 64; ++i) {
        if (published_generation_.load(std::memory_order_acquire) != seen) return;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    } while (std::chrono::steady_clock::now() < until);
  }

  void worker_loop() {
    uint64_t seen = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      seen = generation_;
    }
    for (;;) {
      poll_for_job(seen);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return generation_ != seen; });
        seen = generation_;
        if (open_slots_ <= 0) continue;  // this job needs no more helpers
        --open_slots_;
        ++running_workers_;
      }
      work_on_job();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        --running_workers_;
      }
      done_cv_.notify_all();
    }
  }

  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  std::atomic<int> num_threads_{1};
  std::atomic<int64_t> next_chunk_{0};
  Job job_;
  uint64_t generation_ = 0;
  std::atomic<uint64_t> published_generation_{0};  // generation_, readable without the mutex
  int64_t done_chunks_ = 0;
  int64_t open_slots_ = 0;
  int64_t running_workers_ = 0;
  std::exception_ptr error_;
};

}  // namespace

int get_num_threads() { return ThreadPool::instance().num_threads(); }
void set_num_threads(int n) { ThreadPool::instance().set_num_threads(n); }
bool in_parallel_region() { return t_in_parallel; }

namespace detail {
void parallel_for_chunks(int64_t begin, int64_t end, int64_t grain, ChunkFn fn) {
  ThreadPool::instance().run(begin, end, grain, fn);
}
}  // namespace detail

}  // namespace ember
