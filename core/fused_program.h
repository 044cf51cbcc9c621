// The expression of a fused elementwise group: what jit's fusion pass writes
// into a `_fused_elementwise` node, what the CPU kernel evaluates tile by
// tile, and what the graph archive stores and its loader validates.
//
// Note [Fused elementwise programs]
// A program is a list of instructions in SSA form, one per fused op, written
//   t0=mul(i0, 2); t1=add(t0, 1); t2=relu(t1); t3=mul(t2, i1); t4=exp(t3)
// An operand is a tensor input of the node (`iK`), the result of an earlier
// instruction (`tK`, K below the current index) or a number (a scalar the
// traced program passed, e.g. the 2 of `x * 2`, printed so that it reads
// back to the same double). Ops with parameters name them: `add(i0, i1,
// alpha=2)`, `clamp(t0, min=0, max=6)`, `leaky_relu(t0, slope=0.01)`,
// `gelu(t0, approximate=tanh)`. The last instruction may be a reduction over
// every element, `sum(t3)` or `mean(t3, keepdim=1)`, or over the last dim of
// the broadcast shape, `sum(t3, dim=-1)` (one value per row; keepdim keeps
// the last dim with size 1). The last instruction's result is the node's
// output; every other result is read by a later instruction. Every op
// computes as its eager kernel does (float32 and float64 in their own
// dtype; float16 and bfloat16 in float32, each result rounded to the dtype),
// so a fused group gives the bits of the unfused ops (barring the contraction
// of x + alpha*y into one rounding, which the compiler may do in either).
// `where`'s condition is a bool input; every other tensor input has the
// output's dtype. Inputs broadcast against each other as the ops' inputs did.
//
// Nothing in a program is executed as code: parse() checks the text against
// the op table below, every operand reference and every number, and raises an
// ember::Error naming what is wrong, so a program read from a file is as safe
// as any other attribute.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ember/tensor.h"

namespace ember::fused {

enum class FusedOp : uint8_t {
  // two operands
  Add, Sub, Mul, Div, Maximum, Minimum,
  // three: where(condition, a, b)
  Where,
  // one
  Neg, Abs, Exp, Exp2, Log, Log2, Log1p, Expm1, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tan, Tanh, Sigmoid, Erf,
  Relu, Silu, Floor, Ceil, Trunc, Round,
  // one, with parameters
  Gelu, LeakyRelu, Clamp,
  // a reduction over every element, only as the last instruction
  Sum, Mean,
};

struct Operand {
  enum class Kind : uint8_t { Input, Temp, Number };
  Kind kind = Kind::Number;
  int32_t index = 0;    // Input, Temp
  double number = 0.0;  // Number
};

struct Instruction {
  FusedOp op = FusedOp::Add;
  Operand args[3];
  int arity = 0;
  // Parameters: alpha (add, sub; default 1), slope (leaky_relu), min / max
  // (clamp, each optional), tanh (gelu's approximation).
  double alpha = 1.0, slope = 0.01, lo = 0.0, hi = 0.0;
  bool has_lo = false, has_hi = false, tanh = false;
  bool keepdim = false;   // sum, mean: keep the reduced dims, of size 1
  bool last_dim = false;  // sum, mean: over the last dim only (dim=-1), else over every element
};

struct FusedProgram {
  std::vector<Instruction> code;
  int32_t num_inputs = 0;

  // Parses and validates `text` for a node with `num_inputs` tensor inputs
  // (every one must be used). Errors start with `who`.
  static FusedProgram parse(std::string_view text, size_t num_inputs, std::string_view who);
  // The text parse() reads.
  std::string str() const;
  // Which inputs are conditions of a `where` (bool); the others hold numbers.
  std::vector<char> condition_inputs() const;
  // The last instruction is a sum or mean: over every element (the output is
  // one value: shape [], or all dims of size 1 with keepdim), or with
  // reduces_rows() over the last dim (one value per row).
  bool reduces() const { return !code.empty() && is_reduction(code.back().op); }
  bool reduces_rows() const { return reduces() && code.back().last_dim; }
  static bool is_reduction(FusedOp op) { return op == FusedOp::Sum || op == FusedOp::Mean; }
};

// The name of an op as the dispatcher knows it ("add", "leaky_relu"), and the
// op for a name; false when the dispatched op has no fused form.
const char* op_name(FusedOp op);
bool find_op(std::string_view name, FusedOp& op);
int op_arity(FusedOp op);

// At most this many instructions and inputs in one program.
inline constexpr size_t kMaxInstructions = 256;
inline constexpr size_t kMaxInputs = 64;

// The reference: calls the program's ops one by one through the dispatcher,
// so autograd records them as the unfused graph would.
Tensor run_unfused(const FusedProgram& program, const std::vector<Tensor>& inputs);

}  // namespace ember::fused
