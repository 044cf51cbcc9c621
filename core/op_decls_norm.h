// Dispatched ops of one neural-network family: batch_norm, layer_norm, group_norm, rms_norm, softmax, log_softmax.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature).
#pragma once

// clang-format off
#define EMBER_NORM_OPS(X)
// clang-format on
