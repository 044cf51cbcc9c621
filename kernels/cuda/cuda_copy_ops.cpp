// copy_, fill_ and clone for CUDA tensors: the host side.
//
// copy_(self, src) is registered for the CUDA key, so the dispatcher sends it
// every copy that involves a CUDA tensor, in either direction:
//  - same device: a cudaMemcpyAsync when both are contiguous with the same
//    dtype and shape, else the elementwise copy kernel (dtype conversion,
//    strides, broadcasting) from cuda_copy.cu;
//  - host to device: the CPU source is made contiguous on the CPU, moved in
//    its own dtype (staged through pinned buffers, Note [Pinned staging] in
//    cuda_allocator.h) and converted/scattered on the device when self is not
//    a contiguous tensor of the same dtype and shape. It returns before the
//    transfer ends: the source bytes are already in ember's pinned buffers;
//  - device to host: the source is compacted on the device (and converted
//    there when that makes it smaller), moved, and scattered/converted by the
//    CPU copy_ when needed. It returns once the data is in host memory;
//  - device to device across GPUs: cudaMemcpyPeerAsync of a contiguous copy.
// non_blocking (Tensor::to / copy_) makes a transfer between a device tensor
// and a contiguous pinned host tensor of the same dtype and shape return
// before it is done, as in PyTorch; every other copy ignores it.
#include <algorithm>
#include <cstring>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/scalar_convert.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

constexpr size_t kStageChunk = size_t{8} << 20;  // bytes per pinned staging buffer
constexpr int kStageRing = 4;                    // staging buffers in flight per copy

// memcpy split over the thread pool in fixed 1 MiB pieces.
void host_memcpy(void* dst, const void* src, size_t n) {
  constexpr int64_t kPiece = int64_t{1} << 20;
  parallel_for(0, static_cast<int64_t>(n), kPiece, [&](int64_t b, int64_t e) {
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, static_cast<size_t>(e - b));
  });
}

// n bytes from host `src` to device `dst`, on the current device's stream.
// From pinned memory with `pinned_block` (the start of ember's pinned buffer
// holding src) and non_blocking, it returns at once: the buffer is marked as
// used by the transfer, so the pinned pool does not hand it out before it ends.
void upload(void* dst, const void* src, size_t n, bool non_blocking, void* pinned_block) {
  if (n == 0) return;
  cudaStream_t stream = current_cuda_stream();
  if (is_pinned(src)) {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream), "copy_");
    // Unless the buffer is ember's and marked as in use, the caller may overwrite it as soon as copy_ returns.
    if (!(non_blocking && pinned_block && record_pinned_use(pinned_block, stream)))
      EMBER_CUDA_CHECK(cudaStreamSynchronize(stream), "copy_");
    return;
  }
  DataPtr ring[kStageRing];
  const size_t buffer_size = std::min(kStageChunk, n);
  size_t offset = 0;
  for (int k = 0; offset < n; ++k) {
    const size_t len = std::min(kStageChunk, n - offset);
    DataPtr& buf = ring[k % kStageRing];
    if (buf.get()) wait_pinned_use(buf.get());  // its previous transfer is done
    else buf = allocate_pinned(buffer_size);
    host_memcpy(buf.get(), static_cast<const char*>(src) + offset, len);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + offset, buf.get(), len, cudaMemcpyHostToDevice, stream),
                     "copy_");
    record_pinned_use(buf.get(), stream);
    offset += len;
  }
}

// n bytes from device `src` to host `dst`; returns when they have arrived,
// or at once with non_blocking into ember's pinned buffer `pinned_block`
// (the start of the buffer holding dst, marked as in use by the transfer so
// that it is not handed out again before it ends; the caller synchronises).
void download(void* dst, const void* src, size_t n, bool non_blocking, void* pinned_block) {
  if (n == 0) return;
  cudaStream_t stream = current_cuda_stream();
  if (is_pinned(dst)) {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream), "copy_");
    if (!(non_blocking && pinned_block && record_pinned_use(pinned_block, stream)))
      EMBER_CUDA_CHECK(cudaStreamSynchronize(stream), "copy_");
    return;
  }
  const int64_t chunks = static_cast<int64_t>((n + kStageChunk - 1) / kStageChunk);
  const size_t buffer_size = std::min(kStageChunk, n);
  DataPtr ring[kStageRing];
  auto chunk_len = [&](int64_t k) { return std::min(kStageChunk, n - static_cast<size_t>(k) * kStageChunk); };
  auto issue = [&](int64_t k) {
    DataPtr& buf = ring[k % kStageRing];
    if (!buf.get()) buf = allocate_pinned(buffer_size);
    EMBER_CUDA_CHECK(cudaMemcpyAsync(buf.get(), static_cast<const char*>(src) + static_cast<size_t>(k) * kStageChunk,
                                     chunk_len(k), cudaMemcpyDeviceToHost, stream),
                     "copy_");
    record_pinned_use(buf.get(), stream);
  };
  for (int64_t k = 0; k < std::min<int64_t>(kStageRing, chunks); ++k) issue(k);
  for (int64_t k = 0; k < chunks; ++k) {
    DataPtr& buf = ring[k % kStageRing];
    wait_pinned_use(buf.get());
    host_memcpy(static_cast<char*>(dst) + static_cast<size_t>(k) * kStageChunk, buf.get(), chunk_len(k));
    if (k + kStageRing < chunks) issue(k + kStageRing);
  }
}

bool same_layout_contiguous(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && a.is_contiguous() && b.is_contiguous();
}

// Both on the current device.
void device_copy(const Tensor& self, const Tensor& src) {
  if (same_layout_contiguous(self, src)) {
    if (self.data_ptr() != src.data_ptr())
      EMBER_CUDA_CHECK(cudaMemcpyAsync(self.data_ptr(), src.data_ptr(), self.nbytes(), cudaMemcpyDeviceToDevice,
                                       current_cuda_stream()),
                       "copy_");
    return;
  }
  TensorIterator::Config c;
  c.name("copy_").output(self).input(src);
  c.promote_inputs = false;
  c.common_dtype = self.dtype();
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch_copy(ci.args);
}

void host_to_device(const Tensor& self, const Tensor& src, bool non_blocking) {
  DeviceGuard guard(self.device().index);
  const Tensor host = src.contiguous();
  const bool direct = self.is_contiguous() && self.dtype() == src.dtype() && self.sizes() == src.sizes();
  const Tensor dst = direct ? self : make_empty(src.sizes(), src.dtype(), self.device());
  // Asynchronous only from the caller's own pinned tensor (a contiguous copy would be a temporary).
  void* block = host.is_same(src) && src.is_pinned() ? src.impl()->storage()->data() : nullptr;
  upload(dst.data_ptr(), host.data_ptr(), host.nbytes(), non_blocking, block);
  if (!direct) device_copy(self, dst);
}

void device_to_host(const Tensor& self, const Tensor& src, bool non_blocking) {
  DeviceGuard guard(src.device().index);
  Tensor s = src;
  // Convert on the device when that shrinks the transfer, else on the host.
  const DType moved = element_size(self.dtype()) < element_size(src.dtype()) ? self.dtype() : src.dtype();
  if (!s.is_contiguous() || s.dtype() != moved) {
    Tensor compact = make_empty(s.sizes(), moved, src.device());
    device_copy(compact, s);
    s = compact;
  }
  const bool direct = self.is_contiguous() && self.dtype() == moved && self.sizes() == s.sizes();
  const Tensor dst = direct ? self : make_empty(s.sizes(), moved, Device::cpu());
  // A temporary `s` may be freed before the transfer ends: its block is reused only on this stream, after it.
  download(dst.data_ptr(), s.data_ptr(), s.nbytes(), non_blocking && direct,
           direct && self.is_pinned() ? self.impl()->storage()->data() : nullptr);
  if (!direct) op::copy_.call(self, dst, false);  // the CPU kernel: strides, broadcasting, dtype
}

void peer_copy(const Tensor& self, const Tensor& src) {
  const int from = src.device().index, to = self.device().index;
  Tensor s = src;
  {
    DeviceGuard guard(from);
    if (!s.is_contiguous()) s = s.contiguous();
    // The peer copy runs on the destination's stream: wait for the source's producers first.
    EMBER_CUDA_CHECK(cudaStreamSynchronize(current_cuda_stream()), "copy_");
  }
  DeviceGuard guard(to);
  const bool direct = self.is_contiguous() && self.dtype() == s.dtype() && self.sizes() == s.sizes();
  const Tensor dst = direct ? self : make_empty(s.sizes(), s.dtype(), self.device());
  if (s.nbytes() > 0) {
    EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(dst.data_ptr(), to, s.data_ptr(), from, s.nbytes(), current_cuda_stream()),
                     "copy_");
    // `s` may be a temporary of the source device, freed (and reused there) when this returns.
    EMBER_CUDA_CHECK(cudaStreamSynchronize(current_cuda_stream()), "copy_");
  }
  if (!direct) device_copy(self, dst);
}

Tensor copy_cuda(const Tensor& self, const Tensor& src, bool non_blocking) {
  EMBER_CHECK(self.defined() && src.defined(), "copy_: got an undefined tensor");
  if (self.is_same(src)) return self;
  const DimVector target = broadcast_shapes(self.sizes(), src.sizes(), "copy_");
  EMBER_CHECK(IntArrayRef(target) == self.sizes(), "copy_: source of shape ", src.sizes(),
              " can't be broadcast to the destination's shape ", self.sizes());
  if (self.numel() > 0) {
    if (self.is_cuda() && src.is_cuda()) {
      if (self.device() == src.device()) {
        DeviceGuard guard(self.device().index);
        device_copy(self, src);
      } else {
        peer_copy(self, src);
      }
    } else if (self.is_cuda()) {
      host_to_device(self, src, non_blocking);
    } else {
      device_to_host(self, src, non_blocking);
    }
  }
  bump_version(self);
  return self;
}

Tensor fill_cuda(const Tensor& self, const Scalar& value) {
  DeviceGuard guard(self.device().index);
  check_scalar_fits(value, self.dtype(), "fill_");  // Note [Scalar to dtype conversion]
  const uint64_t bits = scalar_bits(value, self.dtype());
  if (self.numel() > 0) {
    if (bits == 0 && self.is_contiguous()) {
      EMBER_CUDA_CHECK(cudaMemsetAsync(self.data_ptr(), 0, self.nbytes(), current_cuda_stream()), "fill_");
    } else {
      TensorIterator::Config c;
      c.name("fill_").output(self);
      c.common_dtype = self.dtype();
      c.check_mem_overlap = false;  // filling an expanded tensor writes one value: allowed, as in PyTorch
      CudaIterator ci = build_cuda_iterator(std::move(c));
      launch_fill(ci.args, bits);
    }
  }
  bump_version(self);
  return self;
}

Tensor clone_cuda(const Tensor& self) {
  DeviceGuard guard(self.device().index);
  Tensor out = make_empty(self.sizes(), self.dtype(), self.device());
  return op::copy_.call(out, self, false);
}

}  // namespace

void register_cuda_copy_kernels() {
  op::copy_.impl(DispatchKey::CUDA, kAllDTypes, &copy_cuda, "cuda::copy_");
  op::fill_.impl(DispatchKey::CUDA, kAllDTypes, &fill_cuda, "cuda::fill_");
  op::clone.impl(DispatchKey::CUDA, kAllDTypes, &clone_cuda, "cuda::clone");
}

}  // namespace ember::cuda
