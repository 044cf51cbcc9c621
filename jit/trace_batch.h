// Making a traced graph's batch size symbolic (Note [Dynamic batch] in jit/trace.cpp).
#pragma once

#include "jit/graph.h"

namespace ember::jit {

// `g` was traced at batch b and `other` at batch b + 1. When both have the
// same structure, every size and integer attribute of `g` that differs
// becomes coeff*N + offset, and g.dynamic_batch is set; returns "". Otherwise
// `g` is left static and the returned text says where the graphs part.
// Attributes that differ but cannot be symbolic add a warning to `warnings`.
std::string merge_batch(Graph& g, const Graph& other, int64_t b, std::vector<std::string>& warnings);

}  // namespace ember::jit
