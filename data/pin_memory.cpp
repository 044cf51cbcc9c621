// See pin_memory.h. Pinning goes through Tensor::pin_memory (the CUDA
// backend's pinned host pool); without a device, batches pass unchanged.
#include "data/pin_memory.h"

#include "ember/cuda.h"

namespace ember::data::detail {

bool can_pin_memory() { return cuda_is_available(); }

namespace {

Tensor pin_tensor(const Tensor& t) {
  if (!t.defined() || !t.device().is_cpu() || t.numel() == 0) return t;
  return t.pin_memory();
}

}  // namespace

Example pin_batch(Example batch) {
  if (!can_pin_memory()) return batch;
  return Example{pin_tensor(batch.data), pin_tensor(batch.target)};
}

}  // namespace ember::data::detail
