#include "kernels/cuda/emulate/executor.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "kernels/cuda/emulate/config.h"

namespace ember::cuda::emulate {
namespace {

using Clock = std::chrono::steady_clock;

struct Task {
  uint64_t order = 0;  // global queueing order: the oldest ready task runs first
  uint64_t number = 0;
  Clock::time_point queued;
  std::vector<std::pair<const Stream*, uint64_t>> after;  // (stream, task number) that must be done first
  std::function<void()> run;
};

class Executor {
 public:
  Executor() : worker_([this] { loop(); }) { worker_.detach(); }

  Stream* legacy(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& s = legacy_[device];
    if (!s) s = add_stream(device, true, true);
    return s;
  }

  Stream* create(int device, bool blocking) {
    std::lock_guard<std::mutex> lock(mutex_);
    return add_stream(device, false, blocking);
  }

  void destroy(Stream* s) {
    wait([s] { return s->completed == s->submitted; });
    std::lock_guard<std::mutex> lock(mutex_);
    s->destroyed = true;  // kept: events recorded on it still refer to it
  }

  bool live(const Stream* s) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& owned : streams_)
      if (owned.get() == s) return !s->destroyed;
    return false;
  }

  uint64_t push(Stream* s, std::function<void()> run, std::vector<std::pair<const Stream*, uint64_t>> after = {}) {
    std::lock_guard<std::mutex> lock(mutex_);
    return push_locked(s, std::move(run), std::move(after));
  }

  // The marker is queued and the event pointed at it in one step, so a
  // concurrent query never sees half of it.
  void record(Event* e, Stream* s) {
    std::lock_guard<std::mutex> lock(mutex_);
    e->point = push_locked(s, [e] { e->when = Clock::now(); }, {});
    e->stream = s;
  }

  // Later work on `s` waits for `e`'s recorded point (an event never recorded is complete).
  void wait_on(Stream* s, const Event* e) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (e->stream) push_locked(s, [] {}, {{e->stream, e->point}});
  }

  void wait(const std::function<bool()>& done) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (done()) return;
    waiting_.push_back(&done);
    ready_.notify_all();
    ready_.wait(lock, done);
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), &done));
  }

  // Waits until every stream's queued work has run.
  void drain() {
    wait([this] {
      for (const auto& s : streams_)
        if (s->completed < s->submitted) return false;
      return true;
    });
  }

  bool check(const std::function<bool()>& done) {
    std::lock_guard<std::mutex> lock(mutex_);
    return done();
  }

  void wait_device(int device) {
    std::vector<Stream*> mine;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& s : streams_)
        if (s->device == device) mine.push_back(s.get());
    }
    wait([&] {
      for (const Stream* s : mine)
        if (s->completed < s->submitted) return false;
      return true;
    });
  }

  void fault(int device, std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!faults_.count(device)) faults_[device] = DeviceFault{std::move(message)};
  }

  std::optional<DeviceFault> take(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = faults_.find(device);
    if (it == faults_.end()) return std::nullopt;
    DeviceFault f = std::move(it->second);
    faults_.erase(it);
    return f;
  }

 private:
  uint64_t push_locked(Stream* s, std::function<void()> run, std::vector<std::pair<const Stream*, uint64_t>> after) {
    Task t;
    t.order = ++order_;
    t.number = ++s->submitted;
    t.queued = Clock::now();
    t.after = std::move(after);
    // CUDA's implicit ordering between the legacy default stream and the blocking streams of its device.
    for (const auto& other : streams_) {
      Stream* o = other.get();
      if (o == s || o->device != s->device || o->destroyed || !o->blocking || !s->blocking) continue;
      if (s->legacy || o->legacy) t.after.emplace_back(o, o->submitted);
    }
    t.run = std::move(run);
    queues_[s].push_back(std::move(t));
    ready_.notify_all();
    return s->submitted;
  }

  Stream* add_stream(int device, bool legacy, bool blocking) {
    streams_.push_back(std::make_unique<Stream>());
    Stream* s = streams_.back().get();
    s->device = device;
    s->legacy = legacy;
    s->blocking = blocking;
    return s;
  }

  // True while a host thread waits for something not yet done: work then
  // starts at once. Only then: once a wait is satisfied, the rest of the
  // queued work lags again, even before the waiting thread has woken up.
  bool someone_waits() const {
    for (const std::function<bool()>* done : waiting_)
      if (!(*done)()) return true;
    return false;
  }

  // Of the tasks at the head of a queue whose prerequisites are done, the
  // oldest (or the newest, under EMBER_CUDA_EMULATE_SCHEDULE=newest).
  std::pair<Stream*, Task*> next_ready() {
    const bool newest = config().newest_first;
    std::pair<Stream*, Task*> best{nullptr, nullptr};
    for (auto& [s, q] : queues_) {
      if (q.empty()) continue;
      Task& t = q.front();
      bool ok = true;
      for (const auto& [o, number] : t.after) ok = ok && o->completed >= number;
      if (ok && (!best.second || (newest ? t.order > best.second->order : t.order < best.second->order)))
        best = {s, &t};
    }
    return best;
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto lag = std::chrono::milliseconds(config().lag_ms);
    for (;;) {
      auto [s, t] = next_ready();
      if (!t) {
        ready_.wait(lock);
        continue;
      }
      if (!someone_waits() && Clock::now() - t->queued < lag) {
        ready_.wait_until(lock, t->queued + lag);
        continue;
      }
      Task task = std::move(queues_[s].front());
      queues_[s].pop_front();
      lock.unlock();
      try {
        task.run();
      } catch (const std::exception& e) {
        fault(s->device, e.what());
      }
      lock.lock();
      s->completed = task.number;
      ready_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::map<int, Stream*> legacy_;
  std::map<Stream*, std::deque<Task>> queues_;
  std::map<int, DeviceFault> faults_;
  uint64_t order_ = 0;
  std::vector<const std::function<bool()>*> waiting_;  // the conditions host threads wait for
  std::thread worker_;
};

Executor& executor() {
  static auto* e = [] {
    auto* created = new Executor();  // leaked, with its detached thread
    // As a process ends, queued work finishes first: no kernel is cut off halfway through a block.
    std::atexit([] { executor().drain(); });
    return created;
  }();
  return *e;
}

}  // namespace

Stream* legacy_stream(int device) { return executor().legacy(device); }
Stream* create_stream(int device, bool blocking) { return executor().create(device, blocking); }
void destroy_stream(Stream* s) { executor().destroy(s); }
bool is_live(const Stream* s) { return executor().live(s); }
uint64_t enqueue(Stream* s, std::function<void()> task) { return executor().push(s, std::move(task)); }

void record_event(Event* e, Stream* s) { executor().record(e, s); }

void stream_wait_event(Stream* s, const Event* e) { executor().wait_on(s, e); }

bool stream_done(const Stream* s) {
  return executor().check([s] { return s->completed == s->submitted; });
}
bool event_done(const Event* e) {
  return executor().check([e] { return !e->stream || e->stream->completed >= e->point; });
}
void wait_stream(const Stream* s) {
  executor().wait([s] { return s->completed == s->submitted; });
}
void wait_event(const Event* e) {
  executor().wait([e] { return !e->stream || e->stream->completed >= e->point; });
}
void wait_device(int device) { executor().wait_device(device); }
std::optional<DeviceFault> take_fault(int device) { return executor().take(device); }

}  // namespace ember::cuda::emulate
