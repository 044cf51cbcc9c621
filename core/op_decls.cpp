// Defines the op objects declared in core/op_decls.h. Each registers itself
// with the dispatcher when it is constructed; the kernels, formulas and
// layers are attached to them afterwards by the composition root
// (wiring/wire.cpp).
//
// Note [Op objects are constructed first]
// The op objects and the composition root's initialiser live in different
// files, whose static initialisers run in an order C++ leaves open. The op
// objects are therefore given an init_priority (GCC and Clang run prioritised
// initialisers of a library before the unprioritised ones), so every op
// exists before the first kernel is registered against it.
#include "core/op_decls.h"
#include "core/op_decls_activation.h"
#include "core/op_decls_attention.h"
#include "core/op_decls_conv.h"
#include "core/op_decls_fused.h"
#include "core/op_decls_indexing.h"
#include "core/op_decls_linalg.h"
#include "core/op_decls_loss.h"
#include "core/op_decls_norm.h"
#include "core/op_decls_optim.h"
#include "core/op_decls_pooling.h"
#include "core/op_decls_rnn.h"

namespace ember::op {

#define EMBER_OP_INIT __attribute__((init_priority(200)))

#define EMBER_DEFINE_PROMOTE(name, schema, sig) TypedOp<sig> name EMBER_OP_INIT{schema, DTypeRule::Promote};
#define EMBER_DEFINE_FIRST(name, schema, sig) TypedOp<sig> name EMBER_OP_INIT{schema, DTypeRule::FirstTensor};
#define EMBER_DEFINE_UNARY(name)                                                                 \
  TypedOp<Tensor(const Tensor&)> name EMBER_OP_INIT{#name "(Tensor self) -> Tensor", DTypeRule::FirstTensor}; \
  TypedOp<Tensor(const Tensor&)> name##_ EMBER_OP_INIT{#name "_(Tensor(a!) self) -> Tensor(a!)",            \
                                                      DTypeRule::FirstTensor};
EMBER_BINARY_OPS(EMBER_DEFINE_PROMOTE)
EMBER_UNARY_OPS(EMBER_DEFINE_UNARY)
EMBER_FIRST_TENSOR_OPS(EMBER_DEFINE_FIRST)
EMBER_PROMOTE_OPS(EMBER_DEFINE_PROMOTE)
EMBER_ACTIVATION_OPS(EMBER_DEFINE_FIRST)
EMBER_ATTENTION_OPS(EMBER_DEFINE_FIRST)
EMBER_CONV_OPS(EMBER_DEFINE_FIRST)
EMBER_FUSED_OPS(EMBER_DEFINE_FIRST)
EMBER_INDEXING_OPS(EMBER_DEFINE_FIRST)
EMBER_LINALG_OPS(EMBER_DEFINE_FIRST)
EMBER_LOSS_OPS(EMBER_DEFINE_FIRST)
EMBER_NORM_OPS(EMBER_DEFINE_FIRST)
EMBER_OPTIM_OPS(EMBER_DEFINE_FIRST)
EMBER_POOLING_OPS(EMBER_DEFINE_FIRST)
EMBER_RNN_OPS(EMBER_DEFINE_FIRST)
#undef EMBER_DEFINE_PROMOTE
#undef EMBER_DEFINE_FIRST
#undef EMBER_DEFINE_UNARY
#undef EMBER_OP_INIT

}  // namespace ember::op
