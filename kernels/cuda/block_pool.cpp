// The CUDA-free pool logic of the device caching allocator
// (Note [CUDA caching allocator] in kernels/cuda/cuda_allocator.h).
#include "kernels/cuda/block_pool.h"

#include <algorithm>
#include <iostream>
#include <sstream>
#include <vector>

#include "core/allocation_observer.h"
#include "ember/error.h"

namespace ember::cuda {
namespace {

std::string format_bytes(size_t n) {
  constexpr double kMiB = 1 << 20, kGiB = 1 << 30;
  std::ostringstream os;
  os.precision(2);
  if (n >= (size_t{1} << 30)) os << std::fixed << static_cast<double>(n) / kGiB << " GiB";
  else if (n >= (size_t{1} << 20)) os << std::fixed << static_cast<double>(n) / kMiB << " MiB";
  else os << n << " bytes";
  return os.str();
}

size_t round_up(size_t n, size_t step) { return (n + step - 1) / step * step; }

// A free block larger than the request is split when the rest is worth
// keeping: any rest in the small pool, more than 1 MiB in the large pool (a
// smaller rest stays with the block rather than fragment the segment).
bool should_split(const Block* b, size_t size) {
  const size_t rest = b->size - size;
  return b->small ? rest >= kBlockAlignment : rest > kSmallRequestMax;
}

}  // namespace

size_t block_size(size_t nbytes) {
  if (nbytes <= kBlockAlignment) return kBlockAlignment;
  EMBER_CHECK(nbytes <= SIZE_MAX - kLargeSegmentStep, "CUDA allocator: a request of ", nbytes, " bytes is too large");
  return round_up(nbytes, kBlockAlignment);
}

size_t segment_size(size_t size) {
  if (size <= kSmallRequestMax) return kSmallSegment;
  if (size < kMidRequestMax) return kMidSegment;
  return round_up(size, kLargeSegmentStep);
}

bool BlockPool::BlockOrder::operator()(const Block* a, const Block* b) const {
  const auto sa = reinterpret_cast<uintptr_t>(a->stream), sb = reinterpret_cast<uintptr_t>(b->stream);
  if (sa != sb) return sa < sb;
  if (a->size != b->size) return a->size < b->size;
  return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
}

BlockPool::BlockPool(std::unique_ptr<BlockPoolBackend> backend, Device device)
    : backend_(std::move(backend)), device_(device) {}

BlockPool::~BlockPool() {
  for (auto& [base, segment] : segments_) {
    for (Block* b = segment.first; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
    backend_->free_segment(const_cast<char*>(base), segment.second);
  }
  for (const auto& [event, block] : pending_) backend_->destroy_event(event);
  for (EventHandle event : spare_events_) backend_->destroy_event(event);
}

DataPtr BlockPool::allocate(size_t nbytes, StreamHandle stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  used_ = true;
  if (nbytes == 0) return DataPtr(nullptr, nullptr, nullptr, device_);
  if (!pending_.empty()) process_events();
  const size_t size = block_size(nbytes);
  const bool small = size <= kSmallRequestMax;
  FreeBlocks& pool = small ? small_free_ : large_free_;
  Block key;
  key.stream = stream;
  key.size = size;
  Block* block = nullptr;
  auto it = pool.lower_bound(&key);  // the smallest free block of this stream that fits
  if (it != pool.end() && (*it)->stream == stream) {
    block = *it;
    pool.erase(it);
    ++stats_.cache_hits;
  } else {
    block = new_segment(size, stream, small);
    ++stats_.cache_misses;
  }
  if (should_split(block, size)) split(block, size);
  block->allocated = true;
  live_.emplace(block->ptr, block);
  ++stats_.num_allocations;
  stats_.allocated_bytes += static_cast<int64_t>(block->size);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  observe(block, static_cast<int64_t>(block->size));
  return DataPtr(block->ptr, block, &BlockPool::free_deleter, device_);
}

void BlockPool::observe(const Block* block, int64_t bytes) const {
  const ember::detail::AllocationObserver observer = ember::detail::allocation_observer();
  if (!observer) return;
  ember::detail::AllocationEvent event;
  event.ptr = block->ptr;
  event.bytes = bytes;
  event.allocated_bytes = stats_.allocated_bytes;
  event.reserved_bytes = stats_.reserved_bytes;
  event.device = device_;
  observer(event);
}

Block* BlockPool::new_segment(size_t size, StreamHandle stream, bool small) {
  const size_t bytes = segment_size(size);
  void* ptr = backend_->allocate_segment(bytes);
  if (ptr == nullptr) {
    release_cached_segments();  // give the cache back and try once more
    ptr = backend_->allocate_segment(bytes);
  }
  if (ptr == nullptr) {
    EMBER_FAIL("CUDA out of memory: tried to allocate ", format_bytes(size), " on ", device_, " (a segment of ",
               format_bytes(bytes), "; ", backend_->describe_memory(), "; ember tensors hold ",
               format_bytes(static_cast<size_t>(stats_.allocated_bytes)), ", of ",
               format_bytes(static_cast<size_t>(stats_.reserved_bytes)), " reserved)");
  }
  auto* block = new Block();
  block->ptr = static_cast<char*>(ptr);
  block->size = bytes;
  block->stream = stream;
  block->pool = this;
  block->small = small;
  segments_.emplace(block->ptr, std::make_pair(block, bytes));
  stats_.reserved_bytes += static_cast<int64_t>(bytes);
  return block;
}

// `block` (free, in no free set) keeps its first `size` bytes; the rest becomes a free block after it.
void BlockPool::split(Block* block, size_t size) {
  auto* rest = new Block();
  rest->ptr = block->ptr + size;
  rest->size = block->size - size;
  rest->stream = block->stream;
  rest->pool = this;
  rest->small = block->small;
  rest->prev = block;
  rest->next = block->next;
  if (block->next) block->next->prev = rest;
  block->next = rest;
  block->size = size;
  free_blocks(rest).insert(rest);
}

void BlockPool::free_deleter(void* ctx, void* /*data*/) {
  auto* block = static_cast<Block*>(ctx);
  block->pool->free(block);
}

void BlockPool::free(Block* block) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.erase(block->ptr);
  if (block->stream_uses.empty()) {
    release(block);
    return;
  }
  // Work on other streams may still use the block: it comes back once an event
  // recorded now on each of them has completed (until then it counts as allocated).
  std::vector<EventHandle> events;
  try {
    for (StreamHandle stream : block->stream_uses) {
      EventHandle event = nullptr;
      if (spare_events_.empty()) {
        event = backend_->create_event();
      } else {
        event = spare_events_.back();
        spare_events_.pop_back();
      }
      events.push_back(event);
      backend_->record_event(event, stream);
    }
  } catch (const Error& e) {
    // This runs in a tensor's destructor, which must not throw. The device
    // failed (a lost context, or the runtime shutting down at exit) and the
    // streams' work cannot be tracked: the block is never handed out again.
    spare_events_.insert(spare_events_.end(), events.begin(), events.end());
    block->stream_uses.clear();
    std::cerr << "ember: CUDA allocator: a block used on other streams is kept out of the pool (" << e.what()
              << ")\n";
    return;
  }
  for (EventHandle event : events) pending_.emplace_back(event, block);
  block->pending_events += static_cast<int>(events.size());
  block->stream_uses.clear();
}

// Returns an allocated block to its free set, merged with its free neighbours.
void BlockPool::release(Block* block) {
  stats_.allocated_bytes -= static_cast<int64_t>(block->size);
  observe(block, -static_cast<int64_t>(block->size));  // before merging: the block as it was handed out
  block->allocated = false;
  FreeBlocks& pool = free_blocks(block);
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {  // prev absorbs block
    pool.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (block->next) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && !next->allocated) {  // block absorbs next
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next) next->next->prev = block;
    delete next;
  }
  pool.insert(block);
}

void BlockPool::process_events() {
  for (size_t i = 0; i < pending_.size();) {
    auto [event, block] = pending_[i];
    if (!backend_->event_done(event)) {
      ++i;
      continue;
    }
    spare_events_.push_back(event);
    pending_[i] = pending_.back();
    pending_.pop_back();
    if (--block->pending_events == 0) release(block);
  }
}

// Frees every segment that is one free block (the first block absorbs the
// others as they are freed, so a segment with no live block is its first block).
void BlockPool::release_cached_segments() {
  if (!pending_.empty()) {
    backend_->synchronize();  // lets the pending blocks' events complete
    process_events();
  }
  std::vector<Block*> whole;
  for (const auto& [base, segment] : segments_) {
    Block* first = segment.first;
    if (!first->allocated && first->next == nullptr) whole.push_back(first);
  }
  if (whole.empty()) return;
  backend_->synchronize();  // kernels queued before the blocks were freed may still use them
  for (Block* b : whole) {
    free_blocks(b).erase(b);
    segments_.erase(b->ptr);
    stats_.reserved_bytes -= static_cast<int64_t>(b->size);
    backend_->free_segment(b->ptr, b->size);
    delete b;
  }
}

void BlockPool::record_stream(const void* ptr, StreamHandle stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  EMBER_CHECK(it != live_.end(), "record_stream: ", ptr, " is not the start of a live block on ", device_);
  Block* block = it->second;
  if (stream == block->stream) return;
  std::vector<StreamHandle>& uses = block->stream_uses;
  if (std::find(uses.begin(), uses.end(), stream) == uses.end()) uses.push_back(stream);
}

MemoryStats BlockPool::stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void BlockPool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
}

void BlockPool::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_segments();
}

bool BlockPool::used() {
  std::lock_guard<std::mutex> lock(mutex_);
  return used_;
}

std::vector<BlockPool::SegmentInfo> BlockPool::snapshot() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SegmentInfo> out;
  for (const auto& [base, segment] : segments_) {
    SegmentInfo s;
    s.base = base;
    s.size = segment.second;
    s.stream = segment.first->stream;
    s.small = segment.first->small;
    for (const Block* b = segment.first; b != nullptr; b = b->next)
      s.blocks.push_back({static_cast<size_t>(b->ptr - base), b->size, b->allocated, b->pending_events > 0});
    out.push_back(std::move(s));
  }
  return out;
}

DevicePools::DevicePools(int device_count, const BackendFactory& make_backend) {
  for (int d = 0; d < device_count; ++d)
    pools_.push_back(std::make_unique<BlockPool>(make_backend(d), Device::cuda(d)));
}

BlockPool& DevicePools::at(int device, const char* op) {
  const int count = device_count();
  EMBER_CHECK(device >= 0 && device < count, op, ": device cuda:", device, " does not exist (", count,
              " CUDA device", count == 1 ? "" : "s", " present)");
  return *pools_[static_cast<size_t>(device)];
}

BlockPool* DevicePools::find(int device) {
  if (device < 0 || device >= device_count()) return nullptr;
  return pools_[static_cast<size_t>(device)].get();
}

}  // namespace ember::cuda
