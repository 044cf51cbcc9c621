// See pin_memory.h. The pinned buffers come from the CUDA backend's pinned
// host pool; without CUDA there is nothing to pin and batches pass unchanged.
#include "nn/data/pin_memory.h"

#include <memory>

#include "ember/cuda.h"
#include "ember/ops.h"
#ifdef EMBER_WITH_CUDA
#include "kernels/cuda/cuda_allocator.h"
#endif

namespace ember::data::detail {

bool can_pin_memory() {
#ifdef EMBER_WITH_CUDA
  return cuda_is_available();
#else
  return false;
#endif
}

namespace {

Tensor pin_tensor(const Tensor& t) {
#ifdef EMBER_WITH_CUDA
  if (!t.defined() || !t.device().is_cpu() || t.numel() == 0) return t;
  // The DataPtr lives as long as the tensor over it; it returns the buffer to the pool.
  auto buffer = std::make_shared<DataPtr>(cuda::allocate_pinned(t.nbytes()));
  Tensor pinned = from_blob(buffer->get(), t.sizes(), t.dtype(), [buffer](void*) mutable { buffer.reset(); });
  pinned.copy_(t);
  return pinned;
#else
  return t;
#endif
}

}  // namespace

Example pin_batch(Example batch) {
  if (!can_pin_memory()) return batch;
  return Example{pin_tensor(batch.data), pin_tensor(batch.target)};
}

}  // namespace ember::data::detail
