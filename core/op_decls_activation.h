// Dispatched ops of one neural-network family: activations: leaky_relu, elu, hardswish, hardsigmoid, mish, log_sigmoid.
// Entry format as in core/op_decls.h: X(name, schema, C++ signature).
#pragma once

// clang-format off
#define EMBER_ACTIVATION_OPS(X)
// clang-format on
