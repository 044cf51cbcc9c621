// CPU kernels of the class-index losses: cross_entropy_loss (fused
// log-softmax + nll) and nll_loss, each with its backward.
//
// Note [Fused cross entropy]
// The input is seen as M rows of C classes (the class dim moved last and made
// contiguous; a plain (N, C) input is used as it is). For a row x with target
// t, weights w (ones when none), W = sum(w) and smoothing ls:
//   lse     = max + log(sum exp(x - max))
//   nll     = w_t (lse - x_t)
//   smooth  = W lse - sum_c w_c x_c          (only computed when ls > 0)
//   loss    = (1 - ls) nll + (ls / C) smooth
// Forward reads each row once from memory (the max pass brings it into L1;
// the exp pass and the pick of x_t read it from there). Backward writes
//   dx_c = p_c (a + b W) - b w_c - [c == t] a,   p = softmax(x)
// with a = g (1 - ls) w_t / D and b = g (ls / C) / D: again one read of the
// row and one write, exp computed once (stored, then scaled in place).
// "mean" divides both parts by D = sum of w_t over the kept targets (the
// number of kept targets without weights), as PyTorch 1.13.
// Rows marked ignore_index give 0 and a zero gradient. Rows are independent
// and folded by one thread each; the reductions over rows run in row order in
// double, so the result is the same for any thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_loss.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "core/loss_checks.h"
#include "kernels/cpu/loss/loss_rows.h"

namespace ember {

// The other files of the family (kernels/cpu/index/embedding.cpp, dropout.cpp, mse_loss.cpp).

namespace {

using loss::ClassRows;
using loss::Reduction;

constexpr int64_t kGrainElements = 32768;

int64_t row_grain(int64_t classes) { return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, classes)); }

// self (N, C, d...) or (C) as a contiguous (M, C) tensor.
Tensor as_rows(const Tensor& self, const ClassRows& g) {
  if (self.dim() <= 2) return self.reshape({g.rows, g.classes}).contiguous();
  std::vector<int64_t> perm = {0};
  for (int64_t d = 2; d < self.dim(); ++d) perm.push_back(d);
  perm.push_back(1);
  return self.permute(perm).reshape({g.rows, g.classes}).contiguous();
}

// The inverse of as_rows: (M, C) back to self's shape, contiguous.
Tensor from_rows(const Tensor& rows, const Tensor& self) {
  if (self.dim() <= 2) return rows.reshape(self.sizes());
  std::vector<int64_t> moved = {self.size(0)};
  for (int64_t d = 2; d < self.dim(); ++d) moved.push_back(self.size(d));
  moved.push_back(self.size(1));
  std::vector<int64_t> perm = {0, self.dim() - 1};
  for (int64_t d = 1; d < self.dim() - 1; ++d) perm.push_back(d);
  return rows.reshape(moved).permute(perm).contiguous();
}

// A reduced loss as a 0-d tensor of self's dtype.
Tensor reduced(double value, const Tensor& self) { return scalar_tensor(value, self.options()); }

// The weights as the row type A (null when there are none).
template <class A>
std::vector<A> weights_as(const std::optional<Tensor>& weight, const std::vector<double>& w) {
  if (!weight || !weight->defined()) return {};
  return std::vector<A>(w.begin(), w.end());
}

// Calls f(row pointer as A*) for row n of x (M, C) of type T, converting
// f16/bf16 rows into `scratch` first.
template <class T, class A, class F>
void with_row(const T* x, int64_t n, int64_t C, std::vector<A>& scratch, F&& f) {
  if constexpr (std::is_same_v<T, A>) {
    f(x + n * C);
  } else {
    scratch.resize(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) scratch[static_cast<size_t>(c)] = static_cast<A>(x[n * C + c]);
    f(scratch.data());
  }
}

void check_smoothing(double ls) {
  EMBER_CHECK(ls >= 0.0 && ls <= 1.0, "cross_entropy_loss: label_smoothing must be in [0, 1], got ", ls);
}

// ---- cross entropy ----

Tensor cross_entropy_cpu(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                         std::string_view reduction, int64_t ignore_index, double ls) {
  const char* op = "cross_entropy_loss";
  const ClassRows g = loss::check_class_target(op, self, target, weight);
  const Reduction red = loss::parse_reduction(reduction, op);
  check_smoothing(ls);
  const int64_t M = g.rows, C = g.classes;
  const Tensor tgt = target.reshape({M}).contiguous();
  const int64_t* t = tgt.data_ptr<int64_t>();
  const std::vector<double> w = loss::class_weights(weight, C);
  const double d1 = loss::checked_target_weight(op, t, M, C, ignore_index, w);
  double wsum = 0;
  for (double v : w) wsum += v;
  std::vector<double> nll(static_cast<size_t>(M)), smooth(static_cast<size_t>(M));
  const Tensor x = as_rows(self, g);
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    const std::vector<A> wa = weights_as<A>(weight, w);
    const A* wp = wa.empty() ? nullptr : wa.data();
    const T* xp = x.data_ptr<T>();
    parallel_for(0, M, row_grain(C), [&](int64_t begin, int64_t end) {
      std::vector<A> scratch;
      for (int64_t n = begin; n < end; ++n) {
        const size_t k = static_cast<size_t>(n);
        if (t[n] == ignore_index) {
          nll[k] = smooth[k] = 0;
          continue;
        }
        with_row<T, A>(xp, n, C, scratch, [&](const A* row) {
          const A m = cpu::loss_rows::row_max(row, C);
          const A lse = m + std::log(cpu::loss_rows::row_sum_exp(row, C, m, nullptr));
          nll[k] = w[static_cast<size_t>(t[n])] * static_cast<double>(lse - row[t[n]]);
          if (ls > 0) {
            smooth[k] = wsum * static_cast<double>(lse) - static_cast<double>(cpu::loss_rows::row_dot(row, wp, C));
          } else {
            smooth[k] = 0;
          }
        });
      }
    });
  });
  const double a = 1.0 - ls, b = ls / static_cast<double>(C);
  if (red == Reduction::None) {
    Tensor per_row = empty({M}, TensorOptions(DType::Float64));
    double* p = per_row.data_ptr<double>();
    for (size_t k = 0; k < nll.size(); ++k) p[k] = a * nll[k] + b * smooth[k];
    return per_row.to(self.dtype()).reshape(target.sizes());
  }
  double nll_sum = 0, smooth_sum = 0;
  for (int64_t n = 0; n < M; ++n) {
    nll_sum += nll[static_cast<size_t>(n)];
    smooth_sum += smooth[static_cast<size_t>(n)];
  }
  if (red == Reduction::Sum) return reduced(a * nll_sum + (ls > 0 ? b * smooth_sum : 0.0), self);
  return reduced((a * nll_sum + (ls > 0 ? b * smooth_sum : 0.0)) / d1, self);
}

Tensor cross_entropy_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                  const std::optional<Tensor>& weight, std::string_view reduction,
                                  int64_t ignore_index, double ls) {
  const char* op = "cross_entropy_loss_backward";
  const ClassRows g = loss::check_class_target(op, self, target, weight);
  const Reduction red = loss::parse_reduction(reduction, op);
  check_smoothing(ls);
  const int64_t M = g.rows, C = g.classes;
  if (red == Reduction::None) {
    EMBER_CHECK(grad_output.sizes() == target.sizes(), op, ": expected grad_output of shape ", target.sizes(),
                " (reduction 'none'), got ", grad_output.sizes());
  } else {
    EMBER_CHECK(grad_output.numel() == 1, op, ": expected a one-element grad_output, got ", grad_output.sizes());
  }
  const Tensor tgt = target.reshape({M}).contiguous();
  const int64_t* t = tgt.data_ptr<int64_t>();
  const std::vector<double> w = loss::class_weights(weight, C);
  const double d1 = loss::checked_target_weight(op, t, M, C, ignore_index, w);
  double wsum = 0;
  for (double v : w) wsum += v;
  const double nll_scale = (1.0 - ls) / (red == Reduction::Mean ? d1 : 1.0);
  const double smooth_scale = ls / static_cast<double>(C) / (red == Reduction::Mean ? d1 : 1.0);
  const Tensor go = grad_output.to(DType::Float64).reshape({-1}).contiguous();
  const double* gp = go.data_ptr<double>();
  const Tensor x = as_rows(self, g);
  Tensor out = empty({M, C}, self.options());
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    const std::vector<A> wa = weights_as<A>(weight, w);
    const A* wp = wa.empty() ? nullptr : wa.data();
    const T* xp = x.data_ptr<T>();
    T* op_ = out.data_ptr<T>();
    parallel_for(0, M, row_grain(C), [&](int64_t begin, int64_t end) {
      std::vector<A> scratch, e(std::is_same_v<T, A> ? 0 : static_cast<size_t>(C));
      for (int64_t n = begin; n < end; ++n) {
        T* dst = op_ + n * C;
        if (t[n] == ignore_index) {
          std::fill(dst, dst + C, T(0.0f));
          continue;
        }
        const double gn = gp[red == Reduction::None ? n : 0];
        const A a = static_cast<A>(gn * nll_scale * w[static_cast<size_t>(t[n])]);
        const A b = static_cast<A>(gn * smooth_scale);
        with_row<T, A>(xp, n, C, scratch, [&](const A* row) {
          A* ex;
          if constexpr (std::is_same_v<T, A>) ex = dst;
          else ex = e.data();
          const A m = cpu::loss_rows::row_max(row, C);
          const A s = cpu::loss_rows::row_sum_exp(row, C, m, ex);
          cpu::loss_rows::row_scale_shift(ex, C, (a + b * static_cast<A>(wsum)) / s, b, wp);
          ex[t[n]] -= a;
          if constexpr (!std::is_same_v<T, A>) {
            for (int64_t c = 0; c < C; ++c) dst[c] = static_cast<T>(ex[c]);
          }
        });
      }
    });
  });
  return from_rows(out, self);
}

// ---- nll ----

Tensor nll_loss_cpu(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                    std::string_view reduction, int64_t ignore_index) {
  const char* op = "nll_loss";
  const ClassRows g = loss::check_class_target(op, self, target, weight);
  const Reduction red = loss::parse_reduction(reduction, op);
  const int64_t M = g.rows, C = g.classes, S = g.inner;
  const Tensor tgt = target.reshape({M}).contiguous();
  const int64_t* t = tgt.data_ptr<int64_t>();
  const std::vector<double> w = loss::class_weights(weight, C);
  const double d1 = loss::checked_target_weight(op, t, M, C, ignore_index, w);
  const Tensor x = self.contiguous();
  Tensor per_row = zeros({M}, TensorOptions(DType::Float64));
  double* p = per_row.data_ptr<double>();
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    const T* xp = x.data_ptr<T>();
    for (int64_t m = 0; m < M; ++m) {
      if (t[m] == ignore_index) continue;
      const int64_t at = ((m / S) * C + t[m]) * S + m % S;
      p[m] = -w[static_cast<size_t>(t[m])] * static_cast<double>(xp[at]);
    }
  });
  if (red == Reduction::None) {
    return per_row.to(self.dtype()).reshape(target.sizes());
  }
  double sum = 0;
  for (int64_t m = 0; m < M; ++m) sum += p[m];
  return reduced(red == Reduction::Mean ? sum / d1 : sum, self);
}

Tensor nll_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight, std::string_view reduction, int64_t ignore_index) {
  const char* op = "nll_loss_backward";
  const ClassRows g = loss::check_class_target(op, self, target, weight);
  const Reduction red = loss::parse_reduction(reduction, op);
  if (red == Reduction::None) {
    EMBER_CHECK(grad_output.sizes() == target.sizes(), op, ": expected grad_output of shape ", target.sizes(),
                " (reduction 'none'), got ", grad_output.sizes());
  } else {
    EMBER_CHECK(grad_output.numel() == 1, op, ": expected a one-element grad_output, got ", grad_output.sizes());
  }
  const int64_t M = g.rows, C = g.classes, S = g.inner;
  const Tensor tgt = target.reshape({M}).contiguous();
  const int64_t* t = tgt.data_ptr<int64_t>();
  const std::vector<double> w = loss::class_weights(weight, C);
  const double d1 = loss::checked_target_weight(op, t, M, C, ignore_index, w);
  const double scale = red == Reduction::Mean ? 1.0 / d1 : 1.0;
  const Tensor go = grad_output.to(DType::Float64).reshape({-1}).contiguous();
  const double* gp = go.data_ptr<double>();
  Tensor out = zeros(self.sizes(), self.options());
  dispatch_floating(self.dtype(), op, [&]<class T>() {
    T* o = out.data_ptr<T>();
    for (int64_t m = 0; m < M; ++m) {
      if (t[m] == ignore_index) continue;
      const double gm = gp[red == Reduction::None ? m : 0];
      const double v = -w[static_cast<size_t>(t[m])] * gm * scale;
      o[((m / S) * C + t[m]) * S + m % S] = static_cast<T>(static_cast<opmath_t<T>>(v));
    }
  });
  return out;
}

}  // namespace

void register_cpu_loss_kernels() {
  op::cross_entropy_loss.impl(DispatchKey::CPU, kFloatingDTypes, &cross_entropy_cpu, "cpu::cross_entropy_loss");
  op::cross_entropy_loss_backward.impl(DispatchKey::CPU, kFloatingDTypes, &cross_entropy_backward_cpu,
                                       "cpu::cross_entropy_loss_backward");
  op::nll_loss.impl(DispatchKey::CPU, kFloatingDTypes, &nll_loss_cpu, "cpu::nll_loss");
  op::nll_loss_backward.impl(DispatchKey::CPU, kFloatingDTypes, &nll_loss_backward_cpu, "cpu::nll_loss_backward");
}

}  // namespace ember
