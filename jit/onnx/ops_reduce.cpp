// Reductions as ONNX nodes: sum/mean/amax/amin/prod/logsumexp/norm, var/std,
// argmax/argmin, cumsum. An empty dim list reduces every dim, as in ember.
#include "jit/onnx/op_table.h"

namespace ember::onnx {
namespace {

std::vector<int64_t> axes(const NodeExport& e, const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(e.axis(d, e.rank(0)));
  return out;
}

// Opset 17: ReduceSum takes its axes as an input, the others as an attribute.
std::string reduce(NodeExport& e, const std::string& op, const std::string& x, const std::vector<int64_t>& dims,
                   bool keepdim, const std::string& output) {
  const std::vector<int64_t> ax = axes(e, dims);
  std::vector<std::string> inputs = {x};
  if (op == "ReduceSum" && !ax.empty()) inputs.push_back(e.b.ints(ax));
  ::onnx::NodeProto& n = e.b.add(op, inputs, {output});
  if (op != "ReduceSum" && !ax.empty()) attr_ints(n, "axes", ax);
  attr_int(n, "keepdims", keepdim ? 1 : 0);
  return output;
}

// sum(self, dim, keepdim, dtype), prod likewise; mean/amax/amin/logsumexp(self, dim, keepdim).
void reduction(NodeExport& e) {
  static const std::map<std::string, std::string> ops = {{"sum", "ReduceSum"},   {"mean", "ReduceMean"},
                                                         {"amax", "ReduceMax"},  {"amin", "ReduceMin"},
                                                         {"prod", "ReduceProd"}, {"logsumexp", "ReduceLogSumExp"}};
  reduce(e, ops.at(e.node.name()), e.in_as(0, e.out_dtype()), e.ints_arg(1), e.bool_arg(2), e.out());
}

// norm(self, p, dim, keepdim): p = 1 and p = 2 only.
void norm(NodeExport& e) {
  const double p = e.float_arg(1);
  if (p != 1.0 && p != 2.0) e.fail("p=" + std::to_string(p) + " (ONNX has ReduceL1 and ReduceL2: p=1 or p=2)");
  reduce(e, p == 1.0 ? "ReduceL1" : "ReduceL2", e.in_as(0, e.out_dtype()), e.ints_arg(2), e.bool_arg(3), e.out());
}

// var / std(self, dim, correction, keepdim): sum((x - mean)^2) / (count - correction).
void var_std(NodeExport& e) {
  const DType t = e.out_dtype();
  const std::string x = e.in_as(0, t);
  std::vector<int64_t> dims = e.ints_arg(1);
  if (dims.empty())
    for (int64_t d = 0; d < e.rank(0); ++d) dims.push_back(d);
  int64_t count = 1;
  for (int64_t d : axes(e, dims)) {
    const jit::SymDim& size = e.value(0).shape.at(static_cast<size_t>(d));
    if (!size.is_static()) e.fail("it reduces over a dimension that depends on the batch");
    count *= size.offset;
  }
  const std::string mean = reduce(e, "ReduceMean", x, dims, true, e.tmp("mean"));
  const std::string diff = e.b.op("Sub", {x, mean}, e.tmp("diff"));
  const std::string sq = e.b.op("Mul", {diff, diff}, e.tmp("sq"));
  const std::string total = reduce(e, "ReduceSum", sq, dims, e.bool_arg(3), e.tmp("sum"));
  const double divisor = static_cast<double>(count - e.int_arg(2));
  if (e.node.name() == "var") {
    e.b.add("Div", {total, e.b.scalar(divisor, t)}, {e.out()});
    return;
  }
  e.b.add("Sqrt", {e.b.op("Div", {total, e.b.scalar(divisor, t)}, e.tmp("var"))}, {e.out()});
}

// argmax / argmin(self, dim?, keepdim): without a dim, over the flattened input.
void arg_reduce(NodeExport& e) {
  const std::string op = e.node.name() == "argmax" ? "ArgMax" : "ArgMin";
  const std::optional<int64_t> dim = e.opt_int(1);
  const bool keepdim = e.bool_arg(2);
  if (dim) {
    ::onnx::NodeProto& n = e.b.add(op, {e.in(0)}, {e.out()});
    attr_int(n, "axis", e.axis(*dim, e.rank(0)));
    attr_int(n, "keepdims", keepdim ? 1 : 0);
    return;
  }
  const std::string flat = e.b.op("Reshape", {e.in(0), e.b.ints({-1})}, e.tmp("flat"));
  const std::string index = e.b.op(op, {flat}, e.tmp("index"));
  attr_int(e.b.last(), "axis", 0);
  attr_int(e.b.last(), "keepdims", 0);
  e.b.add("Reshape", {index, e.b.shape(e.out_value().shape)}, {e.out()});
}

// cumsum(self, dim, dtype)
void cumsum(NodeExport& e) {
  e.b.add("CumSum", {e.in_as(0, e.out_dtype()), e.b.scalar(static_cast<double>(e.axis(e.int_arg(1), e.rank(0))),
                                                            DType::Int64)},
          {e.out()});
}

}  // namespace

void add_reduce_ops(OpTable& table) {
  for (const char* name : {"sum", "mean", "amax", "amin", "prod", "logsumexp"}) table[name] = reduction;
  table["norm"] = norm;
  table["var"] = var_std;
  table["std"] = var_std;
  table["argmax"] = arg_reduce;
  table["argmin"] = arg_reduce;
  table["cumsum"] = cumsum;
}

}  // namespace ember::onnx
