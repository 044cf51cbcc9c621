// The CUDA caching allocators: device memory and pinned host memory
// (Notes [CUDA caching allocator] and [Pinned staging] in cuda_allocator.h).
#include "kernels/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/cuda.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

constexpr size_t kMinBlock = 512;
constexpr size_t kSmallLimit = size_t{1} << 20;
constexpr size_t kLargeStep = size_t{2} << 20;
// A block's deleter context packs the device into the low bits of its size (a multiple of 512).
constexpr int kMaxDevices = 64;

std::string format_bytes(int64_t n) {
  constexpr double kMiB = 1 << 20, kGiB = 1 << 30;
  std::ostringstream os;
  os.precision(2);
  if (n >= (int64_t{1} << 30)) os << std::fixed << static_cast<double>(n) / kGiB << " GiB";
  else if (n >= (int64_t{1} << 20)) os << std::fixed << static_cast<double>(n) / kMiB << " MiB";
  else os << n << " bytes";
  return os.str();
}

// ---- device memory ----

struct DeviceCache {
  std::map<size_t, std::vector<void*>> free;  // size class -> cached blocks
  MemoryStats stats;
  int64_t cached_bytes = 0;
  bool used = false;
};

class DeviceCachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    int device = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&device), "CUDA allocator");
    return allocate_on(nbytes, device);
  }

  DataPtr allocate_on(size_t nbytes, int device) {
    const int count = cuda_device_count();
    EMBER_CHECK(device >= 0 && device < count && device < kMaxDevices, "CUDA allocator: device cuda:", device,
                " does not exist (", count, " CUDA device", count == 1 ? "" : "s", " present)");
    if (nbytes == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      devices_[device].used = true;
      return DataPtr(nullptr, nullptr, nullptr, Device::cuda(device));
    }
    const size_t size = device_block_size(nbytes);
    void* p = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      DeviceCache& d = devices_[device];
      d.used = true;
      auto it = d.free.find(size);
      if (it != d.free.end() && !it->second.empty()) {
        p = it->second.back();
        it->second.pop_back();
        d.cached_bytes -= static_cast<int64_t>(size);
        ++d.stats.cache_hits;
        count_allocation(d, size);
      }
    }
    if (!p) {
      p = cuda_malloc(size, device);
      std::lock_guard<std::mutex> lock(mutex_);
      ++devices_[device].stats.cache_misses;
      count_allocation(devices_[device], size);
    }
    return DataPtr(p, reinterpret_cast<void*>(size | static_cast<size_t>(device)), &DeviceCachingAllocator::free_block,
                   Device::cuda(device));
  }

  MemoryStats stats(int device) {
    check_index(device);
    std::lock_guard<std::mutex> lock(mutex_);
    MemoryStats s = devices_[device].stats;
    s.reserved_bytes = s.allocated_bytes + devices_[device].cached_bytes;
    return s;
  }

  void reset_peak(int device) {
    check_index(device);
    std::lock_guard<std::mutex> lock(mutex_);
    devices_[device].stats.peak_allocated_bytes = devices_[device].stats.allocated_bytes;
  }

  void empty(int device) {
    check_index(device);
    std::map<size_t, std::vector<void*>> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks.swap(devices_[device].free);
      devices_[device].cached_bytes = 0;
    }
    if (blocks.empty()) return;
    DeviceGuard guard(device);
    // Kernels queued before the blocks were freed may still use them.
    EMBER_CUDA_CHECK(cudaDeviceSynchronize(), "empty_cache");
    for (auto& [size, list] : blocks)
      for (void* p : list) EMBER_CUDA_CHECK(cudaFree(p), "empty_cache");
  }

  bool used(int device) {
    if (device < 0 || device >= kMaxDevices) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    return devices_[device].used;
  }

  static DeviceCachingAllocator& instance() {
    static auto* a = new DeviceCachingAllocator();  // leaked: tensors may die after static destructors
    return *a;
  }

 private:
  static void check_index(int device) {
    EMBER_CHECK(device >= 0 && device < kMaxDevices, "CUDA allocator: invalid device index ", device);
  }

  static void count_allocation(DeviceCache& d, size_t size) {
    ++d.stats.num_allocations;
    d.stats.allocated_bytes += static_cast<int64_t>(size);
    if (d.stats.allocated_bytes > d.stats.peak_allocated_bytes) d.stats.peak_allocated_bytes = d.stats.allocated_bytes;
  }

  void* cuda_malloc(size_t size, int device) {
    DeviceGuard guard(device);
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      empty(device);  // give the cached blocks back and try once more
      err = cudaMalloc(&p, size);
    }
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      size_t free_bytes = 0, total_bytes = 0;
      cudaMemGetInfo(&free_bytes, &total_bytes);
      cudaGetLastError();
      const MemoryStats s = stats(device);
      EMBER_FAIL("CUDA out of memory: tried to allocate ", format_bytes(static_cast<int64_t>(size)), " on cuda:", device,
                 " (", format_bytes(static_cast<int64_t>(free_bytes)), " free of ",
                 format_bytes(static_cast<int64_t>(total_bytes)), "; ember tensors hold ",
                 format_bytes(s.allocated_bytes), ")");
    }
    if (err != cudaSuccess) throw_cuda_error(err, "cudaMalloc", "CUDA allocator", __FILE__, __LINE__);
    return p;
  }

  static void free_block(void* ctx, void* p) {
    const size_t packed = reinterpret_cast<size_t>(ctx);
    const size_t size = packed & ~(kMinBlock - 1);
    const int device = static_cast<int>(packed & (kMinBlock - 1));
    auto& self = instance();
    std::lock_guard<std::mutex> lock(self.mutex_);
    DeviceCache& d = self.devices_[device];
    d.stats.allocated_bytes -= static_cast<int64_t>(size);
    d.free[size].push_back(p);
    d.cached_bytes += static_cast<int64_t>(size);
  }

  std::mutex mutex_;
  std::array<DeviceCache, kMaxDevices> devices_;
};

// ---- pinned host memory ----

struct PinnedBlock {
  void* ptr = nullptr;
  size_t size = 0;
  cudaEvent_t event = nullptr;  // recorded after the last transfer using the block
  bool pending = false;         // an event was recorded and has not been seen complete
};

size_t pinned_block_size(size_t n) {
  size_t size = 4096;
  while (size < n) size <<= 1;
  return size;
}

class PinnedPool {
 public:
  DataPtr allocate(size_t nbytes) {
    const size_t size = pinned_block_size(nbytes);
    PinnedBlock* block = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = free_.find(size);
      if (it != free_.end()) {
        std::vector<PinnedBlock*>& list = it->second;
        for (size_t i = list.size(); i-- > 0;) {
          if (!transfer_done(list[i])) continue;
          block = list[i];
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          cached_bytes_ -= static_cast<int64_t>(size);
          ++stats_.cache_hits;
          break;
        }
      }
    }
    if (!block) {
      block = new PinnedBlock();
      block->size = size;
      cudaError_t err = cudaHostAlloc(&block->ptr, size, cudaHostAllocPortable);
      if (err == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        empty();
        err = cudaHostAlloc(&block->ptr, size, cudaHostAllocPortable);
      }
      if (err != cudaSuccess) {
        delete block;
        throw_cuda_error(err, "cudaHostAlloc", "pinned host allocator", __FILE__, __LINE__);
      }
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.cache_misses;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    live_[block->ptr] = block;
    ++stats_.num_allocations;
    stats_.allocated_bytes += static_cast<int64_t>(size);
    if (stats_.allocated_bytes > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = stats_.allocated_bytes;
    return DataPtr(block->ptr, block, &PinnedPool::free_block, Device::cpu());
  }

  void record(void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(ptr);
    EMBER_CHECK(it != live_.end(), "pinned host allocator: ", ptr, " is not a live pinned buffer");
    PinnedBlock* b = it->second;
    if (!b->event) EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&b->event, cudaEventDisableTiming), "pinned host allocator");
    EMBER_CUDA_CHECK(cudaEventRecord(b->event, stream), "pinned host allocator");
    b->pending = true;
  }

  void wait(void* ptr) {
    cudaEvent_t event = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(ptr);
      EMBER_CHECK(it != live_.end(), "pinned host allocator: ", ptr, " is not a live pinned buffer");
      if (!it->second->pending) return;
      event = it->second->event;
    }
    EMBER_CUDA_CHECK(cudaEventSynchronize(event), "pinned host allocator");
  }

  MemoryStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    MemoryStats s = stats_;
    s.reserved_bytes = s.allocated_bytes + cached_bytes_;
    return s;
  }

  void empty() {
    std::vector<PinnedBlock*> done;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto& [size, list] : free_) {
        for (size_t i = list.size(); i-- > 0;) {
          if (!transfer_done(list[i])) continue;
          done.push_back(list[i]);
          cached_bytes_ -= static_cast<int64_t>(size);
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        }
      }
    }
    for (PinnedBlock* b : done) {
      if (b->event) EMBER_CUDA_CHECK(cudaEventDestroy(b->event), "empty_pinned_cache");
      EMBER_CUDA_CHECK(cudaFreeHost(b->ptr), "empty_pinned_cache");
      delete b;
    }
  }

  static PinnedPool& instance() {
    static auto* p = new PinnedPool();  // leaked, like the device allocator
    return *p;
  }

 private:
  // Called with the mutex held.
  static bool transfer_done(PinnedBlock* b) {
    if (!b->pending) return true;
    const cudaError_t err = cudaEventQuery(b->event);
    if (err == cudaErrorNotReady) return false;
    if (err != cudaSuccess) throw_cuda_error(err, "cudaEventQuery", "pinned host allocator", __FILE__, __LINE__);
    b->pending = false;
    return true;
  }

  static void free_block(void* ctx, void* p) {
    auto* block = static_cast<PinnedBlock*>(ctx);
    auto& self = instance();
    std::lock_guard<std::mutex> lock(self.mutex_);
    self.live_.erase(p);
    self.free_[block->size].push_back(block);
    self.cached_bytes_ += static_cast<int64_t>(block->size);
    self.stats_.allocated_bytes -= static_cast<int64_t>(block->size);
  }

  std::mutex mutex_;
  std::unordered_map<void*, PinnedBlock*> live_;
  std::map<size_t, std::vector<PinnedBlock*>> free_;
  MemoryStats stats_;
  int64_t cached_bytes_ = 0;
};

}  // namespace

size_t device_block_size(size_t n) {
  if (n <= kMinBlock) return kMinBlock;
  if (n > kSmallLimit) return (n + kLargeStep - 1) / kLargeStep * kLargeStep;
  // Four steps per power of two: 2^k, 1.25*2^k, 1.5*2^k, 1.75*2^k (2^k >= 2048 here, so steps are multiples of 512).
  const int top = 63 - __builtin_clzll(n - 1);
  const size_t step = size_t{1} << (top - 2);
  return (n + step - 1) / step * step;
}

Allocator* device_allocator() { return &DeviceCachingAllocator::instance(); }
DataPtr allocate_on_device(size_t nbytes, int device) {
  return DeviceCachingAllocator::instance().allocate_on(nbytes, device);
}
MemoryStats device_memory_stats(int device) { return DeviceCachingAllocator::instance().stats(device); }
void reset_device_peak_memory(int device) { DeviceCachingAllocator::instance().reset_peak(device); }
void empty_device_cache(int device) { DeviceCachingAllocator::instance().empty(device); }
bool device_was_used(int device) { return DeviceCachingAllocator::instance().used(device); }

DataPtr allocate_pinned(size_t nbytes) { return PinnedPool::instance().allocate(nbytes); }
void record_pinned_use(void* ptr, void* stream) {
  PinnedPool::instance().record(ptr, static_cast<cudaStream_t>(stream));
}
void wait_pinned_use(void* ptr) { PinnedPool::instance().wait(ptr); }
MemoryStats pinned_memory_stats() { return PinnedPool::instance().stats(); }
void empty_pinned_cache() { PinnedPool::instance().empty(); }

bool is_pinned(const void* ptr) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace ember::cuda
