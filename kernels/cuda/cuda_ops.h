// Shared by the host-side CUDA op wrappers (cuda_*_ops.cpp): building a
// TensorIterator for a CUDA kernel, and the per-family registration.
#pragma once

#include "core/tensor_iterator.h"
#include "kernels/cuda/cuda_loops.h"

namespace ember::cuda {

// A TensorIterator plus the launch description of its operands.
struct CudaIterator {
  TensorIterator it;
  ElementwiseArgs args;
};

// TensorIterator::build for a CUDA kernel with one output. The common dtype
// is computed from the original inputs first; CPU 0-d inputs are then
// replaced by stand-in tensors on the device and their values passed by value
// (Note [CPU scalars in CUDA kernels] in cuda_loops.h). The caller holds a
// DeviceGuard for the device of the CUDA operands.
CudaIterator build_cuda_iterator(TensorIterator::Config config);

// The bytes of `value` converted to `dtype` (as ember's CPU conversion does),
// in the low bytes of the result.
uint64_t scalar_bits(const Scalar& value, DType dtype);

// The CUDA device index of the first CUDA tensor among `tensors`.
int cuda_device_index(std::initializer_list<const Tensor*> tensors, const char* op);

}  // namespace ember::cuda
