// Tensor::pin_memory and Tensor::is_pinned over the pinned-host allocator a
// backend registers (the CUDA backend does when a device is present).
#include "core/tensor_util.h"
#include "ember/allocator.h"
#include "ember/tensor.h"
#include "ember/tensor_impl.h"

namespace ember {
namespace {

struct PinnedSlot {
  Allocator* allocator = nullptr;
  bool (*is_pinned)(const void* ptr) = nullptr;
};

PinnedSlot& pinned_slot() {
  static PinnedSlot slot;
  return slot;
}

}  // namespace

namespace detail {
void set_pinned_allocator(Allocator* allocator, bool (*is_pinned)(const void* ptr)) {
  pinned_slot() = PinnedSlot{allocator, is_pinned};
}
}  // namespace detail

bool Tensor::is_pinned() const {
  const PinnedSlot& slot = pinned_slot();
  if (!defined() || !device().is_cpu() || slot.is_pinned == nullptr) return false;
  return slot.is_pinned(impl()->storage()->data());
}

Tensor make_empty_pinned(IntArrayRef sizes, DType dtype, const char* op) {
  const PinnedSlot& slot = pinned_slot();
  EMBER_CHECK(slot.allocator != nullptr, op,
              ": page-locked memory needs the CUDA backend and a CUDA device, and none is available "
              "(check ember::cuda_is_available() first)");
  const size_t nbytes = checked_nbytes(sizes, dtype, op);
  auto storage = make_intrusive<StorageImpl>(slot.allocator->allocate(nbytes), nbytes);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes));
}

Tensor Tensor::pin_memory() const {
  EMBER_CHECK(defined(), "pin_memory: got an undefined tensor");
  EMBER_CHECK(device().is_cpu(), "pin_memory: only CPU tensors can be pinned, but got a tensor on ", device(),
              " (shape ", sizes(), ")");
  if (is_pinned()) return *this;
  Tensor pinned = make_empty_pinned(sizes(), dtype(), "pin_memory");
  pinned.copy_(*this);
  return pinned;
}

}  // namespace ember
