// uniform_, normal_ and random_ on CPU: Philox fills (core/random_fill.h).
// Contiguous float32/float64 (and int64 for random_) tensors are filled in
// place; other dtypes and layouts are filled through a contiguous temporary.
#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/random_fill.h"
#include "core/tensor_util.h"

namespace ember {
namespace {

template <class Fill>
Tensor fill_floating(const Tensor& self, const char* name, Fill fill) {
  EMBER_CHECK(is_floating_point(self.dtype()), name, ": expected a floating-point tensor, got ", self.dtype());
  const DType gen_dtype = self.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  const bool direct = self.is_contiguous() && self.dtype() == gen_dtype;
  Tensor target = direct ? self : make_empty({self.numel()}, gen_dtype, Device::cpu());
  if (gen_dtype == DType::Float64) fill(static_cast<double*>(target.data_ptr()), self.numel());
  else fill(static_cast<float*>(target.data_ptr()), self.numel());
  if (!direct) op::copy_.call(self, target.view(self.sizes()), false);
  bump_version(self);
  return self;
}

Tensor uniform_cpu(const Tensor& self, double low, double high, int64_t seed, int64_t offset) {
  return fill_floating(self, "uniform_", [&](auto* p, int64_t n) {
    cpu::fill_uniform(p, n, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset), low, high);
  });
}

Tensor normal_cpu(const Tensor& self, double mean, double std, int64_t seed, int64_t offset) {
  return fill_floating(self, "normal_", [&](auto* p, int64_t n) {
    cpu::fill_normal(p, n, static_cast<uint64_t>(seed), static_cast<uint64_t>(offset), mean, std);
  });
}

Tensor random_cpu(const Tensor& self, int64_t low, int64_t high, int64_t seed, int64_t offset) {
  EMBER_CHECK(low < high, "random_: expected low < high, got ", low, " and ", high);
  const bool direct = self.is_contiguous() && self.dtype() == DType::Int64;
  Tensor target = direct ? self : make_empty({self.numel()}, DType::Int64, Device::cpu());
  cpu::fill_randint(target.data_ptr<int64_t>(), self.numel(), static_cast<uint64_t>(seed),
                    static_cast<uint64_t>(offset), low, high);
  if (!direct) op::copy_.call(self, target.view(self.sizes()), false);
  bump_version(self);
  return self;
}

}  // namespace

void register_cpu_random_kernels() {
  op::uniform_.impl(DispatchKey::CPU, kFloatingDTypes, &uniform_cpu, "cpu::uniform_");
  op::normal_.impl(DispatchKey::CPU, kFloatingDTypes, &normal_cpu, "cpu::normal_");
  op::random_.impl(DispatchKey::CPU, kNumericDTypes, &random_cpu, "cpu::random_");
}

}  // namespace ember
