// Elementwise fusion: chains and trees of elementwise ops become one
// `_fused_elementwise` node whose program (core/fused_program.h) the CPU
// kernel evaluates in one pass over memory (on CUDA: Note [Fused groups on
// CUDA] in kernels/cuda/cuda_fused_ops.cpp).
//
// Note [Elementwise fusion]
// Walking the graph from its end, each fusible node not yet in a group roots
// a new one; the group then absorbs the producer of any of its inputs when
// that producer is fusible too, has the group's dtype and device, and every
// use of its output lies inside the group (an intermediate that escapes to
// another node or a graph output must be materialised, so its producer stays
// outside and its output becomes a group input). Absorbing is repeated until
// nothing changes, so a value read twice inside the group (x * sigmoid(x))
// joins once both readers have. A group of two or more nodes replaces its
// root: the root node becomes the fused node (its output keeps its id, which
// is how the self-check matches it) and the other members go.
//
// A sum or mean over every element (dim=[], no dtype) or over the last dim
// (dim=[-1] or [rank - 1], keepdim or not) may root a group: the group's
// elementwise producers are evaluated and added up in one pass, and the
// reduction is the program's last instruction. As for every member, the
// producers' outputs must have no reader outside the group.
//
// Fusible: an op of the fused table (add, sub, mul, div, maximum, minimum,
// where, the unary math ops, relu, silu, gelu, leaky_relu, clamp), one
// defined floating-point output on the CPU (or float32 / float64 on a CUDA
// device, for an op with a CUDA kernel), every tensor argument of the
// output's dtype and device (where's condition: bool), or a 0-dim constant,
// which becomes a number in the program. Nodes with side effects and nodes
// touching memory that an in-place node writes (alias.h) are never moved.
// Every producer left out of a group is logged with the reason.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "jit/op_traits.h"
#include "jit/passes/alias.h"
#include "jit/passes/pass.h"

namespace ember::jit {
namespace {

using fused::FusedOp;

// A 0-dim constant: a number in the program.
bool is_number(const Value* v) { return v->kind == ValueKind::Constant && v->shape.empty() && v->constant.defined(); }

std::optional<double> number_attribute(const IValue& v) {
  const auto& p = v.payload();
  if (const auto* s = std::get_if<Scalar>(&p)) return s->to_double();
  if (const auto* d = std::get_if<double>(&p)) return *d;
  if (const auto* i = std::get_if<int64_t>(&p)) return static_cast<double>(*i);
  if (const auto* b = std::get_if<bool>(&p)) return *b ? 1.0 : 0.0;
  return std::nullopt;
}

// A reduction's dim attribute: every element ([]), or the last dim of its
// input ([-1] or [rank - 1], rank >= 1).
bool reduces_all_or_last(const Node& n, const IValue::Payload& dim) {
  const auto* dims = std::get_if<std::vector<int64_t>>(&dim);
  if (dims == nullptr) return false;
  if (dims->empty()) return true;
  const Value* in = n.args.at(0).kind == Arg::Kind::Value ? n.args[0].value : nullptr;
  const auto rank = in ? static_cast<int64_t>(in->shape.size()) : 0;
  return dims->size() == 1 && rank >= 1 && ((*dims)[0] == -1 || (*dims)[0] == rank - 1);
}

// The dim attribute of a reduction the pass fuses: over the last dim?
bool reduces_last_dim(const IValue& dim) {
  const auto* dims = std::get_if<std::vector<int64_t>>(&dim.payload());
  return dims != nullptr && !dims->empty();
}

// "" when `n` can be an instruction of a fused program, else why not.
std::string why_not_fusible(const Node& n, const std::vector<char>& vol) {
  FusedOp op;
  if (mutates(*n.op)) return "it writes its input in place";
  if (!fused::find_op(n.name(), op)) return "not an elementwise op the fused kernel has";
  if (n.outputs.size() != 1 || !n.outputs[0]->defined) return "not one defined output";
  const Value& out = *n.outputs[0];
  if (!is_floating_point(out.dtype))
    return "its output is " + std::string(dtype_name(out.dtype)) + " (fused groups are floating-point)";
  if (out.device.is_cuda()) {
    if (out.dtype != DType::Float32 && out.dtype != DType::Float64)
      return "its output is " + std::string(dtype_name(out.dtype)) + " on " + out.device.str() +
             " (fused groups on CUDA are float32 or float64)";
    if (!op::_fused_elementwise.entry().backend_kernel(DispatchKey::CUDA, out.dtype).present())
      return "this build has no CUDA kernel for fused groups";
    // With gradients recorded a group runs as its unfused ops (jit/executor.cpp).
    if (!n.op->backend_kernel(DispatchKey::CUDA, out.dtype).present()) return "it has no CUDA kernel";
  } else if (!out.device.is_cpu()) {
    return "it runs on " + out.device.str() + " (fused kernels run on the cpu and CUDA)";
  }
  if (touches_volatile(n, vol)) return "it reads memory that an in-place op writes (aliasing)";
  if (fused::FusedProgram::is_reduction(op)) {
    for (size_t a = 0; a < n.args.size(); ++a) {
      const std::string& name = n.op->schema().args[a].name;
      const auto& c = n.args[a].constant.payload();
      if (name == "dim" && !reduces_all_or_last(n, c))
        return "it reduces over some dims (only sums and means of every element or of the last dim fuse)";
      if (name == "dtype" && !n.args[a].constant.is_none()) return "it converts the dtype while it reduces";
    }
  }
  bool any_tensor = false;
  for (size_t a = 0; a < n.args.size(); ++a) {
    const Arg& arg = n.args[a];
    if (arg.kind == Arg::Kind::ValueList) return "it takes a tensor list";
    if (arg.kind != Arg::Kind::Value) {
      if (!arg.sym.empty()) return "an argument depends on the batch size";
      continue;
    }
    const Value* v = arg.value;
    const bool condition = op == FusedOp::Where && a == 0;
    if (!condition && is_number(v)) continue;
    any_tensor = true;
    const DType want = condition ? DType::Bool : out.dtype;
    if (v->dtype != want)
      return "dtype change: " + v->ref() + " is " + std::string(dtype_name(v->dtype)) + ", the output " +
             std::string(dtype_name(out.dtype));
    if (v->device != out.device) return "different devices: " + v->ref() + " is on " + v->device.str();
  }
  return any_tensor ? "" : "every operand is a constant";
}

struct Group {
  std::vector<const Node*> members;  // in graph order once complete
  DType dtype;
  Device device;
};

class Fuser {
 public:
  Fuser(Graph& g, PassLog& log) : g_(g), log_(log), vol_(volatile_values(g)) {
    for (size_t i = 0; i < g.nodes().size(); ++i) position_[g.nodes()[i].get()] = i;
    for (const auto& node : g.nodes())
      for (const Value* v : node->input_values()) consumers_[v].push_back(node.get());
    for (const Value* v : g.outputs()) escapes_[v] = true;
  }

  int run() {
    int fused = 0;
    const auto& nodes = g_.nodes();
    std::vector<const Node*> order;
    for (const auto& n : nodes) order.push_back(n.get());
    std::vector<const Node*> dead;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Node* root = *it;
      if (grouped_.count(root)) continue;
      if (const std::string why = why_not_fusible(*root, vol_); !why.empty()) {
        FusedOp op;
        if (fused::find_op(root->name(), op) && fused::FusedProgram::is_reduction(op))
          log_.push_back("fusion: " + describe_node(*root) + " does not end a group: " + why);
        continue;
      }
      Group group = grow(root);
      if (group.members.size() < 2) continue;
      if (!rewrite(group)) continue;
      for (const Node* m : group.members)
        if (m != root) dead.push_back(m);
      ++fused;
    }
    g_.remove_nodes_if([&](const Node& n) { return std::find(dead.begin(), dead.end(), &n) != dead.end(); });
    return fused;
  }

 private:
  Group grow(const Node* root) {
    Group group{{root}, root->outputs[0]->dtype, root->outputs[0]->device};
    grouped_.insert(root);
    std::unordered_map<const Node*, std::string> left_out;  // producer -> why, for the log
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t m = 0; m < group.members.size(); ++m) {
        for (const Value* v : group.members[m]->input_values()) {
          if (v->kind != ValueKind::NodeOutput || grouped_.count(v->producer)) continue;
          const Node* p = v->producer;
          const std::string why = why_absorb_fails(*p, group);
          if (!why.empty()) {
            left_out[p] = why;
            continue;
          }
          group.members.push_back(p);
          grouped_.insert(p);
          left_out.erase(p);
          changed = true;
        }
      }
    }
    std::vector<std::pair<const Node*, std::string>> outside(left_out.begin(), left_out.end());
    std::sort(outside.begin(), outside.end(), [&](const auto& a, const auto& b) {
      return position_[a.first] > position_[b.first];  // the log reads from the group's root backwards
    });
    for (const auto& [p, why] : outside) {
      if (grouped_.count(p)) continue;
      log_.push_back("fusion: " + describe_node(*p) + " stays outside the group of " + root->outputs[0]->ref() +
                     ": " + why);
    }
    std::sort(group.members.begin(), group.members.end(),
              [&](const Node* a, const Node* b) { return position_[a] < position_[b]; });
    return group;
  }

  std::string why_absorb_fails(const Node& p, const Group& group) {
    std::string why = why_not_fusible(p, vol_);
    if (!why.empty()) return why;
    FusedOp op;
    if (fused::find_op(p.name(), op) && fused::FusedProgram::is_reduction(op)) return "a reduction ends a group";
    const Value* out = p.outputs[0];
    if (out->dtype != group.dtype)
      return "dtype change: " + std::string(dtype_name(out->dtype)) + " into a " + std::string(dtype_name(group.dtype)) +
             " group";
    if (out->device != group.device) return "different devices";
    if (escapes_.count(out)) return "its output " + out->ref() + " is a graph output";
    for (const Node* c : consumers_[out])
      if (!grouped_.count(c) || !in_group(c, group))
        return "its output " + out->ref() + " is also used by " + c->outputs.at(0)->ref() + " = " + c->name() +
               ", outside the group";
    if (group.members.size() >= fused::kMaxInstructions) return "the group is full";
    return "";
  }

  static bool in_group(const Node* n, const Group& group) {
    return std::find(group.members.begin(), group.members.end(), n) != group.members.end();
  }

  // Builds the program and turns the root into the fused node; false (and
  // a log line) when the group cannot be one node.
  bool rewrite(const Group& group) {
    std::vector<Value*> inputs;
    std::unordered_map<const Node*, int32_t> temp;
    fused::FusedProgram program;
    auto input_index = [&](Value* v) {
      auto it = std::find(inputs.begin(), inputs.end(), v);
      if (it == inputs.end()) {
        inputs.push_back(v);
        return static_cast<int32_t>(inputs.size() - 1);
      }
      return static_cast<int32_t>(it - inputs.begin());
    };
    for (const Node* n : group.members) {
      fused::Instruction ins;
      fused::find_op(n->name(), ins.op);
      ins.arity = fused::op_arity(ins.op);
      int operand = 0;
      for (size_t a = 0; a < n->args.size(); ++a) {
        const Arg& arg = n->args[a];
        const std::string& name = n->op->schema().args[a].name;
        if (arg.kind == Arg::Kind::Value) {
          fused::Operand& o = ins.args[operand++];
          Value* v = arg.value;
          const bool condition = ins.op == FusedOp::Where && a == 0;
          if (v->kind == ValueKind::NodeOutput && temp.count(v->producer)) {
            o.kind = fused::Operand::Kind::Temp;
            o.index = temp[v->producer];
          } else if (!condition && is_number(v)) {
            o.kind = fused::Operand::Kind::Number;
            o.number = v->constant.to(kFloat64).item<double>();
          } else {
            o.kind = fused::Operand::Kind::Input;
            o.index = input_index(v);
          }
          continue;
        }
        const std::optional<double> x = number_attribute(arg.constant);
        if (name == "alpha") ins.alpha = x.value_or(1.0);
        else if (name == "negative_slope") ins.slope = x.value_or(0.01);
        else if (name == "min" && x) ins.lo = *x, ins.has_lo = true;
        else if (name == "max" && x) ins.hi = *x, ins.has_hi = true;
        else if (name == "keepdim") ins.keepdim = x.value_or(0.0) != 0.0;
        else if (name == "dim" && fused::FusedProgram::is_reduction(ins.op))
          ins.last_dim = reduces_last_dim(arg.constant);
        else if (name == "approximate")
          ins.tanh = std::get<std::string>(arg.constant.payload()) == "tanh";
      }
      temp[n] = static_cast<int32_t>(program.code.size());
      program.code.push_back(ins);
    }
    const Node* root = group.members.back();
    program.num_inputs = static_cast<int32_t>(inputs.size());
    // The kernel takes its dtype from input 0: put a non-condition input first.
    const std::vector<char> cond = program.condition_inputs();
    const auto first = std::find(cond.begin(), cond.end(), 0);
    if (first == cond.end() || inputs.size() > fused::kMaxInputs) {
      log_.push_back("fusion: the group of " + root->outputs[0]->ref() + " (" + std::to_string(group.members.size()) +
                     " ops) is not fused: " +
                     (first == cond.end() ? "no input has the output's dtype" : "more than 64 inputs"));
      return false;
    }
    const auto k = static_cast<int32_t>(first - cond.begin());
    if (k != 0) {
      std::swap(inputs[0], inputs[static_cast<size_t>(k)]);
      for (fused::Instruction& ins : program.code)
        for (int a = 0; a < ins.arity; ++a) {
          fused::Operand& o = ins.args[a];
          if (o.kind != fused::Operand::Kind::Input) continue;
          if (o.index == 0) o.index = k;
          else if (o.index == k) o.index = 0;
        }
    }
    const std::string expr = program.str();
    std::string names;
    for (const Node* n : group.members) names += (names.empty() ? "" : ", ") + n->name();
    Node& node = const_cast<Node&>(*root);
    node.op = &op::_fused_elementwise.entry();
    Arg list;
    list.kind = Arg::Kind::ValueList;
    list.values = inputs;
    node.args = {list, Arg::of_constant(IValue(IValue::Payload(expr)))};
    log_.push_back("fusion: " + std::to_string(group.members.size()) + " ops (" + names + ") into " +
                   describe_node(node) + ": " + expr);
    return true;
  }

  Graph& g_;
  PassLog& log_;
  std::vector<char> vol_;
  std::unordered_map<const Node*, size_t> position_;
  std::unordered_map<const Value*, std::vector<const Node*>> consumers_;
  std::unordered_map<const Value*, bool> escapes_;
  std::unordered_set<const Node*> grouped_;
};

}  // namespace

int fuse_elementwise(Graph& g, PassLog& log) { return Fuser(g, log).run(); }

}  // namespace ember::jit
