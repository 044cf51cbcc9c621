// register_cuda_kernels(): the CUDA backend's entry in kernels/registration.cpp.
// The kernels are registered in every CUDA build (so `ember inspect dispatch`
// lists them); the allocator only when a device is present. Without one,
// creating a CUDA tensor fails with "no allocator for device cuda:0", and no
// CUDA kernel can be reached.
#include "ember/cuda.h"
#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/registration.h"

namespace ember {

void register_cuda_kernels() {
  if (cuda_is_available()) {
    // The allocator slot has no device argument: stats and empty_cache act on the current device.
    detail::set_allocator(
        DeviceType::CUDA, cuda::device_allocator(), [] { return cuda::device_memory_stats(cuda_current_device()); },
        [] { cuda::reset_device_peak_memory(cuda_current_device()); },
        [] { cuda::empty_device_cache(cuda_current_device()); });
  }
  cuda::register_cuda_copy_kernels();
  cuda::register_cuda_elementwise_kernels();
  cuda::register_cuda_reduce_kernels();
  cuda::register_cuda_random_kernels();
}

}  // namespace ember
