// unique on CPU: the distinct values of the flattened tensor.
//
// The elements' positions are sorted (stably) by value in sort's order
// (Note [Sort order] in sort.cpp: NaN above every number, -0 equal to +0),
// then runs of equal values become one output each. A NaN equals nothing, so
// every NaN is a value of its own. Each value is written as its first
// occurrence in the input (-0 or +0, whichever came first). The result is
// always ascending: for sorted = false that is one of the allowed orders.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"

namespace ember {
namespace {

// The value as a type with `<` and `==` (f16/bf16 widen to float).
template <class T>
auto as_number(T v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return static_cast<float>(v);
  else return v;
}

template <class V>
bool is_nan(V v) {
  if constexpr (std::is_floating_point_v<V>) return std::isnan(v);
  else return false;
}

// self (any shape) -> (distinct values, inverse of self's shape or empty, counts or empty).
TensorTriple unique_cpu(const Tensor& self, bool /*sorted: always*/, bool return_inverse, bool return_counts) {
  const int64_t n = self.numel();
  const Tensor flat = self.contiguous();
  Tensor values, inverse = make_empty(return_inverse ? self.sizes() : IntArrayRef{0}, DType::Int64, Device::cpu());
  std::vector<int64_t> starts;  // where each run of equal values begins in `order`, then n
  dispatch_dtype(self.dtype(), "unique", [&]<class T>() {
    const T* x = static_cast<const T*>(flat.data_ptr());
    auto less = [x](int64_t i, int64_t j) {
      const auto a = as_number(x[i]), b = as_number(x[j]);
      return !is_nan(a) && (is_nan(b) || a < b);
    };
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), less);
    for (int64_t k = 0; k < n; ++k) {
      if (k == 0 || !(as_number(x[order[k - 1]]) == as_number(x[order[k]]))) starts.push_back(k);
    }
    const int64_t groups = static_cast<int64_t>(starts.size());
    starts.push_back(n);
    values = make_empty({groups}, self.dtype(), Device::cpu());
    T* v = values.data_ptr<T>();
    int64_t* inv = return_inverse ? inverse.data_ptr<int64_t>() : nullptr;
    for (int64_t g = 0; g < groups; ++g) {
      v[g] = x[order[starts[g]]];
      if (inv == nullptr) continue;
      for (int64_t k = starts[g]; k < starts[g + 1]; ++k) inv[order[k]] = g;
    }
  });
  const int64_t groups = values.numel();
  Tensor counts = make_empty({return_counts ? groups : 0}, DType::Int64, Device::cpu());
  if (return_counts) {
    int64_t* c = counts.data_ptr<int64_t>();
    for (int64_t g = 0; g < groups; ++g) c[g] = starts[g + 1] - starts[g];
  }
  return {values, inverse, counts};
}

}  // namespace

void register_cpu_unique_kernels() { op::unique.impl(DispatchKey::CPU, kAllDTypes, &unique_cpu, "cpu::unique"); }

}  // namespace ember
