// _fused_elementwise (a group the fusion pass merged; Note [Fused
// elementwise programs] in core/fused_program.h) as ONNX nodes: one or a few
// per instruction of its program, so an optimised graph exports as the
// unfused one would.
#include "core/fused_program.h"
#include "jit/onnx/op_table.h"
#include "jit/onnx/unary.h"

namespace ember::onnx {
namespace {

// _fused_elementwise(Tensor[] inputs, str expr)
void fused_elementwise(NodeExport& e) {
  const std::vector<const jit::Value*> inputs = e.values(0);
  const fused::FusedProgram program =
      fused::FusedProgram::parse(e.str_arg(1), inputs.size(), "onnx::export_graph: node " + e.describe());
  const DType t = e.out_dtype();
  const std::vector<char> conditions = program.condition_inputs();
  std::vector<std::string> input_names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const jit::Value* v = inputs[i];
    input_names.push_back(e.b.cast(e.b.name(v), v->dtype, conditions[i] ? DType::Bool : t));
  }
  std::vector<std::string> temps;
  for (size_t k = 0; k < program.code.size(); ++k) {
    const fused::Instruction& ins = program.code[k];
    const bool last = k + 1 == program.code.size();
    const std::string out = last ? e.out() : e.tmp("t" + std::to_string(k));
    std::vector<std::string> args;
    for (int a = 0; a < ins.arity; ++a) {
      const fused::Operand& op = ins.args[a];
      const auto index = static_cast<size_t>(op.index);
      if (op.kind == fused::Operand::Kind::Input) args.push_back(input_names.at(index));
      else if (op.kind == fused::Operand::Kind::Temp) args.push_back(temps.at(index));
      else args.push_back(e.b.scalar(op.number, t));
    }
    const std::string name = fused::op_name(ins.op);
    const std::string stem = e.stem() + "/t" + std::to_string(k);
    switch (ins.op) {
      case fused::FusedOp::Add:
      case fused::FusedOp::Sub: {
        std::string other = args[1];
        if (ins.alpha != 1.0) other = e.b.op("Mul", {other, e.b.scalar(ins.alpha, t)}, stem + "/alpha");
        e.b.add(ins.op == fused::FusedOp::Add ? "Add" : "Sub", {args[0], other}, {out});
        break;
      }
      case fused::FusedOp::Mul: e.b.add("Mul", args, {out}); break;
      case fused::FusedOp::Div: e.b.add("Div", args, {out}); break;
      case fused::FusedOp::Maximum: e.b.add("Max", args, {out}); break;
      case fused::FusedOp::Minimum: e.b.add("Min", args, {out}); break;
      case fused::FusedOp::Where: e.b.add("Where", args, {out}); break;
      case fused::FusedOp::Sum:
      case fused::FusedOp::Mean: {  // over every element (no axes), or the last dim (axes [-1])
        // Opset 17: ReduceSum takes its axes as an input, ReduceMean as an attribute.
        const std::vector<int64_t> axes = ins.last_dim ? std::vector<int64_t>{-1} : std::vector<int64_t>{};
        const bool sum = ins.op == fused::FusedOp::Sum;
        if (sum && ins.last_dim) args.push_back(e.b.ints(axes));
        ::onnx::NodeProto& n = e.b.add(sum ? "ReduceSum" : "ReduceMean", args, {out});
        if (!sum && ins.last_dim) attr_ints(n, "axes", axes);
        attr_int(n, "keepdims", ins.keepdim ? 1 : 0);
        break;
      }
      default: {
        UnaryParams p;
        p.slope = ins.slope;
        if (ins.has_lo) p.lo = ins.lo;
        if (ins.has_hi) p.hi = ins.hi;
        p.approximate = ins.tanh ? "tanh" : "none";
        if (!emit_unary(UnaryEmit{e.b, out, stem, t}, name, args.at(0), p))
          e.fail("its program holds '" + name + "', which has no ONNX mapping");
      }
    }
    temps.push_back(out);
  }
}

}  // namespace

void add_fused_ops(OpTable& table) { table["_fused_elementwise"] = fused_elementwise; }

}  // namespace ember::onnx
