// TensorImpl: what a Tensor handle points at.
//
// Note [Tensors, storages and views]
// A StorageImpl owns bytes on one device. A TensorImpl describes how to read
// them: sizes, strides (in elements), a storage offset and a dtype. Views
// (view, transpose, narrow, expand, ...) are new TensorImpls over the same
// StorageImpl. The version counter lives in the storage, so every view of
// the same memory sees the bump made by an in-place op on any of them; this is
// what autograd checks saved tensors against.
//
// Each TensorImpl carries a DispatchKeySet: its backend key (CPU or CUDA),
// plus Autograd once it requires grad. The dispatcher unions the key sets of
// an op's inputs to decide which kernel runs (see core/dispatcher.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "ember/allocator.h"
#include "ember/array_ref.h"
#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/intrusive_ptr.h"

namespace ember {

// Keys from lowest to highest priority. A call runs the highest key present.
// Tracer (ember::jit, Note [Tracing] in jit/tracer.h) sits above Autocast and
// Autograd so that a trace records the calls the program made, not the casts
// and backward ops those layers add below it.
enum class DispatchKey : uint8_t { CPU, CUDA, Autograd, Autocast, Tracer, Profiler };
inline constexpr int kNumDispatchKeys = 6;
const char* dispatch_key_name(DispatchKey k);

class DispatchKeySet {
 public:
  constexpr DispatchKeySet() = default;
  constexpr explicit DispatchKeySet(DispatchKey k) : bits_(1u << static_cast<int>(k)) {}
  static constexpr DispatchKeySet from_bits(uint32_t b) {
    DispatchKeySet s;
    s.bits_ = b;
    return s;
  }
  constexpr bool has(DispatchKey k) const { return bits_ & (1u << static_cast<int>(k)); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint32_t bits() const { return bits_; }
  constexpr DispatchKeySet add(DispatchKey k) const { return from_bits(bits_ | (1u << static_cast<int>(k))); }
  constexpr DispatchKeySet remove(DispatchKey k) const { return from_bits(bits_ & ~(1u << static_cast<int>(k))); }
  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return from_bits(bits_ | o.bits_); }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return from_bits(bits_ & o.bits_); }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return from_bits(bits_ & ~o.bits_); }
  // All keys strictly below k.
  static constexpr DispatchKeySet below(DispatchKey k) { return from_bits((1u << static_cast<int>(k)) - 1u); }
  // The highest key in the set (the set must not be empty).
  DispatchKey highest() const { return static_cast<DispatchKey>(31 - __builtin_clz(bits_)); }

 private:
  uint32_t bits_ = 0;
};

inline DispatchKey backend_key(Device d) { return d.is_cuda() ? DispatchKey::CUDA : DispatchKey::CPU; }

class StorageImpl : public RefCounted {
 public:
  StorageImpl(DataPtr data, size_t nbytes) : data_(std::move(data)), nbytes_(nbytes) {}
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  size_t nbytes_;
  std::atomic<uint32_t> version_{0};
};

// Autograd state of a tensor; defined by the autograd layer.
class AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl : public RefCounted {
 public:
  TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);
  // A contiguous tensor over the whole storage.
  TensorImpl(IntrusivePtr<StorageImpl> storage, DType dtype, IntArrayRef sizes);

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  bool is_contiguous() const { return is_contiguous_; }
  DispatchKeySet key_set() const { return keys_; }
  void set_key_set(DispatchKeySet k) { keys_ = k; }
  const IntrusivePtr<StorageImpl>& storage() const { return storage_; }
  // Address of element 0 (storage data + offset).
  char* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(element_size(dtype_));
  }

  // A Scalar turned into a 0-d tensor: it takes part in type promotion with
  // the lowest priority, as PyTorch's wrapped numbers do.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }

  // Re-describes this tensor (used by in-place view ops such as squeeze_).
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  // Takes `other`'s storage, dtype, sizes, strides, offset and view base,
  // keeping this object, its autograd state and its non-backend keys
  // (Tensor::set_data).
  void set_data_from(const TensorImpl& other);

  // A view's base: the tensor whose storage it shares and that is not itself
  // a view (null for non-views). Set by the view kernels; autograd uses it
  // to update the base's history when the view is modified in place.
  TensorImpl* view_base() const { return view_base_.get(); }
  void set_view_base(IntrusivePtr<TensorImpl> base) { view_base_ = std::move(base); }

  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> m) { autograd_meta_ = std::move(m); }

 private:
  void refresh();  // recomputes numel and contiguity

  IntrusivePtr<StorageImpl> storage_;
  DimVector sizes_;
  DimVector strides_;
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;
  DType dtype_;
  bool is_contiguous_ = true;
  bool wrapped_number_ = false;
  DispatchKeySet keys_;
  IntrusivePtr<TensorImpl> view_base_;
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
};

}  // namespace ember
