// The CUDA caching allocators: device memory and pinned host memory
// (Notes [CUDA caching allocator] and [Pinned staging] in cuda_allocator.h).
// The device pools' logic is in block_pool.cpp; this file binds it to
// cudaMalloc, cudaFree and CUDA events.
#include "kernels/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/cuda.h"
#include "kernels/cuda/block_pool.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

// ---- device memory ----

// A BlockPool's view of one device. The pool calls it with its lock held.
class CudaBackend final : public BlockPoolBackend {
 public:
  explicit CudaBackend(int device) : device_(device) {}

  void* allocate_segment(size_t size) override {
    DeviceGuard guard(device_);
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, size);
    if (err == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return nullptr;
    }
    if (err != cudaSuccess) throw_cuda_error(err, "cudaMalloc(&p, size)", "CUDA allocator", __FILE__, __LINE__);
    return p;
  }
  void free_segment(void* ptr, size_t /*size*/) override {
    DeviceGuard guard(device_);
    EMBER_CUDA_CHECK(cudaFree(ptr), "empty_cache");
  }
  void synchronize() override {
    DeviceGuard guard(device_);
    EMBER_CUDA_CHECK(cudaDeviceSynchronize(), "empty_cache");
  }
  EventHandle create_event() override {
    DeviceGuard guard(device_);
    cudaEvent_t event = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "CUDA allocator");
    return event;
  }
  void destroy_event(EventHandle event) override {
    EMBER_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "CUDA allocator");
  }
  void record_event(EventHandle event, StreamHandle stream) override {
    DeviceGuard guard(device_);
    EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
                     "CUDA allocator");
  }
  bool event_done(EventHandle event) override {
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (err == cudaErrorNotReady) return false;
    if (err != cudaSuccess) throw_cuda_error(err, "cudaEventQuery(event)", "CUDA allocator", __FILE__, __LINE__);
    return true;
  }
  std::string describe_memory() override {
    DeviceGuard guard(device_);
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      cudaGetLastError();
      return "free memory unknown";
    }
    constexpr double kGiB = 1 << 30;
    std::ostringstream os;
    os.precision(2);
    os << std::fixed << static_cast<double>(free_bytes) / kGiB << " GiB free of "
       << static_cast<double>(total_bytes) / kGiB << " GiB";
    return os.str();
  }

 private:
  int device_;
};

DevicePools& pools() {
  // Leaked: tensors may die after static destructors.
  static auto* p = new DevicePools(cuda_device_count(), [](int d) { return std::make_unique<CudaBackend>(d); });
  return *p;
}

int resolve(int device) {
  if (device >= 0) return device;
  EMBER_CUDA_CHECK(cudaGetDevice(&device), "CUDA allocator");
  return device;
}

// The Allocator of one device.
class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(int device) : device_(device) {}
  DataPtr allocate(size_t nbytes) override { return allocate_on_device(nbytes, device_); }

 private:
  int device_;
};

// ---- pinned host memory ----

// A transfer that uses a pinned block: an event recorded on its stream after it.
struct PinnedUse {
  cudaStream_t stream;
  int device;  // the stream's (an event can be recorded only on its own device's streams)
  cudaEvent_t event;
};

struct PinnedBlock {
  void* ptr = nullptr;
  size_t size = 0;
  // One event per stream that used the block and has not been seen done; the
  // block is free for reuse when all have completed.
  std::vector<PinnedUse> uses;
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

  // False when `ptr` is not the start of a live block (the caller then synchronises instead).
  bool record(void* ptr, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return false;
    PinnedBlock* b = it->second;
    int device = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&device), "pinned host allocator");
    auto use = std::find_if(b->uses.begin(), b->uses.end(),
                            [&](const PinnedUse& u) { return u.stream == stream && u.device == device; });
    if (use == b->uses.end()) {  // later work on a stream supersedes its earlier work: one event per stream
      cudaEvent_t event = nullptr;
      EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "pinned host allocator");
      use = b->uses.insert(b->uses.end(), PinnedUse{stream, device, event});
    }
    EMBER_CUDA_CHECK(cudaEventRecord(use->event, stream), "pinned host allocator");
    return true;
  }

  void wait(void* ptr) {
    std::vector<cudaEvent_t> events;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = live_.find(ptr);
      EMBER_CHECK(it != live_.end(), "pinned host allocator: ", ptr, " is not a live pinned buffer");
      for (const PinnedUse& u : it->second->uses) events.push_back(u.event);
    }
    for (cudaEvent_t e : events) EMBER_CUDA_CHECK(cudaEventSynchronize(e), "pinned host allocator");
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
      EMBER_CUDA_CHECK(cudaFreeHost(b->ptr), "empty_pinned_cache");
      delete b;
    }
  }

  static PinnedPool& instance() {
    static auto* p = new PinnedPool();  // leaked, like the device allocator
    return *p;
  }

 private:
  // Called with the mutex held. Forgets (and destroys) the events seen complete.
  static bool transfer_done(PinnedBlock* b) {
    for (size_t i = b->uses.size(); i-- > 0;) {
      const cudaError_t err = cudaEventQuery(b->uses[i].event);
      if (err == cudaErrorNotReady) continue;
      if (err != cudaSuccess) throw_cuda_error(err, "cudaEventQuery", "pinned host allocator", __FILE__, __LINE__);
      cudaEventDestroy(b->uses[i].event);
      b->uses.erase(b->uses.begin() + static_cast<std::ptrdiff_t>(i));
    }
    return b->uses.empty();
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

Allocator* device_allocator(int device) {
  static auto* allocators = [] {
    auto* v = new std::vector<std::unique_ptr<DeviceAllocator>>();  // leaked, like the pools
    for (int d = 0; d < pools().device_count(); ++d) v->push_back(std::make_unique<DeviceAllocator>(d));
    return v;
  }();
  device = resolve(device);
  pools().at(device, "CUDA allocator");  // checks the index
  return (*allocators)[static_cast<size_t>(device)].get();
}

DataPtr allocate_on_device(size_t nbytes, int device) {
  device = resolve(device);
  BlockPool& pool = pools().at(device, "CUDA allocator");
  DeviceGuard guard(device);  // the stream is the device's
  return pool.allocate(nbytes, current_cuda_stream());
}

MemoryStats device_memory_stats(int device) { return pools().at(resolve(device), "memory_stats").stats(); }
void reset_device_peak_memory(int device) { pools().at(resolve(device), "reset_peak_memory_stats").reset_peak(); }
void empty_device_cache(int device) { pools().at(resolve(device), "empty_cache").empty_cache(); }

bool device_was_used(int device) {
  BlockPool* pool = pools().find(device);
  return pool != nullptr && pool->used();
}

void record_stream_use(const void* data, int device, void* stream) {
  if (data == nullptr) return;  // an empty tensor's storage
  pools().at(resolve(device), "record_stream").record_stream(data, stream);
}

DataPtr allocate_pinned(size_t nbytes) { return PinnedPool::instance().allocate(nbytes); }
bool record_pinned_use(void* ptr, void* stream) {
  return PinnedPool::instance().record(ptr, static_cast<cudaStream_t>(stream));
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
