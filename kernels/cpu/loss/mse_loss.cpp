// CPU kernels of mse_loss and its backward.
//
// Note [One-pass mse_loss]
// The composite (self - target), its square and a mean would make three
// passes and two temporaries; this kernel reads both inputs once. "none"
// writes (x - y)^2 elementwise. "mean"/"sum" cut the elements into fixed
// chunks of kChunk; each chunk sums its squares (float32 on SIMD lanes with
// four accumulators, float64 plainly, half types widened to float32) and the
// chunk partials are added in chunk order in double, so the bits do not
// depend on the thread count. Backward is c g (x - y) with c = 2 (or 2 / n
// for "mean"), one pass.
#include <algorithm>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_loss.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "core/loss_checks.h"
#include "kernels/cpu/vec/vec.h"

namespace ember {

namespace {

using loss::Reduction;
using cpu::vec::VecF;

constexpr int64_t kChunk = 32768;

void check_pair(const char* op, const Tensor& self, const Tensor& target) {
  EMBER_CHECK(self.is_floating_point() && target.dtype() == self.dtype(), op,
              ": expected a floating-point input and a target of the same dtype, got ", self.dtype(), " and ",
              target.dtype());
  EMBER_CHECK(self.sizes() == target.sizes(), op, ": expected a target of the input's shape ", self.sizes(), ", got ",
              target.sizes());
}

// sum of (x - y)^2 over [0, n).
double sum_squares(const float* x, const float* y, int64_t n) {
  constexpr int L = VecF::kLanes;
  VecF s[4] = {VecF(0.0f), VecF(0.0f), VecF(0.0f), VecF(0.0f)};
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    for (int k = 0; k < 4; ++k) {
      const VecF d = VecF::load(x + i + k * L) - VecF::load(y + i + k * L);
      s[k] = cpu::vec::fma(d, d, s[k]);
    }
  }
  for (; i + L <= n; i += L) {
    const VecF d = VecF::load(x + i) - VecF::load(y + i);
    s[0] = cpu::vec::fma(d, d, s[0]);
  }
  float lanes[L];
  ((s[0] + s[1]) + (s[2] + s[3])).store(lanes);
  double total = 0;
  for (int k = 0; k < L; ++k) total += lanes[k];
  for (; i < n; ++i) {
    const float d = x[i] - y[i];
    total += static_cast<double>(d * d);
  }
  return total;
}
template <class T>
double sum_squares(const T* x, const T* y, int64_t n) {
  using A = opmath_t<T>;
  A total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const A d = static_cast<A>(x[i]) - static_cast<A>(y[i]);
    total += d * d;
  }
  return static_cast<double>(total);
}

Tensor mse_loss_cpu(const Tensor& self, const Tensor& target, std::string_view reduction) {
  const char* op = "mse_loss";
  check_pair(op, self, target);
  const Reduction red = loss::parse_reduction(reduction, op);
  const Tensor x = self.contiguous(), y = target.contiguous();
  const int64_t n = x.numel();
  if (red == Reduction::None) {
    Tensor out = empty(self.sizes(), self.options());
    dispatch_floating(self.dtype(), op, [&]<class T>() {
      using A = opmath_t<T>;
      const T* xp = x.data_ptr<T>();
      const T* yp = y.data_ptr<T>();
      T* o = out.data_ptr<T>();
      parallel_for(0, n, kChunk, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const A d = static_cast<A>(xp[i]) - static_cast<A>(yp[i]);
          o[i] = static_cast<T>(d * d);
        }
      });
    });
    return out;
  }
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(chunks), 0.0);
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    const T* xp = x.data_ptr<T>();
    const T* yp = y.data_ptr<T>();
    parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t lo = c * kChunk, len = std::min(kChunk, n - lo);
        partial[static_cast<size_t>(c)] = sum_squares(xp + lo, yp + lo, len);
      }
    });
  });
  double total = 0;
  for (double v : partial) total += v;
  if (red == Reduction::Mean) total /= static_cast<double>(n);
  return scalar_tensor(total, self.options());
}

Tensor mse_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             std::string_view reduction) {
  const char* op = "mse_loss_backward";
  check_pair(op, self, target);
  const Reduction red = loss::parse_reduction(reduction, op);
  const bool none = red == Reduction::None;
  EMBER_CHECK(none ? grad_output.sizes() == self.sizes() : grad_output.numel() == 1, op, ": expected grad_output of ",
              none ? "the input's shape" : "one element", ", got ", grad_output.sizes());
  const Tensor x = self.contiguous(), y = target.contiguous();
  const Tensor g = grad_output.to(self.dtype()).contiguous();
  const int64_t n = x.numel();
  const double scale = red == Reduction::Mean ? 2.0 / static_cast<double>(n) : 2.0;
  Tensor out = empty(self.sizes(), self.options());
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    const T* xp = x.data_ptr<T>();
    const T* yp = y.data_ptr<T>();
    const T* gp = g.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const A c = static_cast<A>(scale);
    const A g0 = none ? A(0) : static_cast<A>(gp[0]) * c;
    parallel_for(0, n, kChunk, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const A k = none ? static_cast<A>(gp[i]) * c : g0;
        o[i] = static_cast<T>(k * (static_cast<A>(xp[i]) - static_cast<A>(yp[i])));
      }
    });
  });
  return out;
}

}  // namespace

void register_cpu_mse_loss_kernels() {
  op::mse_loss.impl(DispatchKey::CPU, kFloatingDTypes, &mse_loss_cpu, "cpu::mse_loss");
  op::mse_loss_backward.impl(DispatchKey::CPU, kFloatingDTypes, &mse_loss_backward_cpu, "cpu::mse_loss_backward");
}

}  // namespace ember
