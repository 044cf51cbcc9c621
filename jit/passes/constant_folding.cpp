// Constant folding and propagation: a node whose tensor inputs are all
// constants is run once, now, and its outputs become constants; nodes after
// it may then fold too (one sweep in order). Skipped: side effects, volatile
// memory, attributes that depend on the batch size.
#include <algorithm>

#include "ember/autograd.h"
#include "jit/op_traits.h"
#include "jit/passes/alias.h"
#include "jit/passes/pass.h"

namespace ember::jit {

int fold_constants(Graph& g, PassLog& log) {
  const std::vector<char> vol = volatile_values(g);
  std::vector<const Node*> dead;
  NoGradGuard no_grad;
  for (const auto& node : g.nodes()) {
    const Node& n = *node;
    if (has_side_effects(*n.op) || touches_volatile(n, vol)) continue;
    bool foldable = !n.input_values().empty();
    for (const Value* v : n.input_values()) foldable = foldable && v->kind == ValueKind::Constant;
    for (const Arg& a : n.args) foldable = foldable && a.sym.empty();
    if (!foldable) continue;
    Stack stack;
    for (const Arg& a : n.args) {
      if (a.kind == Arg::Kind::Value) stack.emplace_back(IValue::Payload(a.value->constant));
      else if (a.kind == Arg::Kind::ValueList) {
        TensorList list;
        for (const Value* v : a.values) list.push_back(v ? v->constant : Tensor());
        stack.emplace_back(IValue::Payload(std::move(list)));
      } else {
        stack.push_back(a.constant);
      }
    }
    Dispatcher::call_boxed(*n.op, Dispatcher::boxed_key_set(stack), stack);
    std::vector<Tensor> results;
    if (n.list_output) results = stack.at(0).tensor_list();
    else
      for (const IValue& v : stack) results.push_back(v.is_tensor() ? v.tensor() : Tensor());
    if (results.size() != n.outputs.size() ||
        std::any_of(results.begin(), results.end(), [](const Tensor& t) { return !t.defined(); }))
      continue;
    log.push_back("constant_folding: " + describe_node(n) + " computed once");
    for (size_t i = 0; i < results.size(); ++i) {
      Value* c = g.add_constant(results[i]);
      g.replace_all_uses(n.outputs[i], c);
    }
    dead.push_back(&n);
  }
  g.remove_nodes_if([&](const Node& n) { return std::find(dead.begin(), dead.end(), &n) != dead.end(); });
  g.remove_unused_constants();
  return static_cast<int>(dead.size());
}

}  // namespace ember::jit
