// Elementwise ops on CUDA: the host side. Each wrapper mirrors its CPU twin
// (kernels/cpu/elementwise/binary.cpp and the unary family): it checks the inputs, builds
// the TensorIterator (type promotion, broadcasting, output allocation), then
// launches the kernel from cuda_binary.cu / cuda_unary.cu.
#include <cstring>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/op_decls_activation.h"
#include "core/result_type.h"
#include "core/scalar_convert.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {

uint64_t scalar_bits(const Scalar& value, DType dtype) {
  uint64_t bits = 0;
  dispatch_dtype(dtype, "scalar_bits", [&]<class T>() {
    T v;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) v = T(value.to<float>());
    else v = value.to<T>();
    std::memcpy(&bits, &v, sizeof(T));
  });
  return bits;
}

int cuda_device_index(std::initializer_list<const Tensor*> tensors, const char* op) {
  for (const Tensor* t : tensors)
    if (t->defined() && t->is_cuda()) return t->device().index;
  EMBER_FAIL(op, ": the CUDA kernel got no CUDA tensor");
}

CudaIterator build_cuda_iterator(TensorIterator::Config c) {
  EMBER_CHECK(c.num_outputs == 1, c.op, ": CUDA kernels write one output");
  int device = -1;
  if (c.outputs[0].defined() && c.outputs[0].is_cuda()) device = c.outputs[0].device().index;
  for (int i = 0; i < c.num_inputs && device < 0; ++i)
    if (c.inputs[i].defined() && c.inputs[i].is_cuda()) device = c.inputs[i].device().index;
  EMBER_CHECK(device >= 0, c.op, ": the CUDA kernel got no CUDA tensor");

  // The common dtype from the original inputs (their wrapped-number status counts).
  DType common;
  if (c.common_dtype) {
    common = *c.common_dtype;
  } else {
    ResultTypeState state;
    for (int i = 0; i < c.num_inputs; ++i) state.update(c.inputs[i]);
    common = state.result();
  }
  if (c.int_to_float && !is_floating_point(common)) common = DType::Float32;
  c.common_dtype = common;

  bool by_value[kMaxOperands] = {};
  uint64_t value[kMaxOperands] = {};
  for (int i = 0; i < c.num_inputs; ++i) {
    const Tensor& t = c.inputs[i];
    if (!t.defined() || t.dim() != 0 || !t.device().is_cpu()) continue;
    const DType target = c.promote_inputs ? common : t.dtype();
    by_value[1 + i] = true;
    value[1 + i] = scalar_bits(t.item(), target);
    c.inputs[i] = make_empty({}, target, Device::cuda(device));  // never read: the kernel uses `value`
  }

  CudaIterator r{TensorIterator::build(std::move(c)), {}};
  const TensorIterator& it = r.it;
  ElementwiseArgs& a = r.args;
  a.num_inputs = it.num_operands() - 1;
  a.ndim = it.ndim();
  a.numel = it.numel();
  a.device = device;
  for (int d = 0; d < a.ndim; ++d) a.sizes[d] = it.shape()[d];
  for (int o = 0; o < it.num_operands(); ++o) {
    a.data[o] = static_cast<char*>(it.operand(o).data_ptr());
    a.dtypes[o] = it.dtype(o);
    a.by_value[o] = by_value[o];
    a.value[o] = value[o];
    for (int d = 0; d < a.ndim; ++d) a.strides[o][d] = it.stride(o, d);
  }
  return r;
}

namespace {

// ---- binary ----

template <class Launch>
Tensor run_binary(const char* name, const Tensor& out, const Tensor& a, const Tensor& b, bool int_to_float,
                  Launch launch) {
  DeviceGuard guard(cuda_device_index({&out, &a, &b}, name));
  TensorIterator::Config c;
  c.name(name).output(out).input(a).input(b);
  c.int_to_float = int_to_float;
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch(ci.args);
  ci.it.finish();
  if (out.defined()) bump_version(out);
  return ci.it.output();
}

Tensor add_impl(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha, bool subtract) {
  const char* name = subtract ? "sub" : "add";
  EMBER_CHECK(!(subtract && a.dtype() == DType::Bool && b.dtype() == DType::Bool), name,
              ": subtracting two bool tensors is not supported; use logical_xor");
  // sub(a, b, alpha) is add(a, b, -alpha), negated in the Scalar's own category as the CPU kernel does.
  const Scalar s = !subtract ? alpha : alpha.is_floating_point() ? Scalar(-alpha.to_double()) : Scalar(-alpha.to_int());
  return run_binary(name, out, a, b, false, [&](const ElementwiseArgs& args) { launch_binary(BinaryKind::Add, args, s); });
}

Tensor arith(BinaryKind kind, const char* name, const Tensor& out, const Tensor& a, const Tensor& b) {
  return run_binary(name, out, a, b, kind == BinaryKind::Div,
                    [&](const ElementwiseArgs& args) { launch_binary(kind, args, Scalar(0)); });
}

Tensor add_cuda(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_impl(Tensor(), a, b, alpha, false); }
Tensor threshold_backward_cuda(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  EMBER_CHECK(grad.sizes() == self.sizes(), "threshold_backward: grad_output of shape ", grad.sizes(),
              " does not match the input's shape ", self.sizes());
  return run_binary("threshold_backward", Tensor(), grad, self, false, [&](const ElementwiseArgs& args) {
    launch_binary(BinaryKind::ThresholdBackward, args, threshold);
  });
}
Tensor add__cuda(const Tensor& s, const Tensor& b, const Scalar& alpha) { return add_impl(s, s, b, alpha, false); }
Tensor sub_cuda(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_impl(Tensor(), a, b, alpha, true); }
Tensor sub__cuda(const Tensor& s, const Tensor& b, const Scalar& alpha) { return add_impl(s, s, b, alpha, true); }
Tensor mul_cuda(const Tensor& a, const Tensor& b) { return arith(BinaryKind::Mul, "mul", Tensor(), a, b); }
Tensor mul__cuda(const Tensor& s, const Tensor& b) { return arith(BinaryKind::Mul, "mul", s, s, b); }
Tensor div_cuda(const Tensor& a, const Tensor& b) { return arith(BinaryKind::Div, "div", Tensor(), a, b); }
Tensor div__cuda(const Tensor& s, const Tensor& b) { return arith(BinaryKind::Div, "div", s, s, b); }
Tensor pow_cuda(const Tensor& a, const Tensor& b) { return arith(BinaryKind::Pow, "pow", Tensor(), a, b); }
Tensor pow__cuda(const Tensor& s, const Tensor& b) { return arith(BinaryKind::Pow, "pow", s, s, b); }
Tensor maximum_cuda(const Tensor& a, const Tensor& b) { return arith(BinaryKind::Maximum, "maximum", Tensor(), a, b); }
Tensor minimum_cuda(const Tensor& a, const Tensor& b) { return arith(BinaryKind::Minimum, "minimum", Tensor(), a, b); }

// Integer division by zero has no defined result on the GPU, so it is refused
// up front, as on the CPU (a device-to-host read of one count when b is on the GPU).
void check_int_divisor(const char* name, const Tensor& b) {
  if (!is_integral(b.dtype(), true)) return;
  bool has_zero;
  if (!b.is_cuda()) has_zero = b.numel() > 0 && b.dim() == 0 && b.item<int64_t>() == 0;
  else has_zero = op::sum.call(op::eq.call(b, wrap_scalar(0)), {}, false, std::nullopt).item<int64_t>() > 0;
  EMBER_CHECK(!has_zero, name, ": integer division by zero");
}

Tensor remainder_cuda(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(!(a.dtype() == DType::Bool && b.dtype() == DType::Bool), "remainder: not supported for bool tensors");
  check_int_divisor("remainder", b);
  return arith(BinaryKind::Remainder, "remainder", Tensor(), a, b);
}

Tensor compare(CompareKind kind, const char* name, const Tensor& a, const Tensor& b) {
  DeviceGuard guard(cuda_device_index({&a, &b}, name));
  TensorIterator::Config c;
  c.name(name).input(a).input(b);
  c.output_dtype = DType::Bool;
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch_compare(kind, ci.args);
  return ci.it.output();
}

Tensor eq_cuda(const Tensor& a, const Tensor& b) { return compare(CompareKind::Eq, "eq", a, b); }
Tensor ne_cuda(const Tensor& a, const Tensor& b) { return compare(CompareKind::Ne, "ne", a, b); }
Tensor lt_cuda(const Tensor& a, const Tensor& b) { return compare(CompareKind::Lt, "lt", a, b); }
Tensor le_cuda(const Tensor& a, const Tensor& b) { return compare(CompareKind::Le, "le", a, b); }
Tensor gt_cuda(const Tensor& a, const Tensor& b) { return compare(CompareKind::Gt, "gt", a, b); }
Tensor ge_cuda(const Tensor& a, const Tensor& b) { return compare(CompareKind::Ge, "ge", a, b); }

// Inputs of any dtype are converted to bool first (x != 0, NaN is true).
Tensor logical(LogicalKind kind, const char* name, const Tensor& a, const Tensor* b) {
  DeviceGuard guard(cuda_device_index({&a, b ? b : &a}, name));
  TensorIterator::Config c;
  c.name(name).input(a);
  if (b) c.input(*b);
  c.common_dtype = DType::Bool;
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch_logical(kind, ci.args);
  return ci.it.output();
}

Tensor logical_and_cuda(const Tensor& a, const Tensor& b) { return logical(LogicalKind::And, "logical_and", a, &b); }
Tensor logical_or_cuda(const Tensor& a, const Tensor& b) { return logical(LogicalKind::Or, "logical_or", a, &b); }
Tensor logical_xor_cuda(const Tensor& a, const Tensor& b) { return logical(LogicalKind::Xor, "logical_xor", a, &b); }
Tensor logical_not_cuda(const Tensor& a) { return logical(LogicalKind::Not, "logical_not", a, nullptr); }

// out = cond ? x : y with x, y already in out's dtype.
Tensor select_by_mask(const char* name, const Tensor& out, const Tensor& cond, const Tensor& x, const Tensor& y,
                      DType dtype) {
  TensorIterator::Config c;
  c.name(name).output(out).input(cond).input(x).input(y);
  c.promote_inputs = false;
  c.common_dtype = dtype;
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch_where(ci.args);
  if (out.defined()) bump_version(out);
  return ci.it.output();
}

Tensor where_cuda(const Tensor& cond, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(cond.dtype() == DType::Bool, "where: expected a bool condition, got ", cond.dtype());
  DeviceGuard guard(cuda_device_index({&cond, &a, &b}, "where"));
  ResultTypeState state;
  state.update(a);
  state.update(b);
  const DType common = state.result();
  return select_by_mask("where", Tensor(), cond, a.dtype() == common ? a : a.to(common),
                        b.dtype() == common ? b : b.to(common), common);
}

Tensor masked_fill_impl(const char* name, const Tensor& out, const Tensor& self, const Tensor& mask,
                        const Scalar& value) {
  EMBER_CHECK(mask.dtype() == DType::Bool, name, ": expected a bool mask, got ", mask.dtype());
  if (out.defined()) {
    EMBER_CHECK(broadcast_shapes(self.sizes(), mask.sizes(), name) == DimVector(self.sizes()), name,
                ": the mask of shape ", mask.sizes(), " must broadcast to the tensor's shape ", self.sizes());
  }
  DeviceGuard guard(cuda_device_index({&self, &mask}, name));
  check_scalar_fits(value, self.dtype(), name);  // Note [Scalar to dtype conversion]
  Tensor v = wrap_scalar(value);
  if (v.dtype() != self.dtype()) v = v.to(self.dtype());
  return select_by_mask(name, out, mask, v, self, self.dtype());
}

Tensor masked_fill_cuda(const Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_fill_impl("masked_fill", Tensor(), self, mask, value);
}
Tensor masked_fill__cuda(const Tensor& self, const Tensor& mask, const Scalar& value) {
  masked_fill_impl("masked_fill_", self, self, mask, value);
  return self;
}

Tensor clamp_impl(const char* name, const Tensor& out, const Tensor& self, const std::optional<Scalar>& min,
                  const std::optional<Scalar>& max) {
  EMBER_CHECK(min.has_value() || max.has_value(), name, ": at least one of 'min' or 'max' must not be None");
  EMBER_CHECK(self.dtype() != DType::Bool, name, ": not supported for bool tensors");
  DeviceGuard guard(cuda_device_index({&self}, name));
  ResultTypeState state;
  state.update(self);
  if (min) state.update(*min);
  if (max) state.update(*max);
  TensorIterator::Config c;
  c.name(name).output(out).input(self);
  c.common_dtype = state.result();
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch_clamp(ci.args, min, max);
  ci.it.finish();
  if (out.defined()) bump_version(out);
  return ci.it.output();
}

Tensor clamp_cuda(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  return clamp_impl("clamp", Tensor(), self, min, max);
}
Tensor clamp__cuda(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  clamp_impl("clamp_", self, self, min, max);
  return self;
}

// ---- unary ----

// How a unary op treats integer (and bool) inputs.
enum class IntRule : uint8_t {
  ToFloat,   // computes in float32 (exp, sin, ...)
  Keep,      // computes in the integer dtype (neg, abs, sign, relu); abs and sign of a bool are the bool
  Identity,  // returns the input's values (floor, ceil, round, trunc)
  Floating,  // floating inputs only (silu, gelu, softplus)
};

// Checks and integer handling as the CPU kernels (kernels/cpu/elementwise/unary.cpp) do them.
Tensor unary_impl(UnaryKind kind, IntRule rule, const char* name, const Tensor& out, const Tensor& a,
                  double beta = 1.0, double threshold = 20.0) {
  const DType dtype = a.dtype();
  EMBER_CHECK(!(kind == UnaryKind::Neg && dtype == DType::Bool),
              "neg: negation of a bool tensor is not supported; use logical_not");
  EMBER_CHECK(!(kind == UnaryKind::Relu && dtype == DType::Bool), "relu: not supported for bool tensors");
  EMBER_CHECK(rule != IntRule::Floating || is_floating_point(dtype), name,
              ": expected a floating-point tensor, got ", dtype);
  DeviceGuard guard(cuda_device_index({&a}, name));
  if (!is_floating_point(dtype) && (rule == IntRule::Identity || (rule == IntRule::Keep && dtype == DType::Bool))) {
    if (!out.defined()) return op::clone.call(a);
    bump_version(out);
    return out;
  }
  TensorIterator::Config c;
  c.name(name).output(out).input(a);
  c.int_to_float = rule == IntRule::ToFloat;
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch_unary(kind, ci.args, beta, threshold);
  ci.it.finish();
  if (out.defined()) bump_version(out);
  return ci.it.output();
}

#define EMBER_CUDA_UNARY(name, Kind, rule)                                                                 \
  Tensor name##_cuda(const Tensor& a) { return unary_impl(UnaryKind::Kind, IntRule::rule, #name, Tensor(), a); } \
  Tensor name##__cuda(const Tensor& a) { return unary_impl(UnaryKind::Kind, IntRule::rule, #name "_", a, a); }
EMBER_CUDA_UNARY(neg, Neg, Keep)
EMBER_CUDA_UNARY(abs, Abs, Keep)
EMBER_CUDA_UNARY(sign, Sign, Keep)
EMBER_CUDA_UNARY(exp, Exp, ToFloat)
EMBER_CUDA_UNARY(exp2, Exp2, ToFloat)
EMBER_CUDA_UNARY(log, Log, ToFloat)
EMBER_CUDA_UNARY(log2, Log2, ToFloat)
EMBER_CUDA_UNARY(log1p, Log1p, ToFloat)
EMBER_CUDA_UNARY(expm1, Expm1, ToFloat)
EMBER_CUDA_UNARY(sqrt, Sqrt, ToFloat)
EMBER_CUDA_UNARY(rsqrt, Rsqrt, ToFloat)
EMBER_CUDA_UNARY(reciprocal, Reciprocal, ToFloat)
EMBER_CUDA_UNARY(sin, Sin, ToFloat)
EMBER_CUDA_UNARY(cos, Cos, ToFloat)
EMBER_CUDA_UNARY(tan, Tan, ToFloat)
EMBER_CUDA_UNARY(asin, Asin, ToFloat)
EMBER_CUDA_UNARY(acos, Acos, ToFloat)
EMBER_CUDA_UNARY(atan, Atan, ToFloat)
EMBER_CUDA_UNARY(sinh, Sinh, ToFloat)
EMBER_CUDA_UNARY(cosh, Cosh, ToFloat)
EMBER_CUDA_UNARY(tanh, Tanh, ToFloat)
EMBER_CUDA_UNARY(asinh, Asinh, ToFloat)
EMBER_CUDA_UNARY(acosh, Acosh, ToFloat)
EMBER_CUDA_UNARY(atanh, Atanh, ToFloat)
EMBER_CUDA_UNARY(sigmoid, Sigmoid, ToFloat)
EMBER_CUDA_UNARY(relu, Relu, Keep)
EMBER_CUDA_UNARY(silu, Silu, Floating)
EMBER_CUDA_UNARY(erf, Erf, ToFloat)
EMBER_CUDA_UNARY(floor, Floor, Identity)
EMBER_CUDA_UNARY(ceil, Ceil, Identity)
EMBER_CUDA_UNARY(round, Round, Identity)
EMBER_CUDA_UNARY(trunc, Trunc, Identity)
#undef EMBER_CUDA_UNARY

Tensor gelu_cuda(const Tensor& a, std::string_view approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "gelu: approximate must be 'none' or 'tanh', got '",
              approximate, "'");
  return unary_impl(approximate == "tanh" ? UnaryKind::GeluTanh : UnaryKind::GeluErf, IntRule::Floating, "gelu",
                    Tensor(), a);
}

Tensor softplus_cuda(const Tensor& a, const Scalar& beta, const Scalar& threshold) {
  return unary_impl(UnaryKind::Softplus, IntRule::Floating, "softplus", Tensor(), a, beta.to_double(),
                    threshold.to_double());
}

// bool output; integer inputs are never NaN or infinite.
Tensor float_class(const char* name, const Tensor& a, bool inf) {
  DeviceGuard guard(cuda_device_index({&a}, name));
  if (!is_floating_point(a.dtype())) return op::fill_.call(make_empty(a.sizes(), DType::Bool, a.device()), false);
  TensorIterator::Config c;
  c.name(name).input(a);
  c.common_dtype = a.dtype();
  c.output_dtype = DType::Bool;
  CudaIterator ci = build_cuda_iterator(std::move(c));
  launch_float_class(ci.args, inf);
  return ci.it.output();
}

Tensor isnan_cuda(const Tensor& a) { return float_class("isnan", a, false); }
Tensor isinf_cuda(const Tensor& a) { return float_class("isinf", a, true); }

}  // namespace

void register_cuda_elementwise_kernels() {
  constexpr DispatchKey K = DispatchKey::CUDA;
  op::add.impl(K, kAllDTypes, &add_cuda, "cuda::add");
  op::add_.impl(K, kAllDTypes, &add__cuda, "cuda::add_");
  op::sub.impl(K, kNumericDTypes, &sub_cuda, "cuda::sub");
  op::sub_.impl(K, kNumericDTypes, &sub__cuda, "cuda::sub_");
  op::mul.impl(K, kAllDTypes, &mul_cuda, "cuda::mul");
  op::mul_.impl(K, kAllDTypes, &mul__cuda, "cuda::mul_");
  op::div.impl(K, kAllDTypes, &div_cuda, "cuda::div");
  op::div_.impl(K, kAllDTypes, &div__cuda, "cuda::div_");
  op::pow.impl(K, kAllDTypes, &pow_cuda, "cuda::pow");
  op::pow_.impl(K, kAllDTypes, &pow__cuda, "cuda::pow_");
  op::maximum.impl(K, kAllDTypes, &maximum_cuda, "cuda::maximum");
  op::minimum.impl(K, kAllDTypes, &minimum_cuda, "cuda::minimum");
  op::remainder.impl(K, kNumericDTypes, &remainder_cuda, "cuda::remainder");
  op::eq.impl(K, kAllDTypes, &eq_cuda, "cuda::eq");
  op::ne.impl(K, kAllDTypes, &ne_cuda, "cuda::ne");
  op::lt.impl(K, kAllDTypes, &lt_cuda, "cuda::lt");
  op::le.impl(K, kAllDTypes, &le_cuda, "cuda::le");
  op::gt.impl(K, kAllDTypes, &gt_cuda, "cuda::gt");
  op::ge.impl(K, kAllDTypes, &ge_cuda, "cuda::ge");
  op::logical_and.impl(K, kAllDTypes, &logical_and_cuda, "cuda::logical_and");
  op::logical_or.impl(K, kAllDTypes, &logical_or_cuda, "cuda::logical_or");
  op::logical_xor.impl(K, kAllDTypes, &logical_xor_cuda, "cuda::logical_xor");
  op::logical_not.impl(K, kAllDTypes, &logical_not_cuda, "cuda::logical_not");
  op::where.impl(K, kAllDTypes, &where_cuda, "cuda::where");
  op::masked_fill.impl(K, kAllDTypes, &masked_fill_cuda, "cuda::masked_fill");
  op::masked_fill_.impl(K, kAllDTypes, &masked_fill__cuda, "cuda::masked_fill_");
  op::clamp.impl(K, kNumericDTypes, &clamp_cuda, "cuda::clamp");
  op::clamp_.impl(K, kNumericDTypes, &clamp__cuda, "cuda::clamp_");
  op::threshold_backward.impl(K, kFloatingDTypes, &threshold_backward_cuda, "cuda::threshold_backward");

  // Unary: registered for every dtype, as on the CPU; unary_impl refuses what PyTorch refuses.
#define EMBER_REG_UNARY(name)                                                \
  op::name.impl(K, kAllDTypes, &name##_cuda, "cuda::" #name);               \
  op::name##_.impl(K, kAllDTypes, &name##__cuda, "cuda::" #name "_");
  EMBER_REG_UNARY(neg)
  EMBER_REG_UNARY(abs)
  EMBER_REG_UNARY(sign)
  EMBER_REG_UNARY(exp)
  EMBER_REG_UNARY(exp2)
  EMBER_REG_UNARY(log)
  EMBER_REG_UNARY(log2)
  EMBER_REG_UNARY(log1p)
  EMBER_REG_UNARY(expm1)
  EMBER_REG_UNARY(sqrt)
  EMBER_REG_UNARY(rsqrt)
  EMBER_REG_UNARY(reciprocal)
  EMBER_REG_UNARY(sin)
  EMBER_REG_UNARY(cos)
  EMBER_REG_UNARY(tan)
  EMBER_REG_UNARY(asin)
  EMBER_REG_UNARY(acos)
  EMBER_REG_UNARY(atan)
  EMBER_REG_UNARY(sinh)
  EMBER_REG_UNARY(cosh)
  EMBER_REG_UNARY(tanh)
  EMBER_REG_UNARY(asinh)
  EMBER_REG_UNARY(acosh)
  EMBER_REG_UNARY(atanh)
  EMBER_REG_UNARY(sigmoid)
  EMBER_REG_UNARY(relu)
  EMBER_REG_UNARY(silu)
  EMBER_REG_UNARY(erf)
  EMBER_REG_UNARY(floor)
  EMBER_REG_UNARY(ceil)
  EMBER_REG_UNARY(round)
  EMBER_REG_UNARY(trunc)
#undef EMBER_REG_UNARY
  op::gelu.impl(K, kFloatingDTypes, &gelu_cuda, "cuda::gelu");
  op::softplus.impl(K, kFloatingDTypes, &softplus_cuda, "cuda::softplus");
  op::isnan.impl(K, kAllDTypes, &isnan_cuda, "cuda::isnan");
  op::isinf.impl(K, kAllDTypes, &isinf_cuda, "cuda::isinf");
}

}  // namespace ember::cuda
