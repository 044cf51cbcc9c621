// The CUDA memory pools: device memory for CUDA tensors and pinned host
// memory for staging copies. No CUDA types here (tests include it).
//
// Note [CUDA caching allocator]
// cudaMalloc and cudaFree are slow (tens of µs; cudaFree also synchronises
// the device), so freed blocks are kept per device, by size class, and handed
// out again. Size classes: requests up to 1 MiB round up to one of four steps
// per power of two (at least 512 bytes, so at most 25% is wasted); larger ones
// round up to a multiple of 2 MiB. cudaMalloc runs only on a cache miss. When
// it fails, the device's cached blocks are freed and the call is tried once
// more before an out-of-memory error names the sizes involved.
// A freed block may be reused at once: all of a device's work runs on one
// stream (Note [CUDA streams and devices] in kernels/cuda/cuda_utils.h).
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
// The allocator registered for DeviceType::CUDA: allocate() uses the current device.
Allocator* device_allocator();
// `nbytes` on `device` (any current device).
DataPtr allocate_on_device(size_t nbytes, int device);
MemoryStats device_memory_stats(int device);
void reset_device_peak_memory(int device);
// Frees the cached (unused) blocks of `device` (after waiting for its work).
void empty_device_cache(int device);
// True once ember has allocated on `device` (it then has work to wait for).
bool device_was_used(int device);
// The size class a request of `nbytes` is served from.
size_t device_block_size(size_t nbytes);

// ---- pinned host memory ----
// A page-locked host buffer of at least `nbytes` (its Device is cpu), reused
// only after the transfers recorded on it are done.
DataPtr allocate_pinned(size_t nbytes);
// Records that an asynchronous transfer queued on `stream` (a cudaStream_t)
// reads or writes the pinned buffer that starts at `ptr`.
void record_pinned_use(void* ptr, void* stream);
// Blocks until the transfers recorded on the pinned buffer at `ptr` are done.
void wait_pinned_use(void* ptr);
MemoryStats pinned_memory_stats();
// Frees the cached pinned buffers whose transfers are done.
void empty_pinned_cache();
// True when `ptr` points into page-locked host memory (ours or registered by anyone).
bool is_pinned(const void* ptr);

}  // namespace ember::cuda
