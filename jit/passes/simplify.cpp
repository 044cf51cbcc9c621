// Algebraic simplification:
//   x * 1, 1 * x, x / 1, x + 0, 0 + x, x - 0     -> x
//   transpose(transpose(x, a, b), a, b)          -> x
//   view(view(x, s1), s2)                        -> view(x, s2)
//   view(x, s) where s is x's shape              -> x
// An identity is dropped only when the result has x's dtype, shape and
// device (x * 1 of an int tensor and a float 1 is a float tensor), when
// neither touches volatile memory, and when it would not turn a graph output
// into a graph input or constant (the caller would then receive its own
// tensor back).
#include <algorithm>

#include "ember/autograd.h"
#include "ember/ops.h"
#include "jit/op_traits.h"
#include "jit/passes/alias.h"
#include "jit/passes/pass.h"

namespace ember::jit {
namespace {

bool is_constant_filled_with(const Value* v, double x) {
  if (v == nullptr || v->kind != ValueKind::Constant) return false;
  NoGradGuard no_grad;
  return v->constant.numel() > 0 && (v->constant == x).all().item<bool>();
}

bool same_type(const Value& a, const Value& b) {
  return a.dtype == b.dtype && a.device == b.device && a.shape == b.shape && a.defined && b.defined;
}

int64_t wrap(int64_t d, size_t rank) { return d < 0 ? d + static_cast<int64_t>(rank) : d; }

// The value `n` computes unchanged, or nullptr.
Value* identity_input(const Node& n) {
  const std::string& op = n.name();
  auto value = [&](size_t i) { return n.args[i].kind == Arg::Kind::Value ? n.args[i].value : nullptr; };
  auto scalar_is = [&](size_t i, double x) {
    const auto* s = std::get_if<Scalar>(&n.args[i].constant.payload());
    return n.args[i].sym.empty() && s != nullptr && s->to<double>() == x;
  };
  if (op == "mul") {
    if (is_constant_filled_with(value(1), 1.0)) return value(0);
    if (is_constant_filled_with(value(0), 1.0)) return value(1);
  }
  if (op == "div" && is_constant_filled_with(value(1), 1.0)) return value(0);
  if (op == "add" || op == "sub") {
    if (is_constant_filled_with(value(1), 0.0) || scalar_is(2, 0.0)) return value(0);
    if (op == "add" && is_constant_filled_with(value(0), 0.0) && scalar_is(2, 1.0)) return value(1);
  }
  if (op == "transpose") {
    const Value* inner = value(0);
    if (inner && inner->kind == ValueKind::NodeOutput && inner->producer->name() == "transpose") {
      const Node& t = *inner->producer;
      const size_t rank = t.args[0].value->shape.size();
      const auto dims = [&](const Node& x) {
        int64_t a = wrap(std::get<int64_t>(x.args[1].constant.payload()), rank);
        int64_t b = wrap(std::get<int64_t>(x.args[2].constant.payload()), rank);
        return std::minmax(a, b);
      };
      if (dims(n) == dims(t)) return t.args[0].value;
    }
  }
  if (op == "view" && value(0) && n.outputs[0]->shape == value(0)->shape) return value(0);
  return nullptr;
}

bool is_graph_output(const Graph& g, const Value* v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

}  // namespace

int simplify_algebra(Graph& g, PassLog& log) {
  const std::vector<char> vol = volatile_values(g);
  int changes = 0;
  for (const auto& node : g.nodes()) {
    Node& n = *node;
    if (has_side_effects(*n.op) || touches_volatile(n, vol) || n.outputs.size() != 1) continue;
    Value* out = n.outputs[0];
    if (Value* x = identity_input(n)) {
      if (!same_type(*x, *out) || (is_graph_output(g, out) && x->kind != ValueKind::NodeOutput)) continue;
      log.push_back("simplify: " + describe_node(n) + " is " + x->ref());
      g.replace_all_uses(out, x);
      ++changes;
      continue;
    }
    // view(view(x, s1), s2) -> view(x, s2): the inner view may then be dead.
    // Only when x is a fresh (contiguous) result, which any shape can view.
    const Value* in = n.args[0].value;
    if (n.name() == "view" && in->kind == ValueKind::NodeOutput && in->producer->name() == "view" &&
        in->producer->args[0].value->kind == ValueKind::NodeOutput &&
        !is_view(*in->producer->args[0].value->producer->op)) {
      Value* inner = n.args[0].value;
      n.args[0].value = inner->producer->args[0].value;
      log.push_back("simplify: " + describe_node(n) + " views " + n.args[0].value->ref() + " directly, not " +
                    inner->ref());
      ++changes;
    }
  }
  return changes;
}

}  // namespace ember::jit
