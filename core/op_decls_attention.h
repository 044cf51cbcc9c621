// Dispatched ops of one neural-network family: scaled_dot_product_attention and its backward.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature).
#pragma once

// clang-format off
#define EMBER_ATTENTION_OPS(X)
// clang-format on
