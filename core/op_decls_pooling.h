// Dispatched ops of one neural-network family: pooling, pad, interpolate.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature).
#pragma once

// clang-format off
#define EMBER_POOLING_OPS(X)
// clang-format on
