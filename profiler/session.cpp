// The running session, each thread's buffer, ranges and ThreadGuard
// (profiler/recorder.h).
#include <sys/syscall.h>
#include <unistd.h>

#include "core/dispatcher.h"
#include "profiler/recorder.h"

namespace ember::profiler {

namespace detail {

std::atomic<bool> g_profiling{false};

namespace {

struct Session {
  std::mutex mutex;
  bool running = false;
  uint64_t generation = 0;  // of the running session, or of the last one
  ProfileOptions options;
  Clock::time_point origin;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};

Session& session() {
  static auto* s = new Session();  // leaked: worker threads may outlive static destructors
  return *s;
}

// The running session's generation; 0 when none runs.
std::atomic<uint64_t> g_generation{0};

struct ThreadSlot {
  uint64_t generation = 0;
  std::shared_ptr<ThreadBuffer> buffer;
};
thread_local ThreadSlot tls_slot;

// Room for this many events per thread from the start, so that a few training
// steps record without the buffer growing (each growth moves every event).
constexpr size_t kInitialEvents = 4096;

// Token of an open range: the session's generation and the event's index + 1.
uint64_t make_token(uint64_t generation, size_t index) { return generation << 32 | (index + 1); }

// Registers the calling thread (the session's lock is held).
ThreadBuffer* register_locked(Session& s, std::string_view name) {
  auto buffer = std::make_shared<ThreadBuffer>();
  buffer->thread = os_thread_id();
  buffer->name = std::string(name);
  buffer->origin = s.origin;
  buffer->options = s.options;
  buffer->events.reserve(kInitialEvents);
  s.buffers.push_back(buffer);
  tls_slot = {s.generation, std::move(buffer)};
  return tls_slot.buffer.get();
}

}  // namespace

uint64_t os_thread_id() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

size_t ThreadBuffer::begin_locked(std::string_view event_name, EventKind kind, int64_t start_ns) {
  const size_t index = events.size();
  Event& e = events.emplace_back();
  e.name = std::string(event_name);
  e.kind = kind;
  e.thread = thread;
  e.start_ns = start_ns;
  e.end_ns = -1;  // open
  e.parent_id = open.empty() ? 0 : open.back() + 1;
  if (options.with_stack) {
    for (size_t i : open) e.stack += events[i].name + " > ";
    e.stack += e.name;
  }
  open.push_back(index);
  return index;
}

void ThreadBuffer::end_locked(size_t index, int64_t end_ns) {
  if (index >= events.size() || events[index].end_ns >= 0) return;  // ended already (by stop)
  while (!open.empty()) {
    const size_t i = open.back();
    open.pop_back();
    Event& e = events[i];
    // While open, self_ns, allocated_bytes and freed_bytes hold the children's totals.
    e.end_ns = end_ns;
    const int64_t duration = e.end_ns - e.start_ns;
    e.self_ns = duration - e.self_ns;
    e.allocated_bytes += e.self_allocated_bytes;
    e.freed_bytes += e.self_freed_bytes;
    if (!open.empty()) {
      Event& parent = events[open.back()];
      parent.self_ns += duration;
      parent.allocated_bytes += e.allocated_bytes;
      parent.freed_bytes += e.freed_bytes;
    }
    if (i == index) return;
  }
}

ThreadBuffer* current_buffer_any() {
  const uint64_t generation = g_generation.load(std::memory_order_acquire);
  if (generation == 0 || tls_slot.generation != generation) return nullptr;
  return tls_slot.buffer.get();
}

ThreadBuffer* current_buffer() {
  if (!is_profiling() || !local_dispatch_keys().included.has(DispatchKey::Profiler)) return nullptr;
  return current_buffer_any();
}

void start_session(const ProfileOptions& options, std::string_view thread_name) {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  EMBER_CHECK(!s.running, "profiler::Profile: a profile is already running in this process; stop it first");
  s.running = true;
  ++s.generation;
  s.options = options;
  s.origin = Clock::now();
  s.buffers.clear();
  register_locked(s, thread_name);
  g_generation.store(s.generation, std::memory_order_release);
  g_profiling.store(true, std::memory_order_release);
}

SessionResult stop_session() {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  g_profiling.store(false, std::memory_order_release);
  g_generation.store(0, std::memory_order_release);
  s.running = false;
  SessionResult result;
  result.buffers = std::move(s.buffers);
  s.buffers.clear();
  for (auto& buffer : result.buffers) {
    std::lock_guard<std::mutex> buffer_lock(buffer->mutex);
    if (!buffer->open.empty()) buffer->end_locked(buffer->open.front(), buffer->now_ns());
    buffer->closed = true;
  }
  return result;
}

bool join_session(std::string_view name) {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.running) return false;
  if (tls_slot.generation != s.generation) register_locked(s, name);
  return true;
}

uint64_t begin_range(std::string_view name, EventKind kind, int64_t sequence_nr) {
  ThreadBuffer* buffer = current_buffer();
  if (!buffer) return 0;
  const int64_t start = buffer->now_ns();
  std::lock_guard<std::mutex> lock(buffer->mutex);
  if (buffer->closed) return 0;
  const size_t index = buffer->begin_locked(name, kind, start);
  buffer->events[index].sequence_nr = sequence_nr;
  return make_token(tls_slot.generation, index);
}

void end_range(uint64_t token) {
  ThreadBuffer* buffer = current_buffer_any();
  if (!buffer || tls_slot.generation != token >> 32) return;  // its session has stopped
  const int64_t end = buffer->now_ns();
  std::lock_guard<std::mutex> lock(buffer->mutex);
  if (!buffer->closed) buffer->end_locked((token & 0xffffffffu) - 1, end);
}

}  // namespace detail

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Op: return "cpu_op";
    case EventKind::Backward: return "autograd";
    case EventKind::UserRange: return "user_annotation";
    case EventKind::DataLoader: return "dataloader";
    case EventKind::Optimizer: return "optimizer";
  }
  return "unknown";
}

ThreadGuard::ThreadGuard(std::string_view name) {
  if (!is_profiling() || !detail::join_session(name)) return;
  LocalDispatchKeys& keys = local_dispatch_keys();
  key_was_included_ = keys.included.has(DispatchKey::Profiler);
  keys.included = keys.included.add(DispatchKey::Profiler);
  joined_ = true;
}

ThreadGuard::~ThreadGuard() {
  if (joined_ && !key_was_included_) {
    LocalDispatchKeys& keys = local_dispatch_keys();
    keys.included = keys.included.remove(DispatchKey::Profiler);
  }
}

}  // namespace ember::profiler
