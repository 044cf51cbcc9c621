// Fused elementwise programs: the op table, the parser and printer, and the
// unfused reference (Note [Fused elementwise programs] in core/fused_program.h).
#include "core/fused_program.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>

#include "core/op_decls.h"
#include "core/op_decls_activation.h"
#include "core/tensor_util.h"

namespace ember::fused {
namespace {

struct OpRow {
  FusedOp op;
  const char* name;
  int arity;
};

constexpr OpRow kOps[] = {
    {FusedOp::Add, "add", 2},          {FusedOp::Sub, "sub", 2},
    {FusedOp::Mul, "mul", 2},          {FusedOp::Div, "div", 2},
    {FusedOp::Maximum, "maximum", 2},  {FusedOp::Minimum, "minimum", 2},
    {FusedOp::Where, "where", 3},      {FusedOp::Neg, "neg", 1},
    {FusedOp::Abs, "abs", 1},          {FusedOp::Exp, "exp", 1},
    {FusedOp::Exp2, "exp2", 1},        {FusedOp::Log, "log", 1},
    {FusedOp::Log2, "log2", 1},        {FusedOp::Log1p, "log1p", 1},
    {FusedOp::Expm1, "expm1", 1},      {FusedOp::Sqrt, "sqrt", 1},
    {FusedOp::Rsqrt, "rsqrt", 1},      {FusedOp::Reciprocal, "reciprocal", 1},
    {FusedOp::Sin, "sin", 1},          {FusedOp::Cos, "cos", 1},
    {FusedOp::Tan, "tan", 1},          {FusedOp::Tanh, "tanh", 1},
    {FusedOp::Sigmoid, "sigmoid", 1},  {FusedOp::Erf, "erf", 1},
    {FusedOp::Relu, "relu", 1},        {FusedOp::Silu, "silu", 1},
    {FusedOp::Floor, "floor", 1},      {FusedOp::Ceil, "ceil", 1},
    {FusedOp::Trunc, "trunc", 1},      {FusedOp::Round, "round", 1},
    {FusedOp::Gelu, "gelu", 1},        {FusedOp::LeakyRelu, "leaky_relu", 1},
    {FusedOp::Clamp, "clamp", 1},      {FusedOp::Sum, "sum", 1},
    {FusedOp::Mean, "mean", 1},
};

const OpRow& row(FusedOp op) {
  for (const OpRow& r : kOps)
    if (r.op == op) return r;
  EMBER_FAIL("fused program: unknown op code ", static_cast<int>(op));
}

std::string number_text(double x) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), x);  // shortest text that reads back to x
  return std::string(buf, res.ptr);
}

// A cursor over the program text; every error names the instruction.
class Parser {
 public:
  Parser(std::string_view text, size_t num_inputs, std::string_view who)
      : s_(text), num_inputs_(num_inputs), who_(who) {}

  FusedProgram run() {
    FusedProgram p;
    p.num_inputs = static_cast<int32_t>(num_inputs_);
    EMBER_CHECK(num_inputs_ <= kMaxInputs, who_, ": a fused program takes at most ", kMaxInputs, " inputs, got ",
                num_inputs_);
    std::vector<char> used(num_inputs_, 0);
    skip_space();
    while (true) {
      EMBER_CHECK(p.code.size() < kMaxInstructions, who_, ": a fused program has at most ", kMaxInstructions,
                  " instructions");
      p.code.push_back(instruction(p.code.size(), used));
      skip_space();
      if (pos_ == s_.size()) break;
      expect(';');
      skip_space();
    }
    for (size_t k = 0; k + 1 < p.code.size(); ++k)
      EMBER_CHECK(!FusedProgram::is_reduction(p.code[k].op), who_, ": t", k, " = ", op_name(p.code[k].op),
                  " reduces, but only the last instruction of a fused program may reduce ('", s_, "')");
    for (size_t i = 0; i < used.size(); ++i)
      EMBER_CHECK(used[i], who_, ": input i", i, " is never used by the fused program '", s_, "'");
    // Every result feeds the last one, so the output has the broadcast shape
    // of all the inputs, as the unfused ops' last result does.
    std::vector<char> read(p.code.size(), 0);
    for (const Instruction& ins : p.code)
      for (int a = 0; a < ins.arity; ++a)
        if (ins.args[a].kind == Operand::Kind::Temp) read[static_cast<size_t>(ins.args[a].index)] = 1;
    for (size_t k = 0; k + 1 < p.code.size(); ++k)
      EMBER_CHECK(read[k], who_, ": t", k, " is never used by the fused program '", s_, "'");
    return p;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    EMBER_FAIL(who_, ": malformed fused program at character ", pos_, " of '", s_, "': ", what);
  }
  void skip_space() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (pos_ >= s_.size() || s_[pos_] != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string_view word() {
    skip_space();
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  int64_t index_after(std::string_view w, size_t limit, const char* what) {
    int64_t k = -1;
    const auto res = std::from_chars(w.data() + 1, w.data() + w.size(), k);
    if (w.size() < 2 || res.ec != std::errc() || res.ptr != w.data() + w.size() || k < 0)
      fail(std::string("'") + std::string(w) + "' is not " + what);
    if (static_cast<size_t>(k) >= limit)
      fail(std::string(what) + " '" + std::string(w) + "' is out of range (" + std::to_string(limit) + " defined)");
    return k;
  }
  double number() {
    skip_space();
    double x = 0.0;
    const auto res = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), x);
    if (res.ec != std::errc()) fail("expected a number");
    pos_ = static_cast<size_t>(res.ptr - s_.data());
    return x;
  }
  Operand operand(size_t current, std::vector<char>& used) {
    skip_space();
    Operand o;
    if (pos_ < s_.size() && (s_[pos_] == 'i' || s_[pos_] == 't') && pos_ + 1 < s_.size() &&
        std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
      const std::string_view w = word();
      if (w[0] == 'i') {
        o.kind = Operand::Kind::Input;
        o.index = static_cast<int32_t>(index_after(w, num_inputs_, "an input"));
        used[static_cast<size_t>(o.index)] = 1;
      } else {
        o.kind = Operand::Kind::Temp;
        o.index = static_cast<int32_t>(index_after(w, current, "an earlier result"));
      }
      return o;
    }
    o.number = number();
    return o;
  }
  void parameter(Instruction& ins, std::string_view key) {
    const bool is_add = ins.op == FusedOp::Add || ins.op == FusedOp::Sub;
    if (key == "alpha" && is_add) ins.alpha = number();
    else if (key == "slope" && ins.op == FusedOp::LeakyRelu) ins.slope = number();
    else if (key == "min" && ins.op == FusedOp::Clamp) ins.lo = number(), ins.has_lo = true;
    else if (key == "max" && ins.op == FusedOp::Clamp) ins.hi = number(), ins.has_hi = true;
    else if (key == "dim" && FusedProgram::is_reduction(ins.op)) {
      if (number() != -1.0) fail("a fused reduction's dim must be -1 (the last dim)");
      ins.last_dim = true;
    } else if (key == "keepdim" && FusedProgram::is_reduction(ins.op)) {
      const double k = number();
      if (k != 0.0 && k != 1.0) fail("keepdim must be 0 or 1");
      ins.keepdim = k == 1.0;
    } else if (key == "approximate" && ins.op == FusedOp::Gelu) {
      const std::string_view v = word();
      if (v != "tanh" && v != "none") fail("gelu's approximate must be tanh or none");
      ins.tanh = v == "tanh";
    } else {
      fail(std::string(op_name(ins.op)) + " has no parameter '" + std::string(key) + "'");
    }
    if (!std::isfinite(ins.alpha) || !std::isfinite(ins.slope) || std::isnan(ins.lo) || std::isnan(ins.hi))
      fail("parameter '" + std::string(key) + "' must be a number (finite for alpha and slope)");
  }
  Instruction instruction(size_t k, std::vector<char>& used) {
    const std::string_view target = word();
    if (target != "t" + std::to_string(k)) fail("instruction " + std::to_string(k) + " must assign t" + std::to_string(k));
    expect('=');
    Instruction ins;
    const std::string_view name = word();
    if (!find_op(name, ins.op)) fail("unknown op '" + std::string(name) + "'");
    expect('(');
    const int arity = op_arity(ins.op);
    bool any_tensor = false;
    for (int a = 0; a < arity; ++a) {
      if (a > 0) expect(',');
      ins.args[a] = operand(k, used);
      any_tensor = any_tensor || ins.args[a].kind != Operand::Kind::Number;
    }
    ins.arity = arity;
    if (!any_tensor) fail(std::string(name) + " needs at least one tensor operand");
    if (ins.op == FusedOp::Where && ins.args[0].kind != Operand::Kind::Input)
      fail("where's condition must be an input (a bool tensor)");
    skip_space();
    while (pos_ < s_.size() && s_[pos_] == ',') {
      ++pos_;
      const std::string_view key = word();
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '=')
        fail(std::string(name) + " takes " + std::to_string(arity) + " operand(s), then name=value parameters");
      expect('=');
      parameter(ins, key);
      skip_space();
    }
    expect(')');
    if (ins.op == FusedOp::Clamp && !ins.has_lo && !ins.has_hi) fail("clamp needs min or max");
    return ins;
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t num_inputs_;
  std::string_view who_;
};

Tensor operand_tensor(const Operand& o, const std::vector<Tensor>& inputs, const std::vector<Tensor>& temps) {
  switch (o.kind) {
    case Operand::Kind::Input: return inputs[static_cast<size_t>(o.index)];
    case Operand::Kind::Temp: return temps[static_cast<size_t>(o.index)];
    case Operand::Kind::Number: break;
  }
  return wrap_scalar(Scalar(o.number));
}

}  // namespace

const char* op_name(FusedOp op) { return row(op).name; }
int op_arity(FusedOp op) { return row(op).arity; }

bool find_op(std::string_view name, FusedOp& op) {
  for (const OpRow& r : kOps)
    if (name == r.name) {
      op = r.op;
      return true;
    }
  return false;
}

FusedProgram FusedProgram::parse(std::string_view text, size_t num_inputs, std::string_view who) {
  return Parser(text, num_inputs, who).run();
}

std::string FusedProgram::str() const {
  std::string s;
  for (size_t k = 0; k < code.size(); ++k) {
    const Instruction& ins = code[k];
    s += (k ? "; t" : "t") + std::to_string(k) + "=" + op_name(ins.op) + "(";
    for (int a = 0; a < ins.arity; ++a) {
      const Operand& o = ins.args[a];
      s += a ? ", " : "";
      if (o.kind == Operand::Kind::Input) s += "i" + std::to_string(o.index);
      else if (o.kind == Operand::Kind::Temp) s += "t" + std::to_string(o.index);
      else s += number_text(o.number);
    }
    if ((ins.op == FusedOp::Add || ins.op == FusedOp::Sub) && ins.alpha != 1.0) s += ", alpha=" + number_text(ins.alpha);
    if (ins.op == FusedOp::LeakyRelu) s += ", slope=" + number_text(ins.slope);
    if (ins.has_lo) s += ", min=" + number_text(ins.lo);
    if (ins.has_hi) s += ", max=" + number_text(ins.hi);
    if (ins.op == FusedOp::Gelu && ins.tanh) s += ", approximate=tanh";
    if (ins.last_dim) s += ", dim=-1";
    if (ins.keepdim) s += ", keepdim=1";
    s += ")";
  }
  return s;
}

std::vector<char> FusedProgram::condition_inputs() const {
  std::vector<char> cond(static_cast<size_t>(num_inputs), 0);
  for (const Instruction& ins : code)
    if (ins.op == FusedOp::Where) cond[static_cast<size_t>(ins.args[0].index)] = 1;
  return cond;
}

Tensor run_unfused(const FusedProgram& program, const std::vector<Tensor>& inputs) {
  EMBER_CHECK(inputs.size() == static_cast<size_t>(program.num_inputs), "_fused_elementwise: the program takes ",
              program.num_inputs, " inputs, got ", inputs.size());
  std::vector<Tensor> t;
  for (const Instruction& ins : program.code) {
    const Tensor a = operand_tensor(ins.args[0], inputs, t);
    const Tensor b = ins.arity > 1 ? operand_tensor(ins.args[1], inputs, t) : Tensor();
    const Tensor c = ins.arity > 2 ? operand_tensor(ins.args[2], inputs, t) : Tensor();
    Tensor r;
    switch (ins.op) {
      case FusedOp::Add: r = op::add.call(a, b, Scalar(ins.alpha)); break;
      case FusedOp::Sub: r = op::sub.call(a, b, Scalar(ins.alpha)); break;
      case FusedOp::Mul: r = op::mul.call(a, b); break;
      case FusedOp::Div: r = op::div.call(a, b); break;
      case FusedOp::Maximum: r = op::maximum.call(a, b); break;
      case FusedOp::Minimum: r = op::minimum.call(a, b); break;
      case FusedOp::Where: r = op::where.call(a, b, c); break;
#define EMBER_FUSED_UNARY(Op, name) \
  case FusedOp::Op: r = op::name.call(a); break;
      EMBER_FUSED_UNARY(Neg, neg) EMBER_FUSED_UNARY(Abs, abs) EMBER_FUSED_UNARY(Exp, exp) EMBER_FUSED_UNARY(Exp2, exp2)
      EMBER_FUSED_UNARY(Log, log) EMBER_FUSED_UNARY(Log2, log2) EMBER_FUSED_UNARY(Log1p, log1p)
      EMBER_FUSED_UNARY(Expm1, expm1) EMBER_FUSED_UNARY(Sqrt, sqrt) EMBER_FUSED_UNARY(Rsqrt, rsqrt)
      EMBER_FUSED_UNARY(Reciprocal, reciprocal) EMBER_FUSED_UNARY(Sin, sin) EMBER_FUSED_UNARY(Cos, cos)
      EMBER_FUSED_UNARY(Tan, tan) EMBER_FUSED_UNARY(Tanh, tanh) EMBER_FUSED_UNARY(Sigmoid, sigmoid)
      EMBER_FUSED_UNARY(Erf, erf) EMBER_FUSED_UNARY(Relu, relu) EMBER_FUSED_UNARY(Silu, silu)
      EMBER_FUSED_UNARY(Floor, floor) EMBER_FUSED_UNARY(Ceil, ceil) EMBER_FUSED_UNARY(Trunc, trunc)
      EMBER_FUSED_UNARY(Round, round)
#undef EMBER_FUSED_UNARY
      case FusedOp::Gelu: r = op::gelu.call(a, ins.tanh ? "tanh" : "none"); break;
      case FusedOp::LeakyRelu: r = op::leaky_relu.call(a, Scalar(ins.slope)); break;
      case FusedOp::Clamp:
        r = op::clamp.call(a, ins.has_lo ? std::optional<Scalar>(ins.lo) : std::nullopt,
                           ins.has_hi ? std::optional<Scalar>(ins.hi) : std::nullopt);
        break;
      case FusedOp::Sum:
      case FusedOp::Mean: {
        const int64_t last = -1;
        const IntArrayRef dims = ins.last_dim ? IntArrayRef(&last, 1) : IntArrayRef();
        r = ins.op == FusedOp::Sum ? op::sum.call(a, dims, ins.keepdim, std::nullopt)
                                   : op::mean.call(a, dims, ins.keepdim);
        break;
      }
    }
    t.push_back(std::move(r));
  }
  return t.back();
}

}  // namespace ember::fused
