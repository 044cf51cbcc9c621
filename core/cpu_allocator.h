// What the CPU caching allocator (cpu_allocator.cpp) holds, by size class:
// the part of its state that <ember/allocator.h>'s MemoryStats does not
// show. `ember inspect memory` prints it.
#pragma once

#include <cstdint>
#include <vector>

namespace ember {

// One size class: requests round up to its block size.
struct MemoryBlockClass {
  int64_t block_bytes = 0;
  int64_t allocated_blocks = 0;  // held by tensors
  int64_t cached_blocks = 0;     // free, kept for the next request of this class
};

// The size classes that hold blocks now, smallest first.
std::vector<MemoryBlockClass> cpu_memory_size_classes();

}  // namespace ember
