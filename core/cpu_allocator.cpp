// The CPU caching allocator (see the note in <ember/allocator.h>).
//
// Size classes: requests up to 1 MiB round up to one of four steps per power
// of two (so at most 25% is wasted); larger ones round up to 2 MiB. Each class
// keeps a free list of blocks (and counts its blocks in use, for `ember
// inspect memory`); a freed block goes back to its list unless the cache
// already holds more than the cache limit (1 GiB by default, or
// EMBER_CPU_CACHE_LIMIT_MB), in which case it is returned to the system.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>  // std::lock_guard
#include <new>
#include <thread>
#include <vector>

#include "core/allocation_observer.h"
#include "core/cpu_allocator.h"
#include "ember/allocator.h"
#include "ember/error.h"

namespace ember {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kLargeThreshold = size_t{1} << 20;
constexpr size_t kHugePage = size_t{2} << 20;

size_t round_size(size_t n) {
  if (n <= 64) return 64;
  if (n > kLargeThreshold) return (n + kHugePage - 1) / kHugePage * kHugePage;
  // Four steps per power of two: 2^k, 1.25*2^k, 1.5*2^k, 1.75*2^k.
  const int top = 63 - __builtin_clzll(n - 1);
  // Steps of at least the alignment: aligned_alloc needs a multiple of it.
  const size_t step = std::max(size_t{1} << (top - 2), kAlignment);
  return (n + step - 1) / step * step;
}

// The allocator's lock. It is held for a few dozen instructions (a free-list
// push or pop and the statistics), so a thread that finds it taken spins,
// yielding its core after a while, instead of sleeping; untaken it costs one
// atomic exchange. std::mutex's lock and unlock took ~12% of a 1-element
// `a + b` (one allocation and one free).
class SpinLock {
 public:
  void lock() {
    for (int tries = 0; flag_.exchange(true, std::memory_order_acquire); ++tries) {
      while (flag_.load(std::memory_order_relaxed)) {
        if (tries >= 64) std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        ++tries;
      }
    }
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

class CPUCachingAllocator final : public Allocator {
 public:
  CPUCachingAllocator() {
    if (const char* env = std::getenv("EMBER_CPU_CACHE_LIMIT_MB")) {
      cache_limit_ = static_cast<int64_t>(std::strtoll(env, nullptr, 10)) << 20;
    }
  }

  DataPtr allocate(size_t nbytes) override {
    const size_t size = round_size(nbytes);
    const detail::AllocationObserver observer = detail::allocation_observer();
    detail::AllocationEvent event;
    void* p = nullptr;
    {
      std::lock_guard<SpinLock> lock(lock_);
      SizeClass& cls = classes_[size];
      ++cls.in_use;
      if (!cls.free.empty()) {
        p = cls.free.back();
        cls.free.pop_back();
        cached_bytes_ -= static_cast<int64_t>(size);
        ++stats_.cache_hits;
      } else {
        ++stats_.cache_misses;
      }
      ++stats_.num_allocations;
      stats_.allocated_bytes += static_cast<int64_t>(size);
      if (stats_.allocated_bytes > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = stats_.allocated_bytes;
      if (observer) event = totals(static_cast<int64_t>(size));
    }
    if (!p) p = system_alloc(size);
    if (observer) {
      event.ptr = p;
      observer(event);
    }
    return DataPtr(p, reinterpret_cast<void*>(size), &CPUCachingAllocator::free_block, Device::cpu());
  }

  MemoryStats stats() {
    std::lock_guard<SpinLock> lock(lock_);
    MemoryStats s = stats_;
    s.reserved_bytes = s.allocated_bytes + cached_bytes_;
    return s;
  }

  void reset_peak() {
    std::lock_guard<SpinLock> lock(lock_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
  }

  void empty() {
    std::vector<void*> blocks;
    {
      std::lock_guard<SpinLock> lock(lock_);
      for (auto& [size, cls] : classes_) {
        blocks.insert(blocks.end(), cls.free.begin(), cls.free.end());
        cls.free = std::vector<void*>();
      }
      cached_bytes_ = 0;
    }
    for (void* p : blocks) std::free(p);
  }

  std::vector<MemoryBlockClass> size_classes() {
    std::vector<MemoryBlockClass> out;
    std::lock_guard<SpinLock> lock(lock_);
    for (const auto& [size, cls] : classes_) {
      if (cls.in_use == 0 && cls.free.empty()) continue;
      out.push_back({static_cast<int64_t>(size), cls.in_use, static_cast<int64_t>(cls.free.size())});
    }
    return out;
  }

  static CPUCachingAllocator& instance() {
    static auto* a = new CPUCachingAllocator();  // leaked: tensors may die after static destructors
    return *a;
  }

 private:
  static void* system_alloc(size_t size) {
    const size_t align = size >= kHugePage ? kHugePage : kAlignment;
    void* p = std::aligned_alloc(align, size);
    if (!p) {
      instance().empty();  // give the cache back and try once more
      p = std::aligned_alloc(align, size);
    }
    EMBER_CHECK(p != nullptr, "CPU allocator: out of memory allocating ", size, " bytes");
    if (size >= kHugePage) madvise(p, size, MADV_HUGEPAGE);
    return p;
  }

  static void free_block(void* ctx, void* p) {
    auto& self = instance();
    const size_t size = reinterpret_cast<size_t>(ctx);
    const detail::AllocationObserver observer = detail::allocation_observer();
    {
      std::lock_guard<SpinLock> lock(self.lock_);
      SizeClass& cls = self.classes_[size];
      --cls.in_use;
      self.stats_.allocated_bytes -= static_cast<int64_t>(size);
      const bool cache = self.cached_bytes_ + static_cast<int64_t>(size) <= self.cache_limit_;
      if (cache) self.cached_bytes_ += static_cast<int64_t>(size);
      // Told under the lock, before the block can be handed out again, so an
      // observer sees a block's free before its next allocation.
      if (observer) {
        detail::AllocationEvent event = self.totals(-static_cast<int64_t>(size));
        event.ptr = p;
        observer(event);
      }
      if (cache) {
        cls.free.push_back(p);
        return;
      }
    }
    std::free(p);
  }

  // The observer's view of an event of `bytes` (the lock is held).
  detail::AllocationEvent totals(int64_t bytes) const {
    detail::AllocationEvent e;
    e.bytes = bytes;
    e.allocated_bytes = stats_.allocated_bytes;
    e.reserved_bytes = stats_.allocated_bytes + cached_bytes_;
    e.device = Device::cpu();
    return e;
  }

  // A size class: its cached free blocks, and how many of its blocks tensors hold.
  struct SizeClass {
    std::vector<void*> free;
    int64_t in_use = 0;
  };

  SpinLock lock_;
  std::map<size_t, SizeClass> classes_;
  MemoryStats stats_;
  int64_t cached_bytes_ = 0;
  int64_t cache_limit_ = int64_t{1} << 30;
};

// The allocator of a non-CPU device type, registered by its backend. The CPU
// allocator is not in a slot: get_allocator's CPU path is a direct call.
struct AllocatorSlot {
  Allocator* (*allocator)(int index) = nullptr;
  MemoryStats (*stats)(int index) = nullptr;
  void (*reset_peak)(int index) = nullptr;
  void (*empty)(int index) = nullptr;
};

AllocatorSlot& backend_slot(DeviceType type) {
  static AllocatorSlot cuda;
  EMBER_CHECK(type == DeviceType::CUDA, "allocator: unknown device type ", static_cast<int>(type));
  return cuda;
}

const AllocatorSlot& checked_slot(Device device) {
  const AllocatorSlot& s = backend_slot(device.type);
  EMBER_CHECK(s.allocator != nullptr, "no allocator for device ", device,
              ": ember was built without CUDA support or no CUDA device is present");
  return s;
}

}  // namespace

Allocator* get_allocator(Device device) {
  if (device.is_cpu()) [[likely]] return &CPUCachingAllocator::instance();
  return checked_slot(device).allocator(device.index);
}

MemoryStats memory_stats(Device device) {
  if (device.is_cpu()) return CPUCachingAllocator::instance().stats();
  return checked_slot(device).stats(device.index);
}

void reset_peak_memory_stats(Device device) {
  if (device.is_cpu()) return CPUCachingAllocator::instance().reset_peak();
  checked_slot(device).reset_peak(device.index);
}

void empty_cache(Device device) {
  if (device.is_cpu()) return CPUCachingAllocator::instance().empty();
  checked_slot(device).empty(device.index);
}

std::vector<MemoryBlockClass> cpu_memory_size_classes() { return CPUCachingAllocator::instance().size_classes(); }

namespace detail {
void set_allocator(DeviceType type, Allocator* (*allocator)(int index), MemoryStats (*stats)(int index),
                   void (*reset_peak)(int index), void (*empty)(int index)) {
  EMBER_CHECK(type != DeviceType::CPU, "set_allocator: the CPU allocator is built in and cannot be replaced");
  backend_slot(type) = AllocatorSlot{allocator, stats, reset_peak, empty};
}
}  // namespace detail

}  // namespace ember
