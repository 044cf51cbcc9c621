// The dynamic-batch merge of two traces (jit/trace_batch.h).
#include "jit/trace_batch.h"

#include "jit/attribute.h"
#include "jit/op_traits.h"

namespace ember::jit {
namespace {

// The affine function through (b, at_b) and (b + 1, at_next).
SymDim fit(int64_t at_b, int64_t at_next, int64_t b) {
  const int64_t coeff = at_next - at_b;
  return SymDim{coeff, at_b - coeff * b};
}

std::string node_ref(const Node& n) { return n.outputs.empty() ? n.name() : n.outputs[0]->ref() + " = " + n.name(); }

// Shapes: "" when they can merge, else why not.
std::string mergeable_shape(const Value& v, const Value& w, int64_t b) {
  if (v.defined != w.defined || v.shape.size() != w.shape.size())
    return v.ref() + " has " + std::to_string(v.shape.size()) + " dims at batch " + std::to_string(b) + " but " +
           std::to_string(w.shape.size()) + " at batch " + std::to_string(b + 1);
  return "";
}

// An integer attribute (int, int[], integral Scalar) made symbolic; false when
// the two attributes differ in a way a SymDim cannot say.
bool merge_ints(Arg& a, const IValue& other, int64_t b) {
  const IValue::Payload& p = a.constant.payload();
  const IValue::Payload& q = other.payload();
  if (p.index() != q.index()) return false;
  if (const auto* x = std::get_if<int64_t>(&p)) {
    a.sym = {fit(*x, std::get<int64_t>(q), b)};
    return true;
  }
  if (const auto* x = std::get_if<Scalar>(&p)) {
    const Scalar& y = std::get<Scalar>(q);
    if (!x->is_integral() || !y.is_integral()) return false;
    a.sym = {fit(x->to<int64_t>(), y.to<int64_t>(), b)};
    return true;
  }
  if (const auto* x = std::get_if<std::vector<int64_t>>(&p)) {
    const auto& y = std::get<std::vector<int64_t>>(q);
    if (x->size() != y.size()) return false;
    a.sym.clear();
    for (size_t i = 0; i < x->size(); ++i) a.sym.push_back(fit((*x)[i], y[i], b));
    return true;
  }
  return false;
}

}  // namespace

std::string merge_batch(Graph& g, const Graph& other, int64_t b, std::vector<std::string>& warnings) {
  const std::string at = " at batch sizes " + std::to_string(b) + " and " + std::to_string(b + 1);
  if (g.inputs().size() != other.inputs().size() || g.nodes().size() != other.nodes().size() ||
      g.outputs().size() != other.outputs().size())
    return "the traces" + at + " record different numbers of ops (" + std::to_string(g.nodes().size()) + " vs " +
           std::to_string(other.nodes().size()) + ")";
  // Structure first, so that a failed merge leaves g untouched.
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = *g.nodes()[i];
    const Node& m = *other.nodes()[i];
    if (n.op != m.op || n.outputs.size() != m.outputs.size())
      return "op " + std::to_string(i) + " is " + n.name() + " at batch " + std::to_string(b) + " but " + m.name() +
             " at batch " + std::to_string(b + 1);
    for (size_t k = 0; k < n.args.size(); ++k) {
      const Arg& x = n.args[k];
      const Arg& y = m.args[k];
      bool same = x.kind == y.kind;
      if (same && x.kind == Arg::Kind::Value) same = x.value->id == y.value->id;
      if (same && x.kind == Arg::Kind::ValueList) {
        same = x.values.size() == y.values.size();
        for (size_t j = 0; same && j < x.values.size(); ++j)
          same = (x.values[j] == nullptr) == (y.values[j] == nullptr) && (!x.values[j] || x.values[j]->id == y.values[j]->id);
      }
      if (!same)
        return "node " + node_ref(n) + " reads different values" + at + " (argument '" +
               n.op->schema().args[k].name + "')";
    }
  }
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (g.outputs()[i]->id != other.outputs()[i]->id) return "graph output " + std::to_string(i) + " differs" + at;

  std::vector<const Value*> by_id(static_cast<size_t>(other.next_id()), nullptr);
  for (const auto& v : other.values()) by_id[static_cast<size_t>(v->id)] = v.get();
  auto counterpart = [&](const Value& v) {
    return static_cast<size_t>(v.id) < by_id.size() ? by_id[static_cast<size_t>(v.id)] : nullptr;
  };
  for (const auto& v : g.values()) {
    const Value* w = counterpart(*v);
    if (w == nullptr) return "value " + v->ref() + " has no counterpart" + at;
    const std::string why = mergeable_shape(*v, *w, b);
    if (!why.empty()) return why;
  }
  for (const auto& v : g.values()) {
    const Value* w = counterpart(*v);
    for (size_t d = 0; d < v->shape.size(); ++d) v->shape[d] = fit(v->shape[d].offset, w->shape[d].offset, b);
    if (v->kind == ValueKind::Constant && !(v->shape == static_shape(v->constant.sizes()))) {
      warnings.push_back("trace: constant " + v->ref() + " has shape " + shape_string(static_shape(v->constant.sizes())) +
                         " at batch " + std::to_string(b) + " and " + shape_string(static_shape(w->constant.sizes())) +
                         " at batch " + std::to_string(b + 1) + "; the graph keeps the first, valid for that batch only");
      v->shape = static_shape(v->constant.sizes());
    }
  }
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    Node& n = *g.nodes()[i];
    const Node& m = *other.nodes()[i];
    n.random_blocks = fit(n.random_blocks.offset, m.random_blocks.offset, b);
    const size_t seed = is_random(*n.op) ? seed_arg(*n.op) : n.args.size();
    for (size_t k = 0; k < n.args.size(); ++k) {
      Arg& x = n.args[k];
      if (x.kind != Arg::Kind::Constant || k == seed || k == seed + 1) continue;
      if (same_attribute(x.constant, m.args[k].constant)) continue;
      if (!merge_ints(x, m.args[k].constant, b))
        warnings.push_back("trace: argument '" + n.op->schema().args[k].name + "' of " + node_ref(n) + " is " +
                           x.constant.to_string() + " at batch " + std::to_string(b) + " but " +
                           m.args[k].constant.to_string() + " at batch " + std::to_string(b + 1) +
                           "; the graph keeps the first, valid for that batch only");
    }
  }
  g.dynamic_batch = true;
  return "";
}

}  // namespace ember::jit
