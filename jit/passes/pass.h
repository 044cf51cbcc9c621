// Graph passes: each rewrites a Graph in place and logs what it changed
// (Note [Passes]).
//
// Note [Passes]
// A pass never touches a node with side effects (an in-place op, a random
// op: jit/op_traits.h) and never moves a read or a write of memory that an
// in-place node writes through any alias (volatile values, alias.h): such a
// graph keeps its order and its nodes. Every pass appends one line per change
// to the log, named for the pass ("cse: %7 = mul(...) is %4"), so
// `ember inspect graph --passes` and a failed self-check can say who did what.
// Values a pass keeps keep their ids, which is how the self-check
// (jit/optimize.cpp) matches a value before and after a pass.
#pragma once

#include <string>
#include <vector>

#include "jit/graph.h"

namespace ember::jit {

using PassLog = std::vector<std::string>;
// Returns the number of changes made.
using PassFn = int (*)(Graph& g, PassLog& log);

struct PassInfo {
  const char* name;
  PassFn run;
  const char* summary;
};

// Every pass, in the default pipeline's order.
const std::vector<PassInfo>& all_passes();
const PassInfo& find_pass(const std::string& name);

int eliminate_dead_code(Graph& g, PassLog& log);          // dce.cpp
int eliminate_common_subexpressions(Graph& g, PassLog& log);  // cse.cpp
int fold_constants(Graph& g, PassLog& log);               // constant_folding.cpp
int simplify_algebra(Graph& g, PassLog& log);             // simplify.cpp
int fold_batch_norm(Graph& g, PassLog& log);              // batchnorm_folding.cpp
int fuse_elementwise(Graph& g, PassLog& log);             // fusion.cpp

// "%7 = mul(%3, %c2)": a node for log lines.
std::string describe_node(const Node& n);

}  // namespace ember::jit
