// searchsorted on CPU: a binary search per value.
//
// The sequence and the values are compared in their promoted dtype. The
// search is PyTorch's: for the left side (the first index i with
// seq[i] >= v) it steps right while !(seq[mid] >= v), for the right side
// (the first i with seq[i] > v) while !(seq[mid] > v). Written with `!`, a
// NaN on either side steps right, as in PyTorch: a NaN value lands at the
// end of its row.
#include <cstdint>
#include <limits>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember {
namespace {

// Values (contiguous) searched per task.
constexpr int64_t kValuesPerTask = 4096;

// seq: n sorted values of type T, compared as M (f16/bf16 as float).
template <class T, class M>
int64_t search(const T* seq, int64_t n, M v, bool right) {
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const M at = static_cast<M>(seq[mid]);
    const bool step_right = right ? !(at > v) : !(at >= v);
    if (step_right) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// A 1-D sequence serves every value; an N-D sequence (*, n) has one row per
// row of values (*, m), the leading dims equal.
void check_shapes(const Tensor& seq, const Tensor& values) {
  EMBER_CHECK(seq.dim() >= 1, "searchsorted: the sorted sequence needs at least 1 dim, got a 0-d tensor");
  if (seq.dim() == 1) return;
  bool leading_match = values.dim() == seq.dim();
  for (int64_t d = 0; leading_match && d + 1 < seq.dim(); ++d) leading_match = seq.size(d) == values.size(d);
  EMBER_CHECK(leading_match, "searchsorted: a sorted sequence of shape ", seq.sizes(),
              " needs values with the same leading dims (all but the last), got values of shape ", values.sizes());
}

// sorted_sequence (n) or (*, n), values (any) or (*, m) -> int64/int32 indices of values' shape.
Tensor searchsorted_cpu(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right) {
  check_shapes(sorted_sequence, values);
  const int64_t n = sorted_sequence.size(-1);
  EMBER_CHECK(!out_int32 || n < std::numeric_limits<int32_t>::max(), "searchsorted: a sequence of ", n,
              " elements does not fit int32 indices (out_int32)");
  ResultTypeState state;
  state.update(sorted_sequence);
  state.update(values);
  const DType common = state.result();
  const Tensor seq = sorted_sequence.to(common).contiguous(), v = values.to(common).contiguous();
  Tensor out = make_empty(values.sizes(), out_int32 ? DType::Int32 : DType::Int64, Device::cpu());
  const int64_t count = v.numel();
  if (count == 0) return out;
  // Values per row of the sequence: all of them for a 1-D sequence.
  const int64_t per_row = sorted_sequence.dim() == 1 ? count : v.size(-1);
  dispatch_dtype(common, "searchsorted", [&]<class T>() {
    using M = opmath_t<T>;
    const T* s = static_cast<const T*>(seq.data_ptr());
    const T* x = static_cast<const T*>(v.data_ptr());
    int32_t* out32 = out_int32 ? out.data_ptr<int32_t>() : nullptr;
    int64_t* out64 = out_int32 ? nullptr : out.data_ptr<int64_t>();
    parallel_for(0, count, kValuesPerTask, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        const int64_t i = search(s + (k / per_row) * n, n, static_cast<M>(x[k]), right);
        if (out32 != nullptr) out32[k] = static_cast<int32_t>(i);
        else out64[k] = i;
      }
    });
  });
  return out;
}

}  // namespace

void register_cpu_searchsorted_kernels() {
  op::searchsorted.impl(DispatchKey::CPU, kNumericDTypes, &searchsorted_cpu, "cpu::searchsorted");
}

}  // namespace ember
