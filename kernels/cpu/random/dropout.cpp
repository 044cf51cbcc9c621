// CPU kernel of dropout.
//
// Note [Dropout mask from Philox]
// Element i (in the input's logical row-major order) is kept when the float
// uniform u_i >= p, where u_i is lane i % 4 of Philox block (offset + i / 4)
// of the stream `seed` (the float uniform mapping of core/philox.h), and a
// kept element is scaled by 1 / (1 - p). The mask is thus a function of
// (seed, offset, i) alone: the same for any thread count and any dtype, and
// the backward is dropout of the gradient with the same (seed, offset), so no
// mask is saved. p = 1 gives zeros (not 0 * inf); the caller reserves
// ceil(numel / 4) blocks of its generator.
#include <algorithm>

#include "core/dtype_dispatch.h"
#include "core/op_decls_loss.h"
#include "core/philox.h"
#include "ember/ops.h"
#include "ember/parallel.h"

namespace ember {

namespace {

constexpr int64_t kGrainElements = 32768;  // a multiple of 4: chunks start on a block boundary

Tensor dropout_cpu(const Tensor& self, double p, int64_t seed, int64_t offset) {
  const char* op = "dropout";
  EMBER_CHECK(p >= 0.0 && p <= 1.0, op, ": dropout probability has to be between 0 and 1, but got ", p);
  EMBER_CHECK(self.is_floating_point(), op, ": expected a floating-point input, got ", self.dtype());
  if (p == 1.0) return zeros(self.sizes(), self.options());
  const Tensor x = self.contiguous();
  Tensor out = empty(self.sizes(), self.options());
  const int64_t n = x.numel();
  const uint64_t key = static_cast<uint64_t>(seed), first_block = static_cast<uint64_t>(offset);
  const float threshold = static_cast<float>(p);
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    const A scale = static_cast<A>(1.0 / (1.0 - p));
    const T* xp = x.data_ptr<T>();
    T* o = out.data_ptr<T>();
    parallel_for(0, n, kGrainElements, [xp, o, scale, threshold, key, first_block](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; i += 4) {
        const Philox4x32 block = philox_block(key, first_block + static_cast<uint64_t>(i / 4));
        const int count = static_cast<int>(std::min<int64_t>(4, end - i));
        for (int k = 0; k < count; ++k) {
          // x * (mask * scale) as PyTorch (a dropped inf gives NaN); branch-free, since the mask is random.
          const A factor = uniform_float(block.c[k]) >= threshold ? scale : A(0);
          o[i + k] = static_cast<T>(static_cast<A>(xp[i + k]) * factor);
        }
      }
    });
  });
  return out;
}

}  // namespace

void register_cpu_dropout_kernels() {
  op::dropout.impl(DispatchKey::CPU, kFloatingDTypes, &dropout_cpu, "cpu::dropout");
}

}  // namespace ember
