#include "ember/tensor_impl.h"

#include <ostream>

#include "core/tensor_util.h"
#include "ember/error.h"

namespace ember {

const char* dispatch_key_name(DispatchKey k) {
  switch (k) {
    case DispatchKey::CPU: return "CPU";
    case DispatchKey::CUDA: return "CUDA";
    case DispatchKey::Autograd: return "Autograd";
    case DispatchKey::Autocast: return "Autocast";
    case DispatchKey::Tracer: return "Tracer";
    case DispatchKey::Profiler: return "Profiler";
  }
  return "?";
}

TensorImpl::TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)), sizes_(sizes), strides_(strides), storage_offset_(storage_offset), dtype_(dtype) {
  keys_ = DispatchKeySet(backend_key(storage_->device()));
  refresh();
}

TensorImpl::TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, IntArrayRef sizes)
    : storage_(std::move(storage)), sizes_(sizes), dtype_(dtype) {
  strides_ = contiguous_strides(sizes_);
  keys_ = DispatchKeySet(backend_key(storage_->device()));
  refresh();
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_ = sizes;
  strides_ = strides;
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::set_data_from(const TensorImpl& other) {
  storage_ = other.storage_;
  dtype_ = other.dtype_;
  sizes_ = other.sizes_;
  strides_ = other.strides_;
  storage_offset_ = other.storage_offset_;
  view_base_ = other.view_base_;
  keys_ = keys_.remove(DispatchKey::CPU).remove(DispatchKey::CUDA).add(backend_key(storage_->device()));
  refresh();
}

void TensorImpl::refresh() {
  numel_ = 1;
  for (int64_t s : sizes_) numel_ *= s;
  // Contiguous: row-major strides, ignoring dims of size 1 (as PyTorch does).
  is_contiguous_ = true;
  if (numel_ == 0) return;
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) {
      is_contiguous_ = false;
      return;
    }
    expected *= sizes_[i];
  }
}

}  // namespace ember
