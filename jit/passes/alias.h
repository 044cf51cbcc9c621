// Which values share memory with a value an in-place node writes.
#pragma once

#include <vector>

#include "jit/graph.h"

namespace ember::jit {

// Indexed by value id: true when the value may alias memory that an in-place
// node of the graph writes (views and in-place results join their input's
// alias class). Passes leave nodes reading such values alone.
std::vector<char> volatile_values(const Graph& g);

// True when any tensor the node reads or writes is volatile.
bool touches_volatile(const Node& n, const std::vector<char>& vol);

}  // namespace ember::jit
