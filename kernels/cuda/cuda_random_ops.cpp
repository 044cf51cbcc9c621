// uniform_, normal_ and random_ on CUDA: Philox fills that match the CPU ones
// element for element (kernels/cuda/cuda_random.cu). As on the CPU, contiguous
// float32/float64 (int64 for random_) tensors are filled in place, others
// through a contiguous temporary and copy_.
#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

template <class Fill>
Tensor fill_floating(const Tensor& self, const char* name, Fill fill) {
  EMBER_CHECK(is_floating_point(self.dtype()), name, ": expected a floating-point tensor, got ", self.dtype());
  const int device = self.device().index;
  DeviceGuard guard(device);
  const DType gen_dtype = self.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const bool direct = self.is_contiguous() && self.dtype() == gen_dtype;
  Tensor target = direct ? self : make_empty({self.numel()}, gen_dtype, self.device());
  if (gen_dtype == DType::Float64) fill(static_cast<double*>(target.data_ptr()), self.numel(), device);
  else fill(static_cast<float*>(target.data_ptr()), self.numel(), device);
  if (!direct) op::copy_.call(self, target.view(self.sizes()), false);
  bump_version(self);
  return self;
}

Tensor uniform_cuda(const Tensor& self, double low, double high, int64_t seed, int64_t offset) {
  return fill_floating(self, "uniform_", [&](auto* p, int64_t n, int device) {
    launch_uniform(p, n, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset), low, high, device);
  });
}

Tensor normal_cuda(const Tensor& self, double mean, double std, int64_t seed, int64_t offset) {
  return fill_floating(self, "normal_", [&](auto* p, int64_t n, int device) {
    launch_normal(p, n, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset), mean, std, device);
  });
}

Tensor random_cuda(const Tensor& self, int64_t low, int64_t high, int64_t seed, int64_t offset) {
  EMBER_CHECK(low < high, "random_: expected low < high, got ", low, " and ", high);
  const int device = self.device().index;
  DeviceGuard guard(device);
  const bool direct = self.is_contiguous() && self.dtype() == DType::Int64;
  Tensor target = direct ? self : make_empty({self.numel()}, DType::Int64, self.device());
  launch_randint(static_cast<int64_t*>(target.data_ptr()), self.numel(), static_cast<uint64_t>(seed),
                 static_cast<uint64_t>(offset), low, high, device);
  if (!direct) op::copy_.call(self, target.view(self.sizes()), false);
  bump_version(self);
  return self;
}

}  // namespace

void register_cuda_random_kernels() {
  op::uniform_.impl(DispatchKey::CUDA, kFloatingDTypes, &uniform_cuda, "cuda::uniform_");
  op::normal_.impl(DispatchKey::CUDA, kFloatingDTypes, &normal_cuda, "cuda::normal_");
  op::random_.impl(DispatchKey::CUDA, kNumericDTypes, &random_cuda, "cuda::random_");
}

}  // namespace ember::cuda
