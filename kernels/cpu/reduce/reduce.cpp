// Reductions on CPU: sum, mean, prod, amax, amin, all, any, norm, var, std,
// logsumexp. Each kernel checks its arguments, allocates the result and
// runs one op (reduce_ops.h) through the driver (reduce_driver.h). The index
// reductions (max/min with a dim, argmax, argmin) are in reduce_index.cpp,
// the scans (cumsum, cumprod) in reduce_scan.cpp.
#include <cmath>
#include <limits>

#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "kernels/cpu/reduce/reduce_driver.h"
#include "kernels/cpu/reduce/reduce_ops.h"
#include "kernels/cpu/reduce/reduce_plan.h"

namespace ember {

namespace {

using namespace cpu::reduce;

// Runs `op` over `in` (stored as T) reduced over `mask`, writing op.project() into `out` (stored as O).
template <class T, class O = T, class Op>
void reduce_into(const Tensor& in, uint64_t mask, const Tensor& out, const Op& op) {
  const ReducePlan plan = make_plan(in.sizes(), in.strides(), mask);
  const T* x = static_cast<const T*>(in.data_ptr());
  O* o = out.data_ptr<O>();
  run_reduce(plan, x, op, [o, &op](int64_t off, const typename Op::acc_t& a) { o[off] = cast_to<O>(op.project(a)); });
}

Tensor make_result(const Tensor& self, uint64_t mask, bool keepdim, DType dtype) {
  return make_empty(reduced_shape(self.sizes(), mask, keepdim), dtype, self.device());
}

void check_floating(const char* op, const Tensor& self) {
  EMBER_CHECK(self.is_floating_point(), op, ": expected a floating-point input, got ", self.dtype(),
              " (convert it first, e.g. t.to(kFloat32))");
}

// sum and prod: integers and bool give int64; `dtype` converts the input first, as in PyTorch.
template <template <class> class Op>
Tensor sum_like(const char* name, const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  const uint64_t mask = dim_mask(name, self, dims);
  const DType out_dtype = dtype ? *dtype : is_integral(self.dtype(), true) ? DType::Int64 : self.dtype();
  const Tensor in = dtype ? self.to(*dtype) : self;
  Tensor out = make_result(self, mask, keepdim, out_dtype);
  dispatch_dtype(in.dtype(), name, [&]<class T>() {
    if (out_dtype == in.dtype()) reduce_into<T>(in, mask, out, Op<value_t<T>>{});
    else reduce_into<T, int64_t>(in, mask, out, Op<value_t<T>>{});  // an integer input's default int64
  });
  return out;
}

Tensor sum_cpu(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return sum_like<SumOp>("sum", self, dims, keepdim, dtype);
}

Tensor prod_cpu(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  return sum_like<ProdOp>("prod", self, dims, keepdim, dtype);
}

Tensor mean_cpu(const Tensor& self, IntArrayRef dims, bool keepdim) {
  const uint64_t mask = dim_mask("mean", self, dims);
  check_floating("mean", self);
  Tensor out = make_result(self, mask, keepdim, self.dtype());
  dispatch_floating(self.dtype(), "mean", [&]<class T>() {
    SumOp<value_t<T>> op;
    op.is_mean = true;
    op.count = 1;
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (mask >> d & 1) op.count *= self.size(d);
    }
    reduce_into<T>(self, mask, out, op);
  });
  return out;
}

template <bool kMax>
Tensor extremum_cpu(const char* name, const Tensor& self, IntArrayRef dims, bool keepdim) {
  const uint64_t mask = dim_mask(name, self, dims);
  check_nonempty_reduction(name, self, mask);
  Tensor out = make_result(self, mask, keepdim, self.dtype());
  dispatch_dtype(self.dtype(), name,
                 [&]<class T>() { reduce_into<T>(self, mask, out, ExtremumOp<value_t<T>, kMax>{}); });
  return out;
}

Tensor amax_cpu(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return extremum_cpu<true>("amax", self, dims, keepdim);
}
Tensor amin_cpu(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return extremum_cpu<false>("amin", self, dims, keepdim);
}

// all/any give bool, except uint8 in, uint8 out (PyTorch 1.13 keeps that legacy rule).
template <bool kAll>
Tensor logical_cpu(const char* name, const Tensor& self, IntArrayRef dims, bool keepdim) {
  const uint64_t mask = dim_mask(name, self, dims);
  Tensor out = make_result(self, mask, keepdim, self.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool);
  dispatch_dtype(self.dtype(), name, [&]<class T>() {
    if (out.dtype() == DType::UInt8) reduce_into<T, uint8_t>(self, mask, out, LogicalOp<kAll>{});
    else reduce_into<T, bool>(self, mask, out, LogicalOp<kAll>{});
  });
  return out;
}

Tensor all_cpu(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return logical_cpu<true>("all", self, dims, keepdim);
}
Tensor any_cpu(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return logical_cpu<false>("any", self, dims, keepdim);
}

// The vector norm of torch.linalg.vector_norm: p = 2, 1, inf, -inf, 0, or any other p.
Tensor norm_cpu(const Tensor& self, const Scalar& p, IntArrayRef dims, bool keepdim) {
  const uint64_t mask = dim_mask("norm", self, dims);
  check_floating("norm", self);
  const double pv = p.to_double();
  EMBER_CHECK(!std::isnan(pv), "norm: the order p must not be NaN");
  if (pv < 0 || std::isinf(pv)) {
    // Negative orders and the inf-norms have no identity: an empty reduction is an error.
    for (int64_t d = 0; d < self.dim(); ++d) {
      EMBER_CHECK(!(mask >> d & 1) || self.size(d) != 0, "norm: cannot compute the ", pv, "-norm over dim ", d,
                  " of size 0 (input shape ", self.sizes(), "): the reduction has no identity");
    }
  }
  Tensor out = make_result(self, mask, keepdim, self.dtype());
  dispatch_floating(self.dtype(), "norm", [&]<class T>() {
    using V = value_t<T>;
    if (pv == 2) reduce_into<T>(self, mask, out, NormOp<V, NormKind::Two>{});
    else if (pv == 1) reduce_into<T>(self, mask, out, NormOp<V, NormKind::One>{});
    else if (pv == std::numeric_limits<double>::infinity()) reduce_into<T>(self, mask, out, NormOp<V, NormKind::Inf>{});
    else if (pv == -std::numeric_limits<double>::infinity())
      reduce_into<T>(self, mask, out, NormOp<V, NormKind::NegInf>{});
    else if (pv == 0) reduce_into<T>(self, mask, out, NormOp<V, NormKind::Zero>{});
    else {
      NormOp<V, NormKind::General> op;
      op.p = static_cast<V>(pv);
      reduce_into<T>(self, mask, out, op);
    }
  });
  return out;
}

// var and std: m2 / max(0, N - correction), as torch.var(correction=...).
Tensor var_like(const char* name, bool take_sqrt, const Tensor& self, IntArrayRef dims, int64_t correction,
                bool keepdim) {
  const uint64_t mask = dim_mask(name, self, dims);
  check_floating(name, self);
  Tensor out = make_result(self, mask, keepdim, self.dtype());
  dispatch_floating(self.dtype(), name, [&]<class T>() {
    VarOp<value_t<T>> op;
    op.correction = correction;
    op.take_sqrt = take_sqrt;
    reduce_into<T>(self, mask, out, op);
  });
  return out;
}

Tensor var_cpu(const Tensor& self, IntArrayRef dims, int64_t correction, bool keepdim) {
  return var_like("var", false, self, dims, correction, keepdim);
}
Tensor std_cpu(const Tensor& self, IntArrayRef dims, int64_t correction, bool keepdim) {
  return var_like("std", true, self, dims, correction, keepdim);
}

// log(sum(exp(x))) without overflow; integer and bool inputs give float32 (as PyTorch 1.13).
Tensor logsumexp_cpu(const Tensor& self, IntArrayRef dims, bool keepdim) {
  const uint64_t mask = dim_mask("logsumexp", self, dims);
  const Tensor in = self.is_floating_point() ? self : self.to(DType::Float32);
  Tensor out = make_result(self, mask, keepdim, in.dtype());
  dispatch_floating(in.dtype(), "logsumexp",
                    [&]<class T>() { reduce_into<T>(in, mask, out, LogSumExpOp<value_t<T>>{}); });
  return out;
}

}  // namespace

void register_cpu_reduce_kernels() {
  op::sum.impl(DispatchKey::CPU, kAllDTypes, &sum_cpu, "cpu::sum");
  op::prod.impl(DispatchKey::CPU, kAllDTypes, &prod_cpu, "cpu::prod");
  op::mean.impl(DispatchKey::CPU, kAllDTypes, &mean_cpu, "cpu::mean");
  op::amax.impl(DispatchKey::CPU, kAllDTypes, &amax_cpu, "cpu::amax");
  op::amin.impl(DispatchKey::CPU, kAllDTypes, &amin_cpu, "cpu::amin");
  op::all.impl(DispatchKey::CPU, kAllDTypes, &all_cpu, "cpu::all");
  op::any.impl(DispatchKey::CPU, kAllDTypes, &any_cpu, "cpu::any");
  op::norm.impl(DispatchKey::CPU, kAllDTypes, &norm_cpu, "cpu::norm");
  op::var.impl(DispatchKey::CPU, kAllDTypes, &var_cpu, "cpu::var");
  op::std_dev.impl(DispatchKey::CPU, kAllDTypes, &std_cpu, "cpu::std");
  op::logsumexp.impl(DispatchKey::CPU, kAllDTypes, &logsumexp_cpu, "cpu::logsumexp");
}

}  // namespace ember
