// The pool logic of the CUDA device caching allocator, free of CUDA:
// segments, blocks, splitting, coalescing, best-fit lookup, stream tags,
// pending-event bookkeeping and statistics (Note [CUDA caching allocator] in
// kernels/cuda/cuda_allocator.h). It reaches the device only through a
// BlockPoolBackend, so the unit tests run it on a fake backend on any machine;
// cuda_allocator.cpp binds it to cudaMalloc, cudaFree and cudaEvent*.
// This file is compiled in every build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/allocator.h"
#include "ember/device.h"

namespace ember::cuda {

// ---- sizes ----
inline constexpr size_t kBlockAlignment = size_t{512};        // every block size and offset is a multiple
inline constexpr size_t kSmallRequestMax = size_t{1} << 20;   // blocks up to 1 MiB: the small pool
inline constexpr size_t kSmallSegment = size_t{2} << 20;      // the small pool's segments
inline constexpr size_t kMidRequestMax = size_t{10} << 20;    // large blocks below 10 MiB ...
inline constexpr size_t kMidSegment = size_t{20} << 20;       // ... are carved from 20 MiB segments
inline constexpr size_t kLargeSegmentStep = size_t{2} << 20;  // larger ones get a segment of their own, 2 MiB rounded

// The block size that serves a request of `nbytes`: the request rounded up to
// a multiple of 512 (at least 512), so less than 512 bytes are wasted.
size_t block_size(size_t nbytes);
// The segment reserved from the device when no cached block can serve a block of `size`.
size_t segment_size(size_t size);

// Opaque handles: cudaStream_t and cudaEvent_t in the CUDA adapter. A null
// stream is the legacy default stream.
using StreamHandle = void*;
using EventHandle = void*;

// What the pool needs from a device. Calls come with the pool's lock held.
class BlockPoolBackend {
 public:
  virtual ~BlockPoolBackend() = default;
  // `size` bytes of device memory, or nullptr when the device has not that much free (other failures throw).
  virtual void* allocate_segment(size_t size) = 0;
  virtual void free_segment(void* ptr, size_t size) = 0;
  // Waits for all work queued on the device (called before segments are freed).
  virtual void synchronize() = 0;
  virtual EventHandle create_event() = 0;
  virtual void destroy_event(EventHandle event) = 0;
  // Records `event` after the work queued so far on `stream`.
  virtual void record_event(EventHandle event, StreamHandle stream) = 0;
  // True once the work `event` was recorded after has completed.
  virtual bool event_done(EventHandle event) = 0;
  // The device's free and total memory, for out-of-memory messages ("3.00 GiB free of 80.00 GiB").
  virtual std::string describe_memory() { return "free memory unknown"; }
};

class BlockPool;

// One block of a segment: its bytes are [ptr, ptr + size). The blocks of a
// segment are linked by address; all of them carry the segment's stream. A
// live DataPtr's deleter context is its Block (no bits packed anywhere).
struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  StreamHandle stream = nullptr;  // the stream it was allocated on
  BlockPool* pool = nullptr;
  Block* prev = nullptr;  // neighbours in the segment
  Block* next = nullptr;
  bool small = false;      // from the small pool
  bool allocated = false;  // handed out, or freed but waiting for events
  int pending_events = 0;  // events recorded at free time and not yet seen complete
  std::vector<StreamHandle> stream_uses;  // other streams that used it (record_stream)
};

// The caching allocator of one device.
class BlockPool {
 public:
  BlockPool(std::unique_ptr<BlockPoolBackend> backend, Device device);
  // Gives every segment back to the backend. No block may be live.
  ~BlockPool();
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // At least `nbytes` for work on `stream` (a null DataPtr for 0 bytes).
  // Throws "CUDA out of memory" when the backend has no segment for it even
  // after the cached segments were freed.
  DataPtr allocate(size_t nbytes, StreamHandle stream);
  // Marks the live block starting at `ptr` as used by work queued on `stream`:
  // when it is freed, it waits for that work before it can be reused.
  void record_stream(const void* ptr, StreamHandle stream);
  MemoryStats stats();
  void reset_peak();
  // Waits for the device, returns the blocks whose events completed to the
  // pool, and frees every segment with no live block.
  void empty_cache();
  // True once anything was allocated here (the device then has work to wait for).
  bool used();
  Device device() const { return device_; }

  // What the pool holds, segment by segment in address order (for tests and debugging).
  struct BlockInfo {
    size_t offset = 0;  // from the segment's start
    size_t size = 0;
    bool allocated = false;
    bool pending = false;  // freed, waiting for events
  };
  struct SegmentInfo {
    const void* base = nullptr;
    size_t size = 0;
    StreamHandle stream = nullptr;
    bool small = false;
    std::vector<BlockInfo> blocks;
  };
  std::vector<SegmentInfo> snapshot();

 private:
  // Free blocks by (stream, size, address): lower_bound is the best fit on a stream.
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreeBlocks = std::set<Block*, BlockOrder>;

  static void free_deleter(void* ctx, void* data);
  void free(Block* block);
  // The rest: called with mutex_ held.
  FreeBlocks& free_blocks(const Block* b) { return b->small ? small_free_ : large_free_; }
  Block* new_segment(size_t size, StreamHandle stream, bool small);
  void split(Block* block, size_t size);
  void release(Block* block);
  // Tells the memory profiler (core/allocation_observer.h) of `block` handed
  // out (`bytes` > 0) or returned (< 0), with the totals after it.
  void observe(const Block* block, int64_t bytes) const;
  void process_events();
  void release_cached_segments();

  std::mutex mutex_;
  std::unique_ptr<BlockPoolBackend> backend_;
  const Device device_;
  FreeBlocks small_free_, large_free_;
  std::map<const char*, std::pair<Block*, size_t>> segments_;  // base -> (first block, size)
  std::unordered_map<const void*, Block*> live_;               // allocated blocks by address
  std::vector<std::pair<EventHandle, Block*>> pending_;        // events recorded when a block was freed
  std::vector<EventHandle> spare_events_;
  MemoryStats stats_;
  bool used_ = false;
};

// One BlockPool per device, for the device indices [0, device_count).
class DevicePools {
 public:
  using BackendFactory = std::function<std::unique_ptr<BlockPoolBackend>(int device)>;
  DevicePools(int device_count, const BackendFactory& make_backend);
  int device_count() const { return static_cast<int>(pools_.size()); }
  // The pool of cuda:`device`; an index that does not exist throws, naming `op`.
  BlockPool& at(int device, const char* op);
  // nullptr for an index that does not exist.
  BlockPool* find(int device);

 private:
  std::vector<std::unique_ptr<BlockPool>> pools_;
};

}  // namespace ember::cuda
