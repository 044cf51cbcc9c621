// Index reductions on CPU: max/min over a dim (values and int64 indices),
// argmax, argmin. One ArgOp (reduce_ops.h) folds (value, index) pairs: the
// larger (smaller) value wins, a NaN wins over any number (the first NaN
// when there are several), ties go to the lower index.
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "kernels/cpu/reduce/reduce_driver.h"
#include "kernels/cpu/reduce/reduce_ops.h"
#include "kernels/cpu/reduce/reduce_plan.h"

namespace ember {

namespace {

using namespace cpu::reduce;

// Reduces `in` over the single dim in `mask` (or nothing for a 0-d tensor):
// values (when defined) get the winning value, indices its position along the dim.
template <bool kMax>
void arg_reduce(const char* name, const Tensor& in, uint64_t mask, const Tensor& values, const Tensor& indices) {
  const ReducePlan plan = make_plan(in.sizes(), in.strides(), mask);
  int64_t* idx = indices.data_ptr<int64_t>();
  dispatch_dtype(in.dtype(), name, [&]<class T>() {
    using Op = ArgOp<value_t<T>, kMax>;
    const T* x = static_cast<const T*>(in.data_ptr());
    if (values.defined()) {
      T* v = values.data_ptr<T>();
      run_reduce(plan, x, Op{}, [&](int64_t off, const typename Op::acc_t& a) {
        v[off] = static_cast<T>(a.v);
        idx[off] = a.i;
      });
    } else {
      run_reduce(plan, x, Op{}, [&](int64_t off, const typename Op::acc_t& a) { idx[off] = a.i; });
    }
  });
}

template <bool kMax>
TensorPair extremum_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  const char* name = kMax ? "max" : "min";
  const uint64_t mask = one_dim_mask(name, self, dim);
  check_nonempty_reduction(name, self, mask);
  const DimVector shape = reduced_shape(self.sizes(), mask, keepdim);
  Tensor values = make_empty(shape, self.dtype(), self.device());
  Tensor indices = make_empty(shape, DType::Int64, self.device());
  arg_reduce<kMax>(name, self, mask, values, indices);
  return {values, indices};
}

// With no dim, the index is into the flattened (row-major) tensor.
template <bool kMax>
Tensor arg_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  const char* name = kMax ? "argmax" : "argmin";
  if (dim) {
    const uint64_t mask = one_dim_mask(name, self, *dim);
    check_nonempty_reduction(name, self, mask);
    Tensor indices = make_empty(reduced_shape(self.sizes(), mask, keepdim), DType::Int64, self.device());
    arg_reduce<kMax>(name, self, mask, Tensor(), indices);
    return indices;
  }
  EMBER_CHECK(self.numel() > 0, name, ": cannot take the ", name, " of an empty tensor (shape ", self.sizes(),
              ") over all elements; pass a dim of non-zero size");
  const Tensor flat = self.reshape({-1});
  Tensor indices =
      make_empty(keepdim ? DimVector(static_cast<size_t>(self.dim()), 1) : DimVector(), DType::Int64, self.device());
  arg_reduce<kMax>(name, flat, 1, Tensor(), indices);
  return indices;
}

TensorPair max_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim_cpu<true>(self, dim, keepdim);
}
TensorPair min_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim_cpu<false>(self, dim, keepdim);
}
Tensor argmax_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_cpu<true>(self, dim, keepdim);
}
Tensor argmin_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_cpu<false>(self, dim, keepdim);
}

}  // namespace

void register_cpu_index_reduce_kernels() {
  op::max_dim.impl(DispatchKey::CPU, kAllDTypes, &max_dim_cpu, "cpu::max_dim");
  op::min_dim.impl(DispatchKey::CPU, kAllDTypes, &min_dim_cpu, "cpu::min_dim");
  op::argmax.impl(DispatchKey::CPU, kAllDTypes, &argmax_cpu, "cpu::argmax");
  op::argmin.impl(DispatchKey::CPU, kAllDTypes, &argmin_cpu, "cpu::argmin");
}

}  // namespace ember
