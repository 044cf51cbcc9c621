// The graph executor (jit/executor.h).
#include "jit/executor.h"

#include <algorithm>
#include <sstream>

#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "ember/autograd.h"
#include "ember/generator.h"
#include "jit/op_traits.h"

namespace ember::jit {
namespace {

// A fused group whose inputs require grad runs as its unfused ops, which
// autograd records one by one (the fused op has no derivative formula).
bool run_fused_with_autograd(const Node& node, Stack& stack) {
  if (node.op != &op::_fused_elementwise.entry() || !is_grad_enabled()) return false;
  const TensorList& inputs = stack.at(0).tensor_list();
  if (std::none_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.requires_grad(); })) return false;
  const auto& expr = std::get<std::string>(stack.at(1).payload());
  Tensor out = fused::run_unfused(fused::FusedProgram::parse(expr, inputs.size(), "run graph"), inputs);
  stack.clear();
  stack.emplace_back(IValue::Payload(std::move(out)));
  return true;
}

}  // namespace

int64_t check_inputs(const Graph& g, const std::vector<Tensor>& inputs, const std::string& who) {
  const auto& expected = g.inputs();
  EMBER_CHECK(inputs.size() == expected.size(), who, ": the graph takes ", expected.size(), " inputs, got ",
              inputs.size());
  int64_t n = 0;
  bool have_n = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = *expected[i];
    const Tensor& t = inputs[i];
    EMBER_CHECK(t.defined(), who, ": input '", v.name, "' is an undefined tensor");
    auto mismatch = [&](const std::string& rule) {
      std::ostringstream os;
      os << who << ": input '" << v.name << "' has shape " << t.sizes() << " (" << t.dtype() << ", " << t.device()
         << ") but the graph expects " << shape_string(v.shape) << " (" << v.dtype << ", " << v.device << "): " << rule;
      return os.str();
    };
    EMBER_CHECK(t.dtype() == v.dtype, mismatch("the dtype differs"));
    EMBER_CHECK(t.device() == v.device, mismatch("the device differs"));
    EMBER_CHECK(t.dim() == static_cast<int64_t>(v.shape.size()), mismatch("the number of dims differs"));
    for (size_t d = 0; d < v.shape.size(); ++d) {
      const SymDim& s = v.shape[d];
      const int64_t actual = t.size(static_cast<int64_t>(d));
      if (s.is_static()) {
        EMBER_CHECK(actual == s.offset, mismatch("dim " + std::to_string(d) + " must be " + std::to_string(s.offset)));
        continue;
      }
      if (!have_n) {
        EMBER_CHECK((actual - s.offset) % s.coeff == 0 && (actual - s.offset) / s.coeff >= 1,
                    mismatch("dim " + std::to_string(d) + " (" + to_string(s) + ") fits no batch size N >= 1"));
        n = (actual - s.offset) / s.coeff;
        have_n = true;
      }
      EMBER_CHECK(s.eval(n) == actual, mismatch("dim " + std::to_string(d) + " must be " + std::to_string(s.eval(n)) +
                                                " for batch size " + std::to_string(n)));
    }
  }
  return n;
}

std::vector<Tensor> run_graph(const Graph& g, const std::vector<Tensor>& inputs, const NodeObserver& observe) {
  const int64_t n = check_inputs(g, inputs, "run graph");
  const auto& nodes = g.nodes();
  // env[id]: the tensor of each live value; last_use[id]: the node after which it can go.
  std::vector<Tensor> env(static_cast<size_t>(g.next_id()));
  std::vector<size_t> last_use(env.size(), 0);
  std::vector<char> keep(env.size(), 0);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const Value* v : nodes[i]->input_values()) last_use[static_cast<size_t>(v->id)] = i;
  for (const Value* v : g.outputs()) keep[static_cast<size_t>(v->id)] = 1;
  for (size_t i = 0; i < inputs.size(); ++i) env[static_cast<size_t>(g.inputs()[i]->id)] = inputs[i];
  for (const Value* c : g.constants()) env[static_cast<size_t>(c->id)] = c->constant;

  Stack stack;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = *nodes[i];
    stack.clear();
    for (const Arg& a : node.args) {
      switch (a.kind) {
        case Arg::Kind::Value: stack.emplace_back(IValue::Payload(env[static_cast<size_t>(a.value->id)])); break;
        case Arg::Kind::ValueList: {
          TensorList list;
          for (const Value* v : a.values) list.push_back(v ? env[static_cast<size_t>(v->id)] : Tensor());
          stack.emplace_back(IValue::Payload(std::move(list)));
          break;
        }
        case Arg::Kind::Constant: stack.push_back(a.materialize(n)); break;
      }
    }
    if (is_random(*node.op)) {  // fresh numbers on every run (Node::random_blocks)
      Generator& gen = default_generator();
      const size_t s = seed_arg(*node.op);
      stack[s] = IValue::Payload(static_cast<int64_t>(gen.seed()));
      stack[s + 1] = IValue::Payload(static_cast<int64_t>(gen.reserve(static_cast<uint64_t>(node.random_blocks.eval(n)))));
    }
    if (!run_fused_with_autograd(node, stack)) Dispatcher::call_boxed(*node.op, Dispatcher::boxed_key_set(stack), stack);
    std::vector<Tensor> results;
    if (node.list_output) results = stack.at(0).tensor_list();
    else
      for (const IValue& v : stack) results.push_back(v.is_tensor() ? v.tensor() : Tensor());
    EMBER_CHECK(results.size() == node.outputs.size(), "run graph: node ", node.outputs.at(0)->ref(), " = ",
                node.name(), " returned ", results.size(), " tensors, the graph expects ", node.outputs.size());
    for (size_t k = 0; k < results.size(); ++k) env[static_cast<size_t>(node.outputs[k]->id)] = results[k];
    if (observe) observe(node, results);
    for (const Value* v : node.input_values()) {
      const auto id = static_cast<size_t>(v->id);
      if (last_use[id] == i && !keep[id] && v->kind == ValueKind::NodeOutput) env[id] = Tensor();
    }
  }
  std::vector<Tensor> out;
  for (const Value* v : g.outputs()) out.push_back(env[static_cast<size_t>(v->id)]);
  return out;
}

}  // namespace ember::jit
