// sum on CUDA: the host side of Note [CUDA sum] (kernels/cuda/cuda_reduce.cu).
// The reduced dims are brought into one block of a contiguous tensor, viewed
// as (outer, k, inner): directly when the input is contiguous and its reduced
// dims (ignoring size-1 dims) are adjacent, else through a contiguous copy of
// the input permuted to (kept dims..., reduced dims...).
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

// Temporary device buffers of one sum, freed when it returns (stream order
// makes the reuse of their blocks safe).
struct Scratch {
  int device;
  std::vector<DataPtr> buffers;
  static void* allocate(void* ctx, size_t nbytes) {
    auto* self = static_cast<Scratch*>(ctx);
    self->buffers.push_back(allocate_on_device(nbytes, self->device));
    return self->buffers.back().get();
  }
};

// The (outer, k, inner) view of contiguous `x` when its reduced dims of size > 1 are adjacent.
bool as_block(const Tensor& x, const std::vector<bool>& reduced, SumShape& shape) {
  if (!x.is_contiguous()) return false;
  int state = 0;  // 0: before the reduced block, 1: in it, 2: after it
  shape = SumShape{};
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t n = x.sizes()[d];
    if (n == 1) continue;
    if (reduced[d]) {
      if (state == 2) return false;
      state = 1;
      shape.k *= n;
    } else {
      if (state == 1) state = 2;
      (state == 0 ? shape.outer : shape.inner) *= n;
    }
  }
  return true;
}

Tensor sum_cuda(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  const int device = self.device().index;
  DeviceGuard guard(device);
  const int64_t nd = self.dim();
  std::vector<bool> reduced(static_cast<size_t>(nd), dims.empty());
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, nd, "sum");
    if (nd == 0) continue;
    EMBER_CHECK(!reduced[w], "sum: dim ", w, " appears multiple times in the list of dims ", dims);
    reduced[w] = true;
  }
  const DType out_dtype = dtype ? *dtype : (is_integral(self.dtype(), true) ? DType::Int64 : self.dtype());
  Tensor x = dtype && *dtype != self.dtype() ? self.to(*dtype) : self;  // PyTorch casts the input first

  DimVector out_sizes;
  for (int64_t d = 0; d < nd; ++d) {
    if (!reduced[d]) out_sizes.push_back(x.sizes()[d]);
    else if (keepdim) out_sizes.push_back(1);
  }

  SumShape shape;
  if (!as_block(x, reduced, shape)) {
    DimVector order;
    for (int64_t d = 0; d < nd; ++d)
      if (!reduced[d]) order.push_back(d);
    for (int64_t d = 0; d < nd; ++d)
      if (reduced[d]) order.push_back(d);
    x = x.permute(order).contiguous();
    shape = SumShape{};
    for (int64_t d = 0; d < nd; ++d) (reduced[order[d]] ? shape.k : shape.outer) *= x.sizes()[d];
  }

  const DType acc = sum_accumulate_dtype(x.dtype());
  Tensor result = make_empty(out_sizes, acc, self.device());
  Scratch scratch{device, {}};
  launch_sum(x.data_ptr(), x.dtype(), result.data_ptr(), shape, device, &Scratch::allocate, &scratch);
  return acc == out_dtype ? result : result.to(out_dtype);
}

}  // namespace

void register_cuda_reduce_kernels() { op::sum.impl(DispatchKey::CUDA, kAllDTypes, &sum_cuda, "cuda::sum"); }

}  // namespace ember::cuda
