// Common-subexpression elimination: a node with the same op, the same input
// values and the same attributes as an earlier one is replaced by it.
// Nodes with side effects and nodes touching volatile memory are skipped.
#include <algorithm>
#include <unordered_map>

#include "jit/attribute.h"
#include "jit/op_traits.h"
#include "jit/passes/alias.h"
#include "jit/passes/pass.h"

namespace ember::jit {
namespace {

bool same_args(const Node& a, const Node& b) {
  if (a.op != b.op || a.args.size() != b.args.size() || a.outputs.size() != b.outputs.size()) return false;
  for (size_t i = 0; i < a.args.size(); ++i) {
    const Arg& x = a.args[i];
    const Arg& y = b.args[i];
    if (x.kind != y.kind) return false;
    if (x.kind == Arg::Kind::Value && x.value != y.value) return false;
    if (x.kind == Arg::Kind::ValueList && x.values != y.values) return false;
    if (x.kind == Arg::Kind::Constant && (!same_attribute(x.constant, y.constant) || x.sym != y.sym)) return false;
  }
  return true;
}

size_t hash_node(const Node& n) {
  size_t h = std::hash<const void*>{}(n.op);
  for (const Arg& a : n.args) {
    size_t x = a.kind == Arg::Kind::Constant ? hash_attribute(a.constant) : 0;
    if (a.value) x = std::hash<int64_t>{}(a.value->id);
    for (const Value* v : a.values) x = x * 31 + (v ? static_cast<size_t>(v->id) : 7);
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  }
  return h;
}

}  // namespace

int eliminate_common_subexpressions(Graph& g, PassLog& log) {
  const std::vector<char> vol = volatile_values(g);
  std::unordered_multimap<size_t, const Node*> seen;
  std::vector<const Node*> dead;
  for (const auto& node : g.nodes()) {
    const Node& n = *node;
    if (has_side_effects(*n.op) || touches_volatile(n, vol)) continue;
    const size_t h = hash_node(n);
    const Node* earlier = nullptr;
    for (auto [it, end] = seen.equal_range(h); it != end && !earlier; ++it)
      if (same_args(*it->second, n)) earlier = it->second;
    if (!earlier) {
      seen.emplace(h, &n);
      continue;
    }
    log.push_back("cse: " + describe_node(n) + " is " + earlier->outputs.at(0)->ref());
    for (size_t i = 0; i < n.outputs.size(); ++i) g.replace_all_uses(n.outputs[i], earlier->outputs[i]);
    dead.push_back(&n);
  }
  g.remove_nodes_if([&](const Node& n) { return std::find(dead.begin(), dead.end(), &n) != dead.end(); });
  return static_cast<int>(dead.size());
}

}  // namespace ember::jit
