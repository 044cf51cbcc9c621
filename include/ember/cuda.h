// Asking about CUDA devices. No CUDA headers or types: a program can include
// this whether or not ember was built with CUDA; without it (or without a
// device and driver) cuda_is_available() is false and cuda_device_count() 0.
//
//   if (ember::cuda_is_available()) {
//     ember::Tensor x = ember::randn({1024, 1024}).cuda();
//     ...
//     ember::cuda_synchronize();  // wait for the queued kernels (e.g. to time them)
//   }
//
// Memory of a device: ember::memory_stats(Device::cuda()) and
// ember::empty_cache(Device::cuda()) (<ember/allocator.h>) report on and free
// the caching allocator's blocks of the current device.
#pragma once

namespace ember {

// True when ember was built with CUDA and at least one device is usable.
bool cuda_is_available();
// Number of usable CUDA devices (0 without CUDA).
int cuda_device_count();
// The device new CUDA tensors are allocated on and kernels run on by default.
int cuda_current_device();
void cuda_set_device(int device);
// Blocks until all work queued on every device ember has used is done.
void cuda_synchronize();
// Blocks until all work queued on `device` is done.
void cuda_synchronize(int device);

// libtorch's spellings: torch::cuda::is_available(), device_count(), synchronize().
namespace cuda {
inline bool is_available() { return cuda_is_available(); }
inline int device_count() { return cuda_device_count(); }
inline void synchronize() { cuda_synchronize(); }
}  // namespace cuda

}  // namespace ember
