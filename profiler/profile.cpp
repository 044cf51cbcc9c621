// ember::profiler::Profile: start, stop, and the merged result.
#include <unistd.h>

#include <iostream>
#include <unordered_map>

#include "core/dispatcher.h"
#include "profiler/profile_result.h"
#include "profiler/recorder.h"

namespace ember::profiler {

namespace {

std::string name_of_this_thread() {
  const uint64_t tid = detail::os_thread_id();
  return tid == static_cast<uint64_t>(::getpid()) ? "main" : "thread " + std::to_string(tid);
}

// One list of events, numbered 1.. in buffer order; parents renumbered;
// backward nodes linked to the op that recorded them.
void merge(detail::SessionResult& session, Profile::Result& result) {
  size_t total = 0;
  for (const auto& buffer : session.buffers) total += buffer->events.size();
  result.events.reserve(total);
  for (auto& buffer : session.buffers) {
    const uint64_t offset = result.events.size();
    result.thread_names[buffer->thread] = buffer->name;
    for (size_t i = 0; i < buffer->events.size(); ++i) {
      Event& e = result.events.emplace_back(std::move(buffer->events[i]));
      e.id = offset + i + 1;
      if (e.parent_id) e.parent_id += offset;
    }
  }
  std::unordered_map<int64_t, uint64_t> op_of_node;
  for (const Event& e : result.events)
    if (e.kind == EventKind::Op && e.sequence_nr >= 0) op_of_node.try_emplace(e.sequence_nr, e.id);
  for (Event& e : result.events) {
    if (e.kind != EventKind::Backward || e.sequence_nr < 0) continue;
    auto it = op_of_node.find(e.sequence_nr);
    if (it != op_of_node.end()) e.forward_id = it->second;
  }
}

}  // namespace

Profile::Profile(ProfileOptions options, bool start_now) : options_(options) {
  if (start_now) start();
}

Profile::~Profile() {
  if (!running_) return;
  try {
    if (owner_thread_ == detail::os_thread_id()) {
      stop();
      return;
    }
    // Destroyed on another thread: end the session; the starting thread's key
    // stays on, which costs it a pass through the profiler's kernel per op.
    if (options_.profile_memory) detail::stop_memory_tracking();
    detail::SessionResult session = detail::stop_session();
    detail::resolve_device_timing(session);  // gives the CUDA events back to the pool
  } catch (const std::exception& e) {
    // A destructor must not throw: only reading the CUDA times can fail here (a failed device).
    std::cerr << "ember: profiler: stopping the profile: " << e.what() << "\n";
  }
}

void Profile::start() {
  EMBER_CHECK(!running_, "profiler::Profile::start: this profile is already running");
  detail::start_device_timing();
  detail::start_session(options_, name_of_this_thread());
  result_.reset();
  running_ = true;
  owner_thread_ = detail::os_thread_id();
  LocalDispatchKeys& keys = local_dispatch_keys();
  key_was_included_ = keys.included.has(DispatchKey::Profiler);
  keys.included = keys.included.add(DispatchKey::Profiler);
  if (options_.profile_memory) detail::start_memory_tracking(detail::Clock::now());
}

void Profile::stop() {
  EMBER_CHECK(running_, "profiler::Profile::stop: the profile is not running");
  EMBER_CHECK(owner_thread_ == detail::os_thread_id(), "profiler::Profile::stop: called on thread ",
              detail::os_thread_id(), " but the profile was started on thread ", owner_thread_,
              "; stop it where it started");
  auto result = std::make_unique<Result>();
  if (options_.profile_memory) result->memory = detail::stop_memory_tracking();
  detail::SessionResult session = detail::stop_session();
  running_ = false;
  if (!key_was_included_) {
    LocalDispatchKeys& keys = local_dispatch_keys();
    keys.included = keys.included.remove(DispatchKey::Profiler);
  }
  detail::resolve_device_timing(session);
  merge(session, *result);
  result_ = std::move(result);
}

void Profile::check_stopped(const char* what) const {
  EMBER_CHECK(!running_, "profiler::Profile::", what, ": the profile is still running; call stop() first");
  EMBER_CHECK(result_ != nullptr, "profiler::Profile::", what, ": the profile was never started");
}

const std::vector<Event>& Profile::events() const {
  check_stopped("events");
  return result_->events;
}

const MemoryProfile& Profile::memory() const {
  check_stopped("memory");
  return result_->memory;
}

std::string Profile::thread_name(uint64_t thread) const {
  check_stopped("thread_name");
  auto it = result_->thread_names.find(thread);
  return it == result_->thread_names.end() ? "thread " + std::to_string(thread) : it->second;
}

}  // namespace ember::profiler
