// Dispatched ops of one neural-network family: gather, scatter, scatter_add, index_select, index_add, masked_select, repeat, flip, roll.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature).
#pragma once

// clang-format off
#define EMBER_INDEXING_OPS(X)
// clang-format on
