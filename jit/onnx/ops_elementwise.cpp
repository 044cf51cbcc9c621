// Elementwise ops as ONNX nodes: unary math and activations (unary.h),
// binary arithmetic with ember's type promotion, comparisons, logical ops,
// where, masked_fill, lerp.
#include "ember/ops.h"
#include "jit/onnx/op_table.h"
#include "jit/onnx/unary.h"

namespace ember::onnx {
namespace {

// The unary math ops and activations (jit/onnx/unary.h), on the output dtype.
void unary(NodeExport& e) {
  UnaryParams p;
  const std::string& name = e.node.name();
  if (name == "gelu") p.approximate = e.str_arg(1);
  if (name == "softplus") {
    p.beta = e.float_arg(1);
    p.threshold = e.float_arg(2);
  }
  if (name == "leaky_relu") p.slope = e.float_arg(1);
  if (name == "elu") p.alpha = e.float_arg(1);
  if (name == "clamp") {
    p.lo = e.opt_float(1);
    p.hi = e.opt_float(2);
  }
  const UnaryEmit emit{e.b, e.out(), e.stem(), e.out_dtype()};
  emit_unary(emit, name, e.in_as(0, e.out_dtype()), p);
}

void isnan_isinf(NodeExport& e) {
  const DType t = is_floating_point(e.value(0).dtype) ? e.value(0).dtype : DType::Float32;
  e.b.add(e.node.name() == "isnan" ? "IsNaN" : "IsInf", {e.in_as(0, t)}, {e.out()});
}
void logical_not(NodeExport& e) { e.b.add("Not", {e.in_as(0, DType::Bool)}, {e.out()}); }

// The dtype a binary op computes in: PyTorch's result_type of its inputs
// (a wrapped number counts less than a tensor).
DType compute_dtype(const NodeExport& e, size_t i, size_t j) {
  auto meta = [&](size_t a) {
    const jit::Value& v = e.value(a);
    if (v.kind == jit::ValueKind::Constant) return v.constant;
    return v.shape.empty() ? empty({}, v.dtype) : empty({0}, v.dtype);
  };
  return result_type(meta(i), meta(j));
}

// add / sub: self op (alpha * other).
void add_sub(NodeExport& e) {
  const DType t = e.out_dtype();
  std::string other = e.in_as(1, t);
  const double alpha = e.float_arg(2);
  if (alpha != 1.0) other = e.b.op("Mul", {other, e.b.scalar(alpha, t)}, e.tmp("alpha"));
  e.b.add(e.node.name() == "add" ? "Add" : "Sub", {e.in_as(0, t), other}, {e.out()});
}

void arithmetic(NodeExport& e) {
  static const std::map<std::string, std::string> ops = {
      {"mul", "Mul"}, {"div", "Div"}, {"pow", "Pow"}, {"maximum", "Max"}, {"minimum", "Min"}};
  const DType t = e.out_dtype();
  e.b.add(ops.at(e.node.name()), {e.in_as(0, t), e.in_as(1, t)}, {e.out()});
}

// remainder has the sign of the divisor: Mod for integers, a - floor(a / b) * b for floats.
void remainder(NodeExport& e) {
  const DType t = e.out_dtype();
  const std::string a = e.in_as(0, t), b = e.in_as(1, t);
  if (!is_floating_point(t)) {
    e.b.add("Mod", {a, b}, {e.out()});
    return;
  }
  const std::string q = e.b.op("Floor", {e.b.op("Div", {a, b}, e.tmp("quotient"))}, e.tmp("floor"));
  e.b.add("Sub", {a, e.b.op("Mul", {q, b}, e.tmp("multiple"))}, {e.out()});
}

void compare(NodeExport& e) {
  static const std::map<std::string, std::string> ops = {
      {"eq", "Equal"}, {"lt", "Less"}, {"le", "LessOrEqual"}, {"gt", "Greater"}, {"ge", "GreaterOrEqual"}};
  const DType t = compute_dtype(e, 0, 1);
  const std::vector<std::string> inputs = {e.in_as(0, t), e.in_as(1, t)};
  if (e.node.name() == "ne") {
    e.b.add("Not", {e.b.op("Equal", inputs, e.tmp("equal"))}, {e.out()});
    return;
  }
  e.b.add(ops.at(e.node.name()), inputs, {e.out()});
}

void logical(NodeExport& e) {
  const std::string op = e.node.name() == "logical_and" ? "And" : e.node.name() == "logical_or" ? "Or" : "Xor";
  e.b.add(op, {e.in_as(0, DType::Bool), e.in_as(1, DType::Bool)}, {e.out()});
}

void where(NodeExport& e) {
  const DType t = e.out_dtype();
  e.b.add("Where", {e.in_as(0, DType::Bool), e.in_as(1, t), e.in_as(2, t)}, {e.out()});
}

void masked_fill(NodeExport& e) {
  const DType t = e.out_dtype();
  e.b.add("Where", {e.in_as(1, DType::Bool), e.b.scalar(e.float_arg(2), t), e.in_as(0, t)}, {e.out()});
}

// lerp: self + weight * (end - self)
void lerp(NodeExport& e) {
  const DType t = e.out_dtype();
  const std::string a = e.in_as(0, t);
  const std::string diff = e.b.op("Sub", {e.in_as(1, t), a}, e.tmp("diff"));
  e.b.add("Add", {a, e.b.op("Mul", {e.in_as(2, t), diff}, e.tmp("step"))}, {e.out()});
}

}  // namespace

void add_elementwise_ops(OpTable& table) {
  for (const std::string& name : unary_names()) table[name] = unary;
  table["isnan"] = isnan_isinf;
  table["isinf"] = isnan_isinf;
  table["logical_not"] = logical_not;
  table["add"] = add_sub;
  table["sub"] = add_sub;
  for (const char* name : {"mul", "div", "pow", "maximum", "minimum"}) table[name] = arithmetic;
  table["remainder"] = remainder;
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge"}) table[name] = compare;
  for (const char* name : {"logical_and", "logical_or", "logical_xor"}) table[name] = logical;
  table["where"] = where;
  table["masked_fill"] = masked_fill;
  table["lerp"] = lerp;
}

}  // namespace ember::onnx
