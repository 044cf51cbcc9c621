// Dispatched ops of one neural-network family: convolutions (conv1d, conv2d, conv_transpose2d) and their backward.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature).
#pragma once

// clang-format off
#define EMBER_CONV_OPS(X)
// clang-format on
