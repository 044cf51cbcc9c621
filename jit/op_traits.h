// What the passes and the executor need to know about an op, read from its
// schema so that no op needs a table entry of its own.
#pragma once

#include "core/dispatcher.h"

namespace ember::jit {

// An argument written in place ("Tensor(a!)").
bool mutates(const OpEntry& op);
// The result aliases an argument ("-> Tensor(a)"): view, transpose, select...
bool is_view(const OpEntry& op);
// Draws random numbers: has "int seed, int offset" arguments (dropout,
// uniform_, bernoulli_, multinomial, ...).
bool is_random(const OpEntry& op);
// Index of the "seed" argument of a random op (the "offset" one follows).
size_t seed_arg(const OpEntry& op);
// Passes may remove, merge or reorder a node only when this is false.
inline bool has_side_effects(const OpEntry& op) { return mutates(op) || is_random(op); }

}  // namespace ember::jit
