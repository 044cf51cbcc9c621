// Runs the blocks of an emulated kernel launch on the calling thread: each
// block's threads are fibers that run until they reach a barrier or a warp
// collective, and are released together once every thread that must take
// part has arrived (Note [CUDA emulation] in README.md). Misuse a GPU would
// hang on or leave undefined — a __syncthreads that not every thread reaches,
// a warp collective whose mask names an exited or absent lane — is a Fault.
#pragma once

#include <functional>
#include <stdexcept>

#include "kernels/cuda/emulate/runtime_api.h"

namespace ember::cuda::emulate {

// An error found while a kernel ran; the message names the kernel and the block.
struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void run_grid(const char* kernel_name, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
              const std::function<void()>& thread_body);

}  // namespace ember::cuda::emulate
