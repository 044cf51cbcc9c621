// Dead-code elimination: removes nodes none of whose outputs is used, unless
// they have side effects (jit/op_traits.h), then unused constants.
#include <algorithm>

#include "jit/op_traits.h"
#include "jit/passes/pass.h"

namespace ember::jit {

int eliminate_dead_code(Graph& g, PassLog& log) {
  std::vector<int64_t> uses = g.use_counts();
  std::vector<const Node*> dead;
  const auto& nodes = g.nodes();
  for (size_t i = nodes.size(); i-- > 0;) {
    const Node& n = *nodes[i];
    if (has_side_effects(*n.op)) continue;
    bool used = false;
    for (const Value* v : n.outputs) used = used || uses[static_cast<size_t>(v->id)] > 0;
    if (used) continue;
    for (const Value* v : n.input_values()) --uses[static_cast<size_t>(v->id)];
    log.push_back("dce: removed " + describe_node(n) + " (no output used)");
    dead.push_back(&n);
  }
  g.remove_nodes_if([&](const Node& n) { return std::find(dead.begin(), dead.end(), &n) != dead.end(); });
  const size_t before = g.constants().size();
  g.remove_unused_constants();
  const size_t removed = before - g.constants().size();
  if (removed) log.push_back("dce: removed " + std::to_string(removed) + " unused constants");
  return static_cast<int>(dead.size() + removed);
}

}  // namespace ember::jit
