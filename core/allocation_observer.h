// A hook the allocators call on every allocation and free, for the memory
// profiler (profiler/memory_tracker.cpp). core/ knows nothing above it: the
// profiler installs a plain function here while it records memory. Without
// one, an allocator pays one relaxed atomic load per call.
#pragma once

#include <atomic>
#include <cstdint>

#include "ember/device.h"

namespace ember::detail {

struct AllocationEvent {
  const void* ptr = nullptr;
  int64_t bytes = 0;            // the block's size: > 0 allocated, < 0 freed
  int64_t allocated_bytes = 0;  // the allocator's totals after the event
  int64_t reserved_bytes = 0;
  Device device;
};

using AllocationObserver = void (*)(const AllocationEvent& event);

inline std::atomic<AllocationObserver> g_allocation_observer{nullptr};

inline AllocationObserver allocation_observer() { return g_allocation_observer.load(std::memory_order_relaxed); }
inline void set_allocation_observer(AllocationObserver observer) {
  g_allocation_observer.store(observer, std::memory_order_release);
}

}  // namespace ember::detail
