// Defines the op objects declared in core/op_decls.h, then registers every
// backend's kernels. Both happen during static initialisation of this one
// file, so the ops exist before any kernel is registered against them.
#include "core/op_decls.h"
#include "core/op_decls_activation.h"
#include "core/op_decls_attention.h"
#include "core/op_decls_conv.h"
#include "core/op_decls_indexing.h"
#include "core/op_decls_loss.h"
#include "core/op_decls_norm.h"
#include "core/op_decls_optim.h"
#include "core/op_decls_pooling.h"

#include "autograd/formula.h"
#include "kernels/registration.h"
#include "nn/amp/autocast_kernel.h"

namespace ember::op {

#define EMBER_DEFINE_PROMOTE(name, schema, sig) TypedOp<sig> name{schema, DTypeRule::Promote};
#define EMBER_DEFINE_FIRST(name, schema, sig) TypedOp<sig> name{schema, DTypeRule::FirstTensor};
#define EMBER_DEFINE_UNARY(name)                                                                         \
  TypedOp<Tensor(const Tensor&)> name{#name "(Tensor self) -> Tensor", DTypeRule::FirstTensor};          \
  TypedOp<Tensor(const Tensor&)> name##_{#name "_(Tensor(a!) self) -> Tensor(a!)", DTypeRule::FirstTensor};
EMBER_BINARY_OPS(EMBER_DEFINE_PROMOTE)
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY)
EMBER_FIRST_TENSOR_OPS(EMBER_DEFINE_FIRST)
EMBER_PROMOTE_OPS(EMBER_DEFINE_PROMOTE)
EMBER_ACTIVATION_OPS(EMBER_DEFINE_FIRST)
EMBER_ATTENTION_OPS(EMBER_DEFINE_FIRST)
EMBER_CONV_OPS(EMBER_DEFINE_FIRST)
EMBER_INDEXING_OPS(EMBER_DEFINE_FIRST)
EMBER_LOSS_OPS(EMBER_DEFINE_FIRST)
EMBER_NORM_OPS(EMBER_DEFINE_FIRST)
EMBER_OPTIM_OPS(EMBER_DEFINE_FIRST)
EMBER_POOLING_OPS(EMBER_DEFINE_FIRST)
#undef EMBER_DEFINE_PROMOTE
#undef EMBER_DEFINE_FIRST
#undef EMBER_DEFINE_UNARY

namespace {
const bool kernels_registered = [] {
  register_all_kernels();
  autograd::install_autograd();
  amp::install_autocast();
  return true;
}();
}  // namespace

}  // namespace ember::op
