// Reductions on CPU, part 1: which dims an op reduces, and the loop geometry.
//
// Note [Reduction geometry]
// A reduction maps an input of shape S onto outputs: every input dim is
// either kept (it indexes the outputs) or reduced (it is folded away). The
// plan sorts the kept dims and the reduced dims separately by input stride
// (innermost first), drops dims of size 1, and merges neighbours laid out
// contiguously (coalescing), so a contiguous [A, B, C] reduced over [1, 2]
// becomes one kept dim of A and one reduced dim of B*C with stride 1. Then
// the driver (reduce_driver.h) takes one of two loops:
//  - Rows: the innermost reduced dim has stride 1. Each output folds
//    contiguous runs ("rows"), which ops vectorise along the row.
//    sum(dim=1) of [N, M], and every all-dims reduction of a contiguous
//    tensor, run here. An innermost reduced stride other than 1 (a
//    transposed or sliced input) runs this same loop with strided runs.
//  - Columns: the innermost kept dim has stride 1 in the input, as in
//    sum(dim=0) of [N, M]. A task owns a block of adjacent outputs (columns)
//    and folds whole input rows into a block of accumulators, so the loads
//    are contiguous and the arithmetic vectorises across outputs.
#pragma once

#include <cstdint>
#include <string_view>

#include "ember/tensor.h"

namespace ember::cpu::reduce {

inline constexpr int kMaxDims = 64;

// Bit d is set when dim d of `self` is reduced. An empty list means every dim;
// dims may be negative; a dim out of range or listed twice is an error naming `op`.
uint64_t dim_mask(std::string_view op, const Tensor& self, IntArrayRef dims);
// The mask of a single dim (0-d tensors accept 0 and -1 and reduce nothing).
uint64_t one_dim_mask(std::string_view op, const Tensor& self, int64_t dim);
// The result shape: reduced dims become 1 (keepdim) or disappear.
DimVector reduced_shape(IntArrayRef sizes, uint64_t mask, bool keepdim);
// For ops without an identity (max, argmax, inf-norm, ...): every reduced dim
// must be non-empty, or an error names `op`, the dim and the shape.
void check_nonempty_reduction(std::string_view op, const Tensor& self, uint64_t mask);

enum class ReducePath : uint8_t { Rows, Columns };

// The coalesced geometry of one reduction, strides in elements, innermost
// dim first. The output is contiguous in the order of the input's dims.
struct ReducePlan {
  int nk = 0;               // kept dims
  int nr = 0;               // reduced dims
  int64_t ksize[kMaxDims];  // kept: size
  int64_t kin[kMaxDims];    // kept: input stride
  int64_t kout[kMaxDims];   // kept: output stride
  int64_t rsize[kMaxDims];  // reduced: size
  int64_t rin[kMaxDims];    // reduced: input stride
  int64_t num_outputs = 1;  // product of the kept sizes
  int64_t num_reduced = 1;  // elements folded into each output
  ReducePath path = ReducePath::Rows;

  // Input and output offsets of output number `o` (kept dims from `first` on).
  void kept_offsets(int64_t o, int first, int64_t& in_off, int64_t& out_off) const {
    in_off = 0;
    out_off = 0;
    for (int d = first; d < nk; ++d) {
      const int64_t i = o % ksize[d];
      o /= ksize[d];
      in_off += i * kin[d];
      out_off += i * kout[d];
    }
  }
};

// The plan for reducing a tensor of `sizes` and `strides` over `mask`.
ReducePlan make_plan(IntArrayRef sizes, IntArrayRef strides, uint64_t mask);

}  // namespace ember::cpu::reduce
