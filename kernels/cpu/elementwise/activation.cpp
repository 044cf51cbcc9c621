// Activation functions on CPU: leaky_relu, elu, hardswish, hardsigmoid, mish,
// log_sigmoid, and a fused backward kernel for each.
//
// Note [Activation kernels]
// Each op is one pass through the TensorIterator (core/tensor_iterator.h):
// forward maps x to f(x), backward maps (grad, x) to grad * f'(x) in the same
// single pass, so a backward reads two arrays and writes one, instead of the
// three or four passes the same formula written with ember ops would take.
// float32 math is written once as a template over the lane type (float or
// vec::VecF), so contiguous runs take the SIMD form and strided runs the
// scalar form of the same expression, giving the same bits. The smooth
// functions reuse the accuracy-tested building blocks of kernels/cpu/vec/vec_math.h
// (expm1, exp, log1p, tanh, softplus, sigmoid). float64 uses the C library;
// float16/bfloat16 compute in float32 and round once. The formulas, and the
// values at the kinks (leaky_relu at 0, hardswish at +-3), follow PyTorch 1.13.
#include <cmath>

#include "core/op_decls_activation.h"
#include "kernels/cpu/elementwise/loops.h"
#include "kernels/cpu/vec/vec_math.h"

namespace ember {
namespace {

namespace vec = cpu::vec;

// out = f(x): `vf` takes float or VecF, `df` takes double.
template <class VF, class DF>
Tensor forward(const char* name, const Tensor& self, VF vf, DF df) {
  TensorIterator it = TensorIterator::unary(name, Tensor(), self);
  switch (it.common_dtype()) {
    case DType::Float32:
      cpu::cpu_kernel_vec(it, [vf](float x) -> float { return vf(x); }, [vf](vec::VecF x) { return vf(x); });
      break;
    case DType::Float64: cpu::cpu_kernel(it, [df](double x) -> double { return df(x); }); break;
    case DType::Float16:
      cpu::cpu_kernel(it, [vf](Half x) -> Half { return Half(vf(static_cast<float>(x))); });
      break;
    case DType::BFloat16:
      cpu::cpu_kernel(it, [vf](BFloat16 x) -> BFloat16 { return BFloat16(vf(static_cast<float>(x))); });
      break;
    default: EMBER_FAIL(name, ": expected a floating-point tensor, got ", it.common_dtype());
  }
  return it.output();
}

// grad_input = b(grad, x): `vb` takes (float, float) or (VecF, VecF), `db` doubles.
template <class VB, class DB>
Tensor backward(const char* name, const Tensor& grad, const Tensor& self, VB vb, DB db) {
  EMBER_CHECK(grad.sizes() == self.sizes(), name, ": grad_output of shape ", grad.sizes(),
              " does not match the input's shape ", self.sizes());
  TensorIterator it = TensorIterator::binary(name, Tensor(), grad, self);
  switch (it.common_dtype()) {
    case DType::Float32:
      cpu::cpu_kernel_vec(
          it, [vb](float g, float x) -> float { return vb(g, x); },
          [vb](vec::VecF g, vec::VecF x) { return vb(g, x); });
      break;
    case DType::Float64: cpu::cpu_kernel(it, [db](double g, double x) -> double { return db(g, x); }); break;
    case DType::Float16:
      cpu::cpu_kernel(it, [vb](Half g, Half x) -> Half {
        return Half(vb(static_cast<float>(g), static_cast<float>(x)));
      });
      break;
    case DType::BFloat16:
      cpu::cpu_kernel(it, [vb](BFloat16 g, BFloat16 x) -> BFloat16 {
        return BFloat16(vb(static_cast<float>(g), static_cast<float>(x)));
      });
      break;
    default: EMBER_FAIL(name, ": expected floating-point tensors, got ", it.common_dtype());
  }
  return it.output();
}

// ---- leaky_relu: x > 0 ? x : slope * x; the gradient at 0 is slope, as in PyTorch ----

Tensor leaky_relu_cpu(const Tensor& self, const Scalar& slope) {
  const float s = slope.to<float>();
  const double sd = slope.to_double();
  return forward(
      "leaky_relu", self,
      [s](auto x) {
        using X = decltype(x);
        return vec::blend(x > X(0.0f), x, x * X(s));
      },
      [sd](double x) { return x > 0 ? x : x * sd; });
}

Tensor leaky_relu_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& slope) {
  const float s = slope.to<float>();
  const double sd = slope.to_double();
  return backward(
      "leaky_relu_backward", grad, self,
      [s](auto g, auto x) {
        using X = decltype(x);
        return vec::blend(x > X(0.0f), g, g * X(s));
      },
      [sd](double g, double x) { return x > 0 ? g : g * sd; });
}

// ---- elu: x > 0 ? x : alpha (e^x - 1), with expm1 for accuracy near 0 ----

Tensor elu_cpu(const Tensor& self, const Scalar& alpha) {
  const float a = alpha.to<float>();
  const double ad = alpha.to_double();
  return forward(
      "elu", self,
      [a](auto x) {
        using X = decltype(x);
        return vec::blend(x <= X(0.0f), vec::expm1(x) * X(a), x);
      },
      [ad](double x) { return x <= 0 ? std::expm1(x) * ad : x; });
}

Tensor elu_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& alpha) {
  const float a = alpha.to<float>();
  const double ad = alpha.to_double();
  return backward(
      "elu_backward", grad, self,
      [a](auto g, auto x) {
        using X = decltype(x);
        return vec::blend(x <= X(0.0f), g * (vec::exp(x) * X(a)), g);
      },
      [ad](double g, double x) { return x <= 0 ? g * (std::exp(x) * ad) : g; });
}

// ---- hardswish: x * clamp(x + 3, 0, 6) / 6; gradient x/3 + 1/2 on [-3, 3] ----

Tensor hardswish_cpu(const Tensor& self) {
  return forward(
      "hardswish", self,
      [](auto x) {
        using X = decltype(x);
        return x * vec::min(vec::max(x + X(3.0f), X(0.0f)), X(6.0f)) / X(6.0f);
      },
      [](double x) { return x * vec::min(vec::max(x + 3.0, 0.0), 6.0) / 6.0; });
}

// PyTorch's branches: 0 below -3, x/3 + 1/2 on [-3, 3] (both ends included), 1 above.
Tensor hardswish_backward_cpu(const Tensor& grad, const Tensor& self) {
  return backward(
      "hardswish_backward", grad, self,
      [](auto g, auto x) {
        using X = decltype(x);
        const X mid = g * (x / X(3.0f) + X(0.5f));
        return vec::blend(x < X(-3.0f), X(0.0f), vec::blend(x <= X(3.0f), mid, g));
      },
      [](double g, double x) { return x < -3.0 ? 0.0 : (x <= 3.0 ? g * (x / 3.0 + 0.5) : g); });
}

// ---- hardsigmoid: clamp(x + 3, 0, 6) / 6; gradient 1/6 strictly inside (-3, 3) ----

Tensor hardsigmoid_cpu(const Tensor& self) {
  return forward(
      "hardsigmoid", self,
      [](auto x) {
        using X = decltype(x);
        return vec::min(vec::max(x + X(3.0f), X(0.0f)), X(6.0f)) / X(6.0f);
      },
      [](double x) { return vec::min(vec::max(x + 3.0, 0.0), 6.0) / 6.0; });
}

Tensor hardsigmoid_backward_cpu(const Tensor& grad, const Tensor& self) {
  return backward(
      "hardsigmoid_backward", grad, self,
      [](auto g, auto x) {
        using X = decltype(x);
        return vec::blend((x > X(-3.0f)) & (x < X(3.0f)), g * X(1.0f / 6.0f), X(0.0f));
      },
      [](double g, double x) { return x > -3.0 && x < 3.0 ? g * (1.0 / 6.0) : 0.0; });
}

// ---- mish: x tanh(softplus(x)) ----
// d/dx = t + x s (1 - t^2), with t = tanh(softplus(x)) and s = sigmoid(x).

double softplus_d(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

Tensor mish_cpu(const Tensor& self) {
  return forward(
      "mish", self, [](auto x) { return x * vec::tanh(vec::softplus(x)); },
      [](double x) { return x * std::tanh(softplus_d(x)); });
}

Tensor mish_backward_cpu(const Tensor& grad, const Tensor& self) {
  return backward(
      "mish_backward", grad, self,
      [](auto g, auto x) {
        using X = decltype(x);
        const X t = vec::tanh(vec::softplus(x));
        const X s = vec::sigmoid(x);
        return g * vec::fma(x * s, X(1.0f) - t * t, t);
      },
      [](double g, double x) {
        const double t = std::tanh(softplus_d(x)), s = 1.0 / (1.0 + std::exp(-x));
        return g * (t + x * s * (1.0 - t * t));
      });
}

// ---- log_sigmoid: min(x, 0) - log1p(e^-|x|), which never overflows; d/dx = sigmoid(-x) ----

Tensor log_sigmoid_cpu(const Tensor& self) {
  return forward(
      "log_sigmoid", self,
      [](auto x) {
        using X = decltype(x);
        return vec::min(x, X(0.0f)) - vec::log1p(vec::exp(-vec::abs(x)));
      },
      [](double x) { return vec::min(x, 0.0) - std::log1p(std::exp(-std::fabs(x))); });
}

Tensor log_sigmoid_backward_cpu(const Tensor& grad, const Tensor& self) {
  return backward(
      "log_sigmoid_backward", grad, self, [](auto g, auto x) { return g * vec::sigmoid(-x); },
      [](double g, double x) {
        const double e = std::exp(-std::fabs(x));  // sigmoid(-x) without overflow
        return g * (x < 0 ? 1.0 : e) / (1.0 + e);
      });
}

// ---- threshold_backward: grad where x > threshold, else 0 (relu's backward with threshold 0) ----

Tensor threshold_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  const float t = threshold.to<float>();
  const double td = threshold.to_double();
  return backward(
      "threshold_backward", grad, self,
      [t](auto g, auto x) {
        using X = decltype(x);
        return vec::blend(x > X(t), g, X(0.0f));
      },
      [td](double g, double x) { return x > td ? g : 0.0; });
}

}  // namespace

void register_cpu_activation_kernels() {
  op::leaky_relu.impl(DispatchKey::CPU, kFloatingDTypes, &leaky_relu_cpu, "cpu::leaky_relu");
  op::leaky_relu_backward.impl(DispatchKey::CPU, kFloatingDTypes, &leaky_relu_backward_cpu, "cpu::leaky_relu_backward");
  op::elu.impl(DispatchKey::CPU, kFloatingDTypes, &elu_cpu, "cpu::elu");
  op::elu_backward.impl(DispatchKey::CPU, kFloatingDTypes, &elu_backward_cpu, "cpu::elu_backward");
  op::hardswish.impl(DispatchKey::CPU, kFloatingDTypes, &hardswish_cpu, "cpu::hardswish");
  op::hardswish_backward.impl(DispatchKey::CPU, kFloatingDTypes, &hardswish_backward_cpu, "cpu::hardswish_backward");
  op::hardsigmoid.impl(DispatchKey::CPU, kFloatingDTypes, &hardsigmoid_cpu, "cpu::hardsigmoid");
  op::hardsigmoid_backward.impl(DispatchKey::CPU, kFloatingDTypes, &hardsigmoid_backward_cpu,
                                "cpu::hardsigmoid_backward");
  op::mish.impl(DispatchKey::CPU, kFloatingDTypes, &mish_cpu, "cpu::mish");
  op::mish_backward.impl(DispatchKey::CPU, kFloatingDTypes, &mish_backward_cpu, "cpu::mish_backward");
  op::log_sigmoid.impl(DispatchKey::CPU, kFloatingDTypes, &log_sigmoid_cpu, "cpu::log_sigmoid");
  op::log_sigmoid_backward.impl(DispatchKey::CPU, kFloatingDTypes, &log_sigmoid_backward_cpu,
                                "cpu::log_sigmoid_backward");
  op::threshold_backward.impl(DispatchKey::CPU, kFloatingDTypes, &threshold_backward_cpu, "cpu::threshold_backward");
}

}  // namespace ember
