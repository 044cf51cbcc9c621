// Comparing and hashing node attributes (constant IValues), for the
// dynamic-batch merge and common-subexpression elimination.
#pragma once

#include <cstddef>

#include "core/ivalue.h"

namespace ember::jit {

// Same type and same value, bit for bit for floats. Tensors compare by identity.
bool same_attribute(const IValue& a, const IValue& b);
size_t hash_attribute(const IValue& v);

}  // namespace ember::jit
