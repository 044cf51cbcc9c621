#include "kernels/cuda/emulate/block_runner.h"

#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/cuda/emulate/device.h"
#include "kernels/cuda/emulate/fiber.h"

namespace ember::cuda::emulate {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kFiberStack = size_t{1} << 20;  // ASan's redzones make frames larger
#else
constexpr size_t kFiberStack = size_t{256} << 10;
#endif
constexpr uint64_t kPoison = ~uint64_t{0};  // what a lane reads from a lane that did not take part

enum class State { Ready, AtBlockBarrier, AtWarpBarrier, Done };

struct EmuThread {
  ThreadBuiltins builtins;
  int linear = 0;
  State state = State::Ready;
  unsigned mask = 0;            // the mask of the warp collective it waits at
  const char* waits_at = "";    // the collective's name, for deadlock reports
  Fiber* fiber = nullptr;
};

struct Block {
  const char* kernel = "";
  const std::function<void()>* body = nullptr;
  std::vector<EmuThread> threads;
  std::vector<uint64_t> lane_slots;  // 32 per warp
  std::vector<unsigned char> flags;  // one per thread, for __syncthreads_count
  std::vector<unsigned char> dynamic_shared;
  std::string fault;  // set by the first thread that failed
};

thread_local Block* t_block = nullptr;
thread_local EmuThread* t_thread = nullptr;
thread_local std::vector<std::unique_ptr<Fiber>> t_fibers;  // reused by every block this OS thread runs

std::string describe(const Block& b, const EmuThread& t) {
  std::ostringstream os;
  const ThreadBuiltins& v = t.builtins;
  os << "kernel " << b.kernel << ", block (" << v.block_idx.x << "," << v.block_idx.y << "," << v.block_idx.z
     << "), thread (" << v.thread_idx.x << "," << v.thread_idx.y << "," << v.thread_idx.z << ")";
  return os.str();
}

[[noreturn]] void fail_here(const std::string& what) { throw Fault(describe(*t_block, *t_thread) + ": " + what); }

void thread_entry(void* arg) {
  auto* t = static_cast<EmuThread*>(arg);
  try {
    (*t_block->body)();
  } catch (const std::exception& e) {
    if (t_block->fault.empty()) t_block->fault = e.what();
  } catch (...) {
    if (t_block->fault.empty()) t_block->fault = describe(*t_block, *t) + ": unknown exception";
  }
  t->state = State::Done;
}

void wait_here(State state, unsigned mask, const char* what) {
  t_thread->state = state;
  t_thread->mask = mask;
  t_thread->waits_at = what;
  t_thread->fiber->suspend();
}

int warp_of(const EmuThread& t) { return t.linear / 32; }

// Releases every barrier whose participants have all arrived; false when none could be.
bool release_barriers(Block& b) {
  const int n = static_cast<int>(b.threads.size());
  bool released = false;
  for (EmuThread& t : b.threads) {
    if (t.state != State::AtWarpBarrier) continue;
    const int base = warp_of(t) * 32;
    bool all_here = true;
    for (int lane = 0; lane < 32 && all_here; ++lane) {
      if (!((t.mask >> lane) & 1u)) continue;
      if (base + lane >= n) {
        throw Fault(describe(b, t) + ": " + t.waits_at + " names lane " + std::to_string(lane) +
                    " in its mask, which does not exist in a block of " + std::to_string(n) + " threads");
      }
      const EmuThread& other = b.threads[static_cast<size_t>(base + lane)];
      if (other.state == State::Done) {
        throw Fault(describe(b, t) + ": " + t.waits_at + " names lane " + std::to_string(lane) +
                    " in its mask, which has exited");
      }
      all_here = other.state == State::AtWarpBarrier && other.mask == t.mask;
      if (all_here && std::string_view(other.waits_at) != t.waits_at) {
        throw Fault(describe(b, t) + " waits at " + t.waits_at + " while lane " + std::to_string(lane) +
                    " of its mask waits at " + other.waits_at +
                    " (different warp collectives meeting is undefined on a GPU)");
      }
    }
    if (!all_here) continue;
    for (int lane = 0; lane < 32; ++lane)
      if ((t.mask >> lane) & 1u) b.threads[static_cast<size_t>(base + lane)].state = State::Ready;
    released = true;
  }
  int waiting = 0, done = 0;
  for (const EmuThread& t : b.threads) {
    waiting += t.state == State::AtBlockBarrier;
    done += t.state == State::Done;
  }
  if (waiting > 0 && waiting + done == n) {
    if (done > 0) {
      const EmuThread* exited = nullptr;
      for (const EmuThread& t : b.threads)
        if (t.state == State::Done) exited = exited ? exited : &t;
      throw Fault(describe(b, *exited) + ": exited while " + std::to_string(waiting) +
                  " threads of its block wait at __syncthreads (a barrier in divergent code hangs on a GPU)");
    }
    for (EmuThread& t : b.threads) t.state = State::Ready;
    released = true;
  }
  return released;
}

[[noreturn]] void report_deadlock(const Block& b) {
  std::ostringstream os;
  int at_block = 0;
  const EmuThread* at_warp = nullptr;
  for (const EmuThread& t : b.threads) {
    at_block += t.state == State::AtBlockBarrier;
    if (t.state == State::AtWarpBarrier && !at_warp) at_warp = &t;
  }
  os << "deadlock: " << at_block << " threads wait at __syncthreads";
  if (at_warp) {
    os << "; " << describe(b, *at_warp) << " waits at " << at_warp->waits_at << " with mask 0x" << std::hex
       << at_warp->mask << std::dec << ", which not every lane of the mask has reached";
  }
  throw Fault(std::string("kernel ") + b.kernel + ": " + os.str());
}

void run_block(Block& b) {
  const size_t n = b.threads.size();
  size_t done = 0;
  while (done < n) {
    for (EmuThread& t : b.threads) {
      if (t.state != State::Ready) continue;
      t_thread = &t;
      t.fiber->resume();
      t_thread = nullptr;
      if (!b.fault.empty()) throw Fault(b.fault);
      done += t.state == State::Done;
    }
    if (done < n && !release_barriers(b)) report_deadlock(b);
  }
}

}  // namespace

const ThreadBuiltins& builtins() {
  if (!t_thread) throw Fault("a CUDA built-in variable (threadIdx, blockIdx, ...) was read outside a kernel");
  return t_thread->builtins;
}

int lane_id() { return builtins(), t_thread->linear % 32; }

void sync_block() {
  builtins();
  wait_here(State::AtBlockBarrier, 0, "__syncthreads");
}

void sync_warp(unsigned mask, const char* what) {
  builtins();
  if (!((mask >> lane_id()) & 1u)) {
    std::ostringstream os;
    os << what << " with mask 0x" << std::hex << mask << " that excludes the calling lane " << std::dec << lane_id();
    fail_here(os.str());
  }
  wait_here(State::AtWarpBarrier, mask, what);
}

uint64_t exchange_lanes(unsigned mask, uint64_t bits, int src, const char* what) {
  sync_warp(mask, what);  // the previous collective's readers are done with the slots
  uint64_t* slots = &t_block->lane_slots[static_cast<size_t>(warp_of(*t_thread) * 32)];
  slots[lane_id()] = bits;
  sync_warp(mask, what);
  const bool valid = src >= 0 && src < 32 && ((mask >> src) & 1u);
  return valid ? slots[src] : kPoison;
}

unsigned ballot_lanes(unsigned mask, bool predicate, const char* what) {
  sync_warp(mask, what);
  uint64_t* slots = &t_block->lane_slots[static_cast<size_t>(warp_of(*t_thread) * 32)];
  slots[lane_id()] = predicate;
  sync_warp(mask, what);
  unsigned result = 0;
  for (int lane = 0; lane < 32; ++lane)
    if (((mask >> lane) & 1u) && slots[lane]) result |= 1u << lane;
  return result;
}

int count_block(bool predicate) {
  sync_block();
  t_block->flags[static_cast<size_t>(t_thread->linear)] = predicate;
  sync_block();
  int count = 0;
  for (unsigned char f : t_block->flags) count += f;
  return count;
}

void* dynamic_shared_memory() {
  builtins();
  return t_block->dynamic_shared.data();
}

void run_grid(const char* kernel_name, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
              const std::function<void()>& thread_body) {
  const size_t n = static_cast<size_t>(block.x) * block.y * block.z;
  while (t_fibers.size() < n) t_fibers.push_back(std::make_unique<Fiber>(kFiberStack));
  Block b;
  b.kernel = kernel_name;
  b.body = &thread_body;
  b.threads.resize(n);
  b.lane_slots.assign((n + 31) / 32 * 32, kPoison);
  b.flags.assign(n, 0);
  t_block = &b;
  struct Reset {
    ~Reset() {
      t_block = nullptr;
      t_thread = nullptr;
    }
  } reset;
  for (unsigned bz = 0; bz < grid.z; ++bz) {
    for (unsigned by = 0; by < grid.y; ++by) {
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        b.dynamic_shared.assign(dynamic_shared_bytes, 0xff);  // uninitialised memory reads as NaN
        for (size_t i = 0; i < n; ++i) {
          EmuThread& t = b.threads[i];
          t.linear = static_cast<int>(i);
          t.builtins = {{static_cast<unsigned>(i % block.x), static_cast<unsigned>(i / block.x % block.y),
                         static_cast<unsigned>(i / (static_cast<size_t>(block.x) * block.y))},
                        {bx, by, bz},
                        block,
                        grid};
          t.state = State::Ready;
          t.fiber = t_fibers[i].get();
          t.fiber->start(&thread_entry, &t);
        }
        run_block(b);
      }
    }
  }
}

}  // namespace ember::cuda::emulate
