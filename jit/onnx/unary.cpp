// emit_unary (jit/onnx/unary.h): one ONNX operator where ONNX has the op,
// else a composite of ONNX operators (opset 17 has no Gelu, Mish, ...).
#include "jit/onnx/unary.h"

#include <cmath>
#include <map>
#include <numbers>

#include "ember/error.h"

namespace ember::onnx {
namespace {

// Ops that are one ONNX operator of the same meaning.
const std::map<std::string, std::string>& direct_ops() {
  static const std::map<std::string, std::string> ops = {
      {"abs", "Abs"},     {"neg", "Neg"},       {"exp", "Exp"},         {"log", "Log"},   {"sqrt", "Sqrt"},
      {"reciprocal", "Reciprocal"}, {"sin", "Sin"}, {"cos", "Cos"},     {"tan", "Tan"},   {"asin", "Asin"},
      {"acos", "Acos"},   {"atan", "Atan"},     {"sinh", "Sinh"},       {"cosh", "Cosh"}, {"tanh", "Tanh"},
      {"asinh", "Asinh"}, {"acosh", "Acosh"},   {"atanh", "Atanh"},     {"sigmoid", "Sigmoid"},
      {"relu", "Relu"},   {"erf", "Erf"},       {"floor", "Floor"},     {"ceil", "Ceil"}, {"round", "Round"},
      {"sign", "Sign"},   {"hardswish", "HardSwish"}};
  return ops;
}

using Composite = void (*)(const UnaryEmit& e, const std::string& x, const UnaryParams& p);

void to(const UnaryEmit& e, const std::string& op, const std::vector<std::string>& inputs) {
  e.b.add(op, inputs, {e.out});
}
std::string step(const UnaryEmit& e, const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& what) {
  return e.b.op(op, inputs, e.tmp(what));
}

// gelu: x/2 (1 + erf(x / sqrt 2)), or with approximate='tanh'
// x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void gelu(const UnaryEmit& e, const std::string& x, const UnaryParams& p) {
  std::string inner;
  if (p.approximate == "none") {
    inner = step(e, "Erf", {step(e, "Mul", {x, e.number(1.0 / std::numbers::sqrt2)}, "scaled")}, "erf");
  } else if (p.approximate == "tanh") {
    const std::string cube = step(e, "Mul", {step(e, "Mul", {x, x}, "sq"), x}, "cube");
    const std::string sum = step(e, "Add", {x, step(e, "Mul", {cube, e.number(0.044715)}, "cubic")}, "sum");
    inner = step(e, "Tanh", {step(e, "Mul", {sum, e.number(std::sqrt(2.0 / std::numbers::pi))}, "scaled")}, "tanh");
  } else {
    EMBER_FAIL("onnx::export_graph: gelu approximate='", p.approximate, "' (expected 'none' or 'tanh')");
  }
  const std::string half = step(e, "Mul", {x, e.number(0.5)}, "half");
  to(e, "Mul", {half, step(e, "Add", {inner, e.number(1.0)}, "plus1")});
}

// softplus(x; beta, threshold) = x where beta x > threshold, else log(1 + exp(beta x)) / beta.
void softplus(const UnaryEmit& e, const std::string& x, const UnaryParams& p) {
  const std::string bx = step(e, "Mul", {x, e.number(p.beta)}, "beta_x");
  const std::string soft = step(e, "Div", {step(e, "Softplus", {bx}, "softplus"), e.number(p.beta)}, "soft");
  to(e, "Where", {step(e, "Greater", {bx, e.number(p.threshold)}, "linear"), x, soft});
}

const std::map<std::string, Composite>& composites() {
  static const std::map<std::string, Composite> ops = {
      {"rsqrt", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         to(e, "Reciprocal", {step(e, "Sqrt", {x}, "sqrt")});
       }},
      {"log2", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         to(e, "Div", {step(e, "Log", {x}, "log"), e.number(std::numbers::ln2)});
       }},
      {"exp2", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) { to(e, "Pow", {e.number(2.0), x}); }},
      {"log1p", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         to(e, "Log", {step(e, "Add", {x, e.number(1.0)}, "plus1")});
       }},
      {"expm1", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         to(e, "Sub", {step(e, "Exp", {x}, "exp"), e.number(1.0)});
       }},
      {"silu", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         to(e, "Mul", {x, step(e, "Sigmoid", {x}, "sigmoid")});
       }},
      {"mish", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         to(e, "Mul", {x, step(e, "Tanh", {step(e, "Softplus", {x}, "softplus")}, "tanh")});
       }},
      {"log_sigmoid", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         to(e, "Neg", {step(e, "Softplus", {step(e, "Neg", {x}, "neg")}, "softplus")});
       }},
      {"trunc", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {  // sign(x) floor(|x|)
         const std::string floor = step(e, "Floor", {step(e, "Abs", {x}, "abs")}, "floor");
         to(e, "Mul", {step(e, "Sign", {x}, "sign"), floor});
       }},
      {"gelu", gelu},
      {"softplus", softplus},
      {"leaky_relu", [](const UnaryEmit& e, const std::string& x, const UnaryParams& p) {
         attr_float(e.b.add("LeakyRelu", {x}, {e.out}), "alpha", p.slope);
       }},
      {"elu", [](const UnaryEmit& e, const std::string& x, const UnaryParams& p) {
         attr_float(e.b.add("Elu", {x}, {e.out}), "alpha", p.alpha);
       }},
      {"hardsigmoid", [](const UnaryEmit& e, const std::string& x, const UnaryParams&) {
         ::onnx::NodeProto& n = e.b.add("HardSigmoid", {x}, {e.out});
         attr_float(n, "alpha", 1.0 / 6.0);
         attr_float(n, "beta", 0.5);
       }},
      {"clamp", [](const UnaryEmit& e, const std::string& x, const UnaryParams& p) {
         to(e, "Clip", {x, p.lo ? e.number(*p.lo) : "", p.hi ? e.number(*p.hi) : ""});
       }},
  };
  return ops;
}

}  // namespace

bool emit_unary(const UnaryEmit& e, const std::string& name, const std::string& x, const UnaryParams& p) {
  if (auto it = direct_ops().find(name); it != direct_ops().end()) {
    to(e, it->second, {x});
    return true;
  }
  if (auto it = composites().find(name); it != composites().end()) {
    it->second(e, x, p);
    return true;
  }
  return false;
}

const std::vector<std::string>& unary_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, op] : direct_ops()) out.push_back(name);
    for (const auto& [name, fn] : composites()) out.push_back(name);
    return out;
  }();
  return names;
}

}  // namespace ember::onnx
