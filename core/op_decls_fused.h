// Dispatched ops of one family: the fused elementwise group that jit's fusion
// pass (jit/passes/fusion.cpp) puts in place of a chain of elementwise ops.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature); the op
// takes its dtype from its first tensor argument, which the pass makes an
// input of the output's dtype.
//
// `expr` is the program of core/fused_program.h (Note [Fused elementwise
// programs]) over `inputs` (i0, i1, ...). The op has no derivative formula:
// the graph executor runs a group whose inputs require grad as its unfused
// ops (fused::run_unfused), which autograd records one by one.
#pragma once

#include "core/op_decls.h"

// clang-format off
#define EMBER_FUSED_OPS(X) \
  X(_fused_elementwise, "_fused_elementwise(Tensor[] inputs, str expr) -> Tensor", Tensor(const TensorList&, std::string_view))
// clang-format on

namespace ember::op {
EMBER_FUSED_OPS(EMBER_DECLARE_OP)
}  // namespace ember::op
