// register_cuda_allocator(): installs the device caching allocator for
// DeviceType::CUDA and the pinned host pool behind Tensor::pin_memory, when
// a device is present (wiring/wire.cpp calls it). The
// CUDA kernels are registered in every CUDA build (so `ember inspect dispatch`
// lists them); without a device, creating a CUDA tensor fails with "no
// allocator for device cuda:0", and no CUDA kernel can be reached.
#include "ember/cuda.h"
#include "kernels/cuda/cuda_allocator.h"

namespace ember::cuda {
namespace {

struct PinnedHostAllocator final : Allocator {
  DataPtr allocate(size_t nbytes) override { return allocate_pinned(nbytes); }
};

}  // namespace

void register_cuda_allocator() {
  if (!cuda_is_available()) return;
  // Each function gets the Device's index: memory_stats(Device::cuda(1)) reports on cuda:1.
  ember::detail::set_allocator(DeviceType::CUDA, &device_allocator, &device_memory_stats, &reset_device_peak_memory,
                               &empty_device_cache);
  static PinnedHostAllocator pinned;
  ember::detail::set_pinned_allocator(&pinned, &is_pinned);
}

}  // namespace ember::cuda
