// The CUDA memory pools: device memory for CUDA tensors and pinned host
// memory for staging copies. No CUDA types here (tests include it).
//
// Note [CUDA caching allocator]
// cudaMalloc and cudaFree are slow (tens of µs; cudaFree also synchronises the
// device), so each device has a pool (BlockPool, kernels/cuda/block_pool.h)
// that reserves memory in segments and hands out blocks carved from them, in
// the manner of PyTorch's CUDACachingAllocator:
//  - sizes: a request is rounded up to a multiple of 512 bytes (every block
//    size and offset is one). Blocks up to 1 MiB come from the small pool,
//    whose segments are 2 MiB; larger ones from the large pool, whose segments
//    are 20 MiB for blocks under 10 MiB and the block rounded up to 2 MiB
//    above. cudaMalloc runs only when no free block fits.
//  - best fit: free blocks are ordered by (stream, size, address); a request
//    takes the smallest free block of its stream that fits and splits it when
//    the rest is worth keeping (any rest in the small pool, more than 1 MiB in
//    the large one). A freed block merges with its free neighbours in the
//    segment, so a segment with no live block is one free block again, and
//    empty_cache frees such segments (after waiting for the device).
//  - streams: a block remembers the stream it was allocated on (a segment's
//    blocks share it), and a freed block is reused at once only by requests on
//    that stream: any kernel that still reads it was queued before any kernel
//    that will write it. record_stream_use (behind ember::cuda::record_stream)
//    marks a block as used on another stream too; when it is freed, an event
//    is recorded on each such stream, and the block returns to the pool
//    (counted as allocated until then) once all of them have completed,
//    checked on later allocations and in empty_cache.
//  - devices: a tensor's device index picks the pool (allocations for
//    Device::cuda(1) are made on cuda:1); a live block's DataPtr context is its
//    Block record, which knows its pool.
//  - out of memory: when cudaMalloc fails, the device's unused segments are
//    freed and the call is tried once more before an error names the sizes.
//  - profiling: a block handed out or returned (for a pending block: when its
//    events complete) is reported to core/allocation_observer.h with the
//    device, as the CPU allocator reports its blocks.
//
// Note [Pinned staging]
// Copies between a CUDA tensor and ordinary (pageable) host memory go through
// page-locked ("pinned") buffers in chunks: the host copies a chunk into a
// pinned buffer while the DMA engine moves the previous one. Pinned buffers
// come from their own cache; each remembers an event recorded after the last
// transfer that used it, and is handed out again only once that event has
// completed, so host-to-device copies need not wait for the transfer.
#pragma once

#include <cstddef>

#include "ember/allocator.h"

namespace ember::cuda {

// ---- device memory ----
// In the functions below a negative device index means the current device;
// an index with no device behind it throws.
// The allocator of cuda:`device` (registered for DeviceType::CUDA).
Allocator* device_allocator(int device);
// `nbytes` on `device`, for work on its current stream.
DataPtr allocate_on_device(size_t nbytes, int device);
MemoryStats device_memory_stats(int device);
void reset_device_peak_memory(int device);
// Frees the unused segments of `device` (after waiting for its work).
void empty_device_cache(int device);
// True once ember has allocated on `device` (it then has work to wait for).
bool device_was_used(int device);
// Marks the allocation that starts at `data` on `device` (a storage's data,
// not a view's) as used by work queued on `stream` (a cudaStream_t), not only
// on the stream it was allocated on: when freed, it is handed out again only
// after that work is done. ember::cuda::record_stream(tensor, stream) calls it.
void record_stream_use(const void* data, int device, void* stream);

// ---- pinned host memory ----
// A page-locked host buffer of at least `nbytes` (its Device is cpu), reused
// only after the transfers recorded on it are done.
DataPtr allocate_pinned(size_t nbytes);
// Records that an asynchronous transfer queued on `stream` (a cudaStream_t)
// reads or writes the pinned buffer that starts at `ptr`; a buffer used on
// several streams waits for all of them. False when `ptr` is not the start of
// one of ember's live pinned buffers (page-locked memory of the caller's own):
// the caller must then synchronise before it returns.
bool record_pinned_use(void* ptr, void* stream);
// Blocks until the transfers recorded on the pinned buffer at `ptr` are done.
void wait_pinned_use(void* ptr);
MemoryStats pinned_memory_stats();
// Frees the cached pinned buffers whose transfers are done.
void empty_pinned_cache();
// True when `ptr` points into page-locked host memory (ours or registered by anyone).
bool is_pinned(const void* ptr);

}  // namespace ember::cuda
