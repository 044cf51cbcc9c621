// Alias classes of a graph (jit/passes/alias.h).
#include "jit/passes/alias.h"

#include <numeric>

#include "jit/op_traits.h"

namespace ember::jit {

std::vector<char> volatile_values(const Graph& g) {
  const auto n = static_cast<size_t>(g.next_id());
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto find = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<size_t> written;
  for (const auto& node : g.nodes()) {
    const bool view = is_view(*node->op);
    const auto& schema = node->op->schema().args;
    for (size_t i = 0; i < node->args.size(); ++i) {
      const Arg& a = node->args[i];
      if (a.kind != Arg::Kind::Value) continue;
      const bool written_here = schema[i].type.find('!') != std::string::npos;
      const bool aliased = written_here || (view && schema[i].type.find('(') != std::string::npos);
      if (written_here) written.push_back(static_cast<size_t>(a.value->id));
      if (!aliased) continue;
      for (const Value* out : node->outputs) parent[find(static_cast<size_t>(out->id))] = find(static_cast<size_t>(a.value->id));
    }
  }
  std::vector<char> hot(n, 0);
  for (size_t w : written) hot[find(w)] = 1;
  std::vector<char> vol(n, 0);
  for (size_t i = 0; i < n; ++i) vol[i] = hot[find(i)];
  return vol;
}

bool touches_volatile(const Node& n, const std::vector<char>& vol) {
  // Values made after the analysis (a pass's new constants) are not volatile.
  auto hot = [&](const Value* v) { return static_cast<size_t>(v->id) < vol.size() && vol[static_cast<size_t>(v->id)]; };
  for (const Value* v : n.input_values())
    if (hot(v)) return true;
  for (const Value* v : n.outputs)
    if (hot(v)) return true;
  return false;
}

}  // namespace ember::jit
