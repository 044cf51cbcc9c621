// CPU kernels of the fused optimiser updates (core/op_decls_optim.h).
//
// Each kernel follows the per-element arithmetic of PyTorch 1.13's
// single-tensor optimisers, in the parameter's dtype and in the same order
// (the golden trajectories, tests/golden_optim.cpp, match torch's bit for bit):
//   - `x.add(y, alpha=a)` is fma(y, a, x), as torch's vectorised add;
//   - `x.addcmul(y, z, value=v)` is fma(v * y, z, x): torch writes
//     x + v * y * z, which its compiler contracts to that;
//   - `x.addcdiv(y, z, value=v)` is x + (v * y) / z;
//   - Python-float hyperparameters are rounded to the dtype where torch
//     passes them to a tensor op; bias corrections and step sizes are
//     computed in double, once per tensor, as Python does.
// The loop (chunks over the concatenated tensors, SIMD blocks with a masked
// tail) is in kernels/cpu/optim/optim_foreach.h.
#include <cmath>
#include <cstdint>

// Only the fma() calls below fuse a multiply and an add, where torch's
// kernels do (above); elsewhere torch rounds after each op, and a contracted
// `a * b + c` would differ from it in the last bit. (GCC contracts by
// default in C++, across SIMD intrinsics too: CMakeLists.txt compiles this
// file with -ffp-contract=off.)

#include "core/op_decls_optim.h"
#include "core/tensor_util.h"
#include "kernels/cpu/optim/optim_foreach.h"

namespace ember {

namespace {

using cpu::for_each_block;
using cpu::for_each_piece;
using cpu::Lanes;
namespace vec = cpu::vec;

// params: contiguous floating tensors of one dtype.
void check_params(const char* op, const TensorList& params) {
  EMBER_CHECK(!params.empty(), op, ": expected at least one parameter");
  for (size_t t = 0; t < params.size(); ++t) {
    const Tensor& p = params[t];
    EMBER_CHECK(p.defined(), op, ": params[", t, "] is undefined");
    EMBER_CHECK(p.dtype() == params[0].dtype(), op, ": params[", t, "] is ", p.dtype(), " but params[0] is ",
                params[0].dtype(), " (a group's update runs in one dtype)");
    EMBER_CHECK(p.is_contiguous(), op, ": params[", t, "] of shape ", p.sizes(), " is not contiguous");
    EMBER_CHECK(!p.is_cuda(), op, ": params[", t, "] is on ", p.device(), ", expected the CPU");
  }
}

// A gradient or state list: one contiguous tensor per parameter, of its shape
// and dtype; or empty when the configuration does not use it.
void check_list(const char* op, const char* name, const TensorList& list, const TensorList& params, bool used) {
  if (!used) {
    EMBER_CHECK(list.empty(), op, ": expected no ", name, " for this configuration, got ", list.size());
    return;
  }
  EMBER_CHECK(list.size() == params.size(), op, ": expected one entry of ", name, " per parameter (", params.size(),
              "), got ", list.size());
  for (size_t t = 0; t < list.size(); ++t) {
    const Tensor& x = list[t];
    EMBER_CHECK(x.defined(), op, ": ", name, "[", t, "] is undefined");
    EMBER_CHECK(x.sizes() == params[t].sizes() && x.dtype() == params[t].dtype(), op, ": ", name, "[", t, "] is ",
                x.dtype(), " ", x.sizes(), ", expected the parameter's ", params[t].dtype(), " ", params[t].sizes());
    EMBER_CHECK(x.is_contiguous() && !x.is_cuda(), op, ": ", name, "[", t, "] must be a contiguous CPU tensor");
  }
}

void check_counts(const char* op, const char* name, IntArrayRef counts, const TensorList& params) {
  EMBER_CHECK(counts.size() == params.size(), op, ": expected one entry of ", name, " per parameter (", params.size(),
              "), got ", counts.size());
}

void bump_versions(const TensorList& list) {
  for (const Tensor& t : list) bump_version(t);
}

// The kernels are registered for float32 and float64 only, so the dispatcher
// never calls them with another dtype.
template <class F>
void run_in_dtype(DType t, F&& f) {
  if (t == DType::Float64)
    f.template operator()<double>();
  else
    f.template operator()<float>();
}

// Element pointer of tensor t of a list, or null for an unused (empty) list.
template <class T>
T* data_of(const TensorList& list, size_t t) {
  return list.empty() ? nullptr : list[t].data_ptr<T>();
}

// ---- SGD ----
// d = ±grad (+ wd * p); buf = d (fresh) or momentum * buf + (1 - dampening) * d;
// d = d + momentum * buf (nesterov) or buf; p -= lr * d.
TensorList fused_sgd_cpu(const TensorList& params, const TensorList& grads, const TensorList& momentum_buffers,
                         IntArrayRef new_buffers, double lr, double momentum, double dampening, double weight_decay,
                         bool nesterov, bool maximize) {
  const char* op = "_fused_sgd_";
  const bool use_momentum = momentum != 0;
  check_params(op, params);
  check_list(op, "grads", grads, params, true);
  check_list(op, "momentum_buffers", momentum_buffers, params, use_momentum);
  if (use_momentum) check_counts(op, "new_buffers", new_buffers, params);
  run_in_dtype(params[0].dtype(), [&]<class T>() {
    using V = Lanes<T>;
    const V wd(static_cast<T>(weight_decay)), mom(static_cast<T>(momentum)), keep(static_cast<T>(1 - dampening)),
        neg_lr(static_cast<T>(-lr));
    for_each_piece(params, [&](size_t t, int64_t begin, int64_t end) {
      T* p = params[t].data_ptr<T>();
      const T* g = grads[t].data_ptr<T>();
      T* buf = data_of<T>(momentum_buffers, t);
      const bool fresh = use_momentum && new_buffers[t] != 0;
      for_each_block<T>(begin, end, [&](int64_t i, auto block) {
        const V pv = block.load(p + i);
        V d = block.load(g + i);
        if (maximize) d = -d;
        if (weight_decay != 0) d = vec::fma(pv, wd, d);
        if (use_momentum) {
          const V b = fresh ? d : vec::fma(d, keep, block.load(buf + i) * mom);
          block.store(b, buf + i);
          d = nesterov ? vec::fma(b, mom, d) : b;
        }
        block.store(vec::fma(d, neg_lr, pv), p + i);
      });
    });
  });
  bump_versions(params);
  bump_versions(momentum_buffers);
  return params;
}

// ---- Adam and AdamW ----
// g = ±grad (+ wd * p unless decoupled); p *= 1 - lr * wd (decoupled);
// m = beta1 m + (1 - beta1) g; v = beta2 v + (1 - beta2) g g; vmax = max(vmax, v) (amsgrad);
// p -= (lr / bc1) m / (sqrt(v or vmax) / sqrt(bc2) + eps), bc_k = 1 - beta_k^step.
TensorList fused_adam_cpu(const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                          const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, IntArrayRef steps,
                          double lr, double beta1, double beta2, double weight_decay, double eps, bool amsgrad,
                          bool maximize, bool decoupled) {
  const char* op = "_fused_adam_";
  check_params(op, params);
  check_list(op, "grads", grads, params, true);
  check_list(op, "exp_avgs", exp_avgs, params, true);
  check_list(op, "exp_avg_sqs", exp_avg_sqs, params, true);
  check_list(op, "max_exp_avg_sqs", max_exp_avg_sqs, params, amsgrad);
  check_counts(op, "steps", steps, params);
  for (size_t t = 0; t < steps.size(); ++t)
    EMBER_CHECK(steps[t] >= 1, op, ": steps[", t, "] is ", steps[t], ", expected >= 1");
  run_in_dtype(params[0].dtype(), [&]<class T>() {
    using V = Lanes<T>;
    const V b1(static_cast<T>(beta1)), one_minus_b1(static_cast<T>(1 - beta1)), b2(static_cast<T>(beta2)),
        one_minus_b2(static_cast<T>(1 - beta2)), wd(static_cast<T>(weight_decay)),
        decay(static_cast<T>(1 - lr * weight_decay)), epsilon(static_cast<T>(eps));
    const bool coupled_decay = !decoupled && weight_decay != 0;
    for_each_piece(params, [&](size_t t, int64_t begin, int64_t end) {
      const double step = static_cast<double>(steps[t]);
      const double bias_correction1 = 1 - std::pow(beta1, step);
      const V bias_correction2_sqrt(static_cast<T>(std::sqrt(1 - std::pow(beta2, step))));
      const V neg_step_size(static_cast<T>(-(lr / bias_correction1)));
      T* p = params[t].data_ptr<T>();
      const T* g = grads[t].data_ptr<T>();
      T* m = exp_avgs[t].data_ptr<T>();
      T* v = exp_avg_sqs[t].data_ptr<T>();
      T* vmax = data_of<T>(max_exp_avg_sqs, t);
      for_each_block<T>(begin, end, [&](int64_t i, auto block) {
        V pv = block.load(p + i);
        V gv = block.load(g + i);
        if (maximize) gv = -gv;
        if (coupled_decay) gv = vec::fma(pv, wd, gv);
        if (decoupled) pv = pv * decay;
        const V mv = vec::fma(gv, one_minus_b1, block.load(m + i) * b1);
        const V vv = vec::fma(one_minus_b2 * gv, gv, block.load(v + i) * b2);
        V second = vv;
        if (amsgrad) {
          second = vec::max(block.load(vmax + i), vv);
          block.store(second, vmax + i);
        }
        const V denom = vec::sqrt(second) / bias_correction2_sqrt + epsilon;
        block.store(pv + neg_step_size * mv / denom, p + i);
        block.store(mv, m + i);
        block.store(vv, v + i);
      });
    });
  });
  bump_versions(params);
  bump_versions(exp_avgs);
  bump_versions(exp_avg_sqs);
  bump_versions(max_exp_avg_sqs);
  return params;
}

// ---- RMSprop ----
// g = ±grad (+ wd * p); s = alpha s + (1 - alpha) g g;
// centered: a = alpha a + (1 - alpha) g, avg = sqrt(s - a a); else avg = sqrt(s); avg += eps;
// momentum: buf = momentum buf + g / avg, p -= lr buf; else p -= lr g / avg.
TensorList fused_rmsprop_cpu(const TensorList& params, const TensorList& grads, const TensorList& square_avgs,
                             const TensorList& grad_avgs, const TensorList& momentum_buffers, double lr, double alpha,
                             double eps, double weight_decay, double momentum, bool centered, bool maximize) {
  const char* op = "_fused_rmsprop_";
  const bool use_momentum = momentum > 0;
  check_params(op, params);
  check_list(op, "grads", grads, params, true);
  check_list(op, "square_avgs", square_avgs, params, true);
  check_list(op, "grad_avgs", grad_avgs, params, centered);
  check_list(op, "momentum_buffers", momentum_buffers, params, use_momentum);
  run_in_dtype(params[0].dtype(), [&]<class T>() {
    using V = Lanes<T>;
    const V a(static_cast<T>(alpha)), one_minus_a(static_cast<T>(1 - alpha)), wd(static_cast<T>(weight_decay)),
        epsilon(static_cast<T>(eps)), mom(static_cast<T>(momentum)), neg_lr(static_cast<T>(-lr));
    for_each_piece(params, [&](size_t t, int64_t begin, int64_t end) {
      T* p = params[t].data_ptr<T>();
      const T* g = grads[t].data_ptr<T>();
      T* sq = square_avgs[t].data_ptr<T>();
      T* ga = data_of<T>(grad_avgs, t);
      T* buf = data_of<T>(momentum_buffers, t);
      for_each_block<T>(begin, end, [&](int64_t i, auto block) {
        const V pv = block.load(p + i);
        V gv = block.load(g + i);
        if (maximize) gv = -gv;
        if (weight_decay != 0) gv = vec::fma(pv, wd, gv);
        const V s = vec::fma(one_minus_a * gv, gv, block.load(sq + i) * a);
        block.store(s, sq + i);
        V avg;
        if (centered) {
          const V mean = vec::fma(gv, one_minus_a, block.load(ga + i) * a);
          block.store(mean, ga + i);
          avg = vec::sqrt(vec::fma(-mean, mean, s));  // s.addcmul(mean, mean, value=-1)
        } else {
          avg = vec::sqrt(s);
        }
        avg = avg + epsilon;
        if (use_momentum) {
          const V b = block.load(buf + i) * mom + gv / avg;
          block.store(b, buf + i);
          block.store(vec::fma(b, neg_lr, pv), p + i);
        } else {
          block.store(pv + neg_lr * gv / avg, p + i);
        }
      });
    });
  });
  bump_versions(params);
  bump_versions(square_avgs);
  bump_versions(grad_avgs);
  bump_versions(momentum_buffers);
  return params;
}

// ---- Adagrad ----
// g = ±grad (+ wd * p); sum += g g; p -= clr g / (sqrt(sum) + eps), clr = lr / (1 + (step - 1) lr_decay).
TensorList fused_adagrad_cpu(const TensorList& params, const TensorList& grads, const TensorList& state_sums,
                             IntArrayRef steps, double lr, double lr_decay, double weight_decay, double eps,
                             bool maximize) {
  const char* op = "_fused_adagrad_";
  check_params(op, params);
  check_list(op, "grads", grads, params, true);
  check_list(op, "state_sums", state_sums, params, true);
  check_counts(op, "steps", steps, params);
  for (size_t t = 0; t < steps.size(); ++t)
    EMBER_CHECK(steps[t] >= 1, op, ": steps[", t, "] is ", steps[t], ", expected >= 1");
  run_in_dtype(params[0].dtype(), [&]<class T>() {
    using V = Lanes<T>;
    const V wd(static_cast<T>(weight_decay)), epsilon(static_cast<T>(eps));
    for_each_piece(params, [&](size_t t, int64_t begin, int64_t end) {
      const double clr = lr / (1 + (static_cast<double>(steps[t]) - 1) * lr_decay);
      const V neg_clr(static_cast<T>(-clr));
      T* p = params[t].data_ptr<T>();
      const T* g = grads[t].data_ptr<T>();
      T* sum = state_sums[t].data_ptr<T>();
      for_each_block<T>(begin, end, [&](int64_t i, auto block) {
        const V pv = block.load(p + i);
        V gv = block.load(g + i);
        if (maximize) gv = -gv;
        if (weight_decay != 0) gv = vec::fma(pv, wd, gv);
        const V s = vec::fma(gv, gv, block.load(sum + i));  // sum.addcmul_(g, g, value=1)
        block.store(s, sum + i);
        block.store(pv + neg_clr * gv / (vec::sqrt(s) + epsilon), p + i);
      });
    });
  });
  bump_versions(params);
  bump_versions(state_sums);
  return params;
}

}  // namespace

void register_cpu_optim_kernels() {
  const auto dtypes = {DType::Float32, DType::Float64};
  op::_fused_sgd_.impl(DispatchKey::CPU, dtypes, &fused_sgd_cpu, "cpu::fused_sgd");
  op::_fused_adam_.impl(DispatchKey::CPU, dtypes, &fused_adam_cpu, "cpu::fused_adam");
  op::_fused_rmsprop_.impl(DispatchKey::CPU, dtypes, &fused_rmsprop_cpu, "cpu::fused_rmsprop");
  op::_fused_adagrad_.impl(DispatchKey::CPU, dtypes, &fused_adagrad_cpu, "cpu::fused_adagrad");
}

}  // namespace ember
