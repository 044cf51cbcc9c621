// Memory for tensors: per-device allocators and their statistics.
//
// The CPU allocator caches freed blocks by size class and hands them out
// again, because touching fresh pages costs ~2 µs per 4 KiB on the machines
// ember is tuned for: an eager `a + b` on 64 MB would otherwise spend most of
// its time in page faults. Large blocks are 2 MiB aligned and advised to use
// transparent huge pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "ember/device.h"

namespace ember {

// An owned allocation: pointer plus the function that frees it.
class DataPtr {
 public:
  using Deleter = void (*)(void* ctx, void* data);
  DataPtr() = default;
  DataPtr(void* data, void* ctx, Deleter deleter, Device device)
      : data_(data), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      ctx_ = std::exchange(o.ctx_, nullptr);
      deleter_ = std::exchange(o.deleter_, nullptr);
      device_ = o.device_;
    }
    return *this;
  }
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  ~DataPtr() { reset(); }

  void* get() const { return data_; }
  Device device() const { return device_; }
  void reset() {
    if (deleter_) deleter_(ctx_, data_);
    data_ = ctx_ = nullptr;
    deleter_ = nullptr;
  }

 private:
  void* data_ = nullptr;
  void* ctx_ = nullptr;
  Deleter deleter_ = nullptr;
  Device device_;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
};

struct MemoryStats {
  int64_t allocated_bytes = 0;       // in use by tensors (rounded to the block size)
  int64_t reserved_bytes = 0;        // in use + held in the cache
  int64_t peak_allocated_bytes = 0;  // max of allocated_bytes since the last reset
  int64_t num_allocations = 0;
  int64_t cache_hits = 0;            // allocations served from the cache
  int64_t cache_misses = 0;          // allocations that went to the system
};

// The allocator for `device`: for CUDA, it allocates on device.index
// (cuda:1's memory for Device::cuda(1)). An index that does not exist throws.
Allocator* get_allocator(Device device);
// Statistics, peak reset and cache release of one device (its index counts).
MemoryStats memory_stats(Device device = Device::cpu());
void reset_peak_memory_stats(Device device = Device::cpu());
// Returns all cached (unused) blocks of `device` to the system.
void empty_cache(Device device = Device::cpu());

namespace detail {
// Backends register their allocator here (the CUDA one does at start-up).
// Each function gets the Device's index (a negative index means the backend's
// current device) and checks it. The CPU allocator is built in, not registered.
void set_allocator(DeviceType type, Allocator* (*allocator)(int index), MemoryStats (*stats)(int index),
                   void (*reset_peak)(int index), void (*empty)(int index));
// The CUDA backend registers its page-locked host memory here (Tensor::pin_memory).
void set_pinned_allocator(Allocator* allocator, bool (*is_pinned)(const void* ptr));
}  // namespace detail

}  // namespace ember
