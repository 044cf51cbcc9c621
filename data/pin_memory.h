// Copies a batch into page-locked ("pinned") host memory, so that a later
// copy to a CUDA device is one direct DMA transfer instead of going through
// staging buffers (Note [Pinned staging] in kernels/cuda/cuda_allocator.h).
#pragma once

#include "ember/data/example.h"

namespace ember::data::detail {

// True when pinning does anything: a CUDA build with a usable device.
bool can_pin_memory();
// The batch with its CPU tensors moved to pinned buffers (same values, contiguous).
Example pin_batch(Example batch);

}  // namespace ember::data::detail
