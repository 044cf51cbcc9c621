// launch_kernel: the one way ember launches a kernel. In the real build it is
// kernel<<<grid, block, shared_bytes, stream>>>(args...); in the emulation
// build the same kernel runs on the CPU emulator (kernels/cuda/emulate). The
// launch is checked either way (check_launch, Note [CUDA errors]).
//
//   launch_kernel("sum", "row_sum_kernel", row_sum_kernel<float, float>, grid, kThreads, 0, current_cuda_stream(),
//                 in, n, out);
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <utility>

#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {

template <class... Params, class... Args>
void launch_kernel(const char* op, const char* kernel_name, void (*kernel)(Params...), dim3 grid, dim3 block,
                   size_t shared_bytes, cudaStream_t stream, Args&&... args) {
#ifdef EMBER_CUDA_EMULATE
  // Every emulated thread calls the kernel with its own copy of the arguments, as on a GPU.
  emulate::launch(reinterpret_cast<const void*>(kernel), kernel_name, grid, block, shared_bytes, stream,
                  [kernel, params = std::tuple<Params...>(std::forward<Args>(args)...)] { std::apply(kernel, params); });
#else
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
#endif
  check_launch(op, kernel_name, stream);
}

}  // namespace ember::cuda
