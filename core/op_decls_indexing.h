// Dispatched ops of one neural-network family: gather, scatter, scatter_add, index_select, index_add, masked_select, repeat, flip, roll.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument.
//
// Every backward of this family is another op of the family (gather <->
// scatter_add, index_select <-> index_add, flip and roll of the gradient,
// repeat's is a sum), so no separate *_backward kernels are needed and second
// derivatives come for free. `scatter_value` is torch's scatter(self, dim,
// index, Scalar value) overload.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_INDEXING_OPS(X) \
  X(gather, "gather(Tensor self, int dim, Tensor index) -> Tensor", Tensor(const Tensor&, int64_t, const Tensor&)) \
  X(scatter, "scatter(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)) \
  X(scatter_value, "scatter_value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", Tensor(const Tensor&, int64_t, const Tensor&, const Scalar&)) \
  X(scatter_add, "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&)) \
  X(index_select, "index_select(Tensor self, int dim, Tensor index) -> Tensor", Tensor(const Tensor&, int64_t, const Tensor&)) \
  X(index_add, "index_add(Tensor self, int dim, Tensor index, Tensor source, Scalar alpha=1) -> Tensor", Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, const Scalar&)) \
  X(masked_select, "masked_select(Tensor self, Tensor mask) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(repeat, "repeat(Tensor self, int[] repeats) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(flip, "flip(Tensor self, int[] dims) -> Tensor", Tensor(const Tensor&, IntArrayRef)) \
  X(roll, "roll(Tensor self, int[] shifts, int[] dims=[]) -> Tensor", Tensor(const Tensor&, IntArrayRef, IntArrayRef))
// clang-format on

namespace ember::op {
EMBER_INDEXING_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
