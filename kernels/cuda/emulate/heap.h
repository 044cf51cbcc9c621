// The emulated devices' memory and the page-locked host buffers: every
// allocation is recorded, so the runtime can tell a device pointer from a
// host one, check that a copy stays inside one allocation, and refuse a free
// of something it never handed out. Device memory is filled with 0xff bytes
// on allocation: uninitialised floats read as NaN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace ember::cuda::emulate {

struct Allocation {
  uintptr_t begin = 0;
  size_t size = 0;
  int device = -1;  // -1: page-locked host memory
};

// nullptr when the device's memory (Config::memory_bytes) would be exceeded.
void* device_alloc(int device, size_t size);
// False when `ptr` is not the start of a live device allocation.
bool device_free(void* ptr);
void* pinned_alloc(size_t size);
bool pinned_free(void* ptr);
// The live allocation (device or pinned) that holds [ptr, ptr + size), if any.
std::optional<Allocation> find_allocation(const void* ptr, size_t size = 1);
size_t device_bytes_in_use(int device);

}  // namespace ember::cuda::emulate
