// Dispatched ops of one neural-network family: losses, embedding, dropout.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature).
#pragma once

// clang-format off
#define EMBER_LOSS_OPS(X)
// clang-format on
