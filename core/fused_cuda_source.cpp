// CUDA C++ source of a fused program (core/fused_cuda_source.h).
#include "core/fused_cuda_source.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ember::fused {
namespace {

// Helpers the expressions call, written for the kernel's T; `F` is the
// suffix of the single-precision math functions ("f", or "" for double).
std::string prelude(const char* t, const char* f) {
  std::ostringstream os;
  os << "typedef " << t << " T;\n"
     << "__device__ __forceinline__ T e_max(T x, T y) { return (x != x || y != y) ? x + y : (x > y ? x : y); }\n"
     << "__device__ __forceinline__ T e_min(T x, T y) { return (x != x || y != y) ? x + y : (x < y ? x : y); }\n"
     << "__device__ __forceinline__ T e_relu(T x) { return x != x ? x : (x > (T)0 ? x : (T)0); }\n"
     << "__device__ __forceinline__ T e_sigmoid(T x) { return (T)1 / ((T)1 + exp" << f << "(-x)); }\n"
     << "__device__ __forceinline__ T e_silu(T x) { return isinf(x) && x < (T)0 ? (T)-0.0 : x / ((T)1 + exp" << f
     << "(-x)); }\n"
     << "__device__ __forceinline__ T e_gelu(T x) { return isinf(x) && x < (T)0 ? (T)-0.0 : (T)0.5 * x * ((T)1 + erf"
     << f << "(x * (T)0.70710678118654752440)); }\n"
     << "__device__ __forceinline__ T e_gelu_tanh(T x) { return isinf(x) && x < (T)0 ? (T)-0.0 : (T)0.5 * x * ((T)1 + "
     << "tanh" << f << "((T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x))); }\n";
  return os.str();
}

std::string number(double x) {
  if (!std::isfinite(x)) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "(T)__longlong_as_double(0x%016llxLL)",
                  static_cast<unsigned long long>(std::bit_cast<uint64_t>(x)));
    return buf;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "(T)(%.17g)", x);
  return buf;
}

std::string operand(const Operand& o) {
  switch (o.kind) {
    case Operand::Kind::Input: return "v" + std::to_string(o.index);
    case Operand::Kind::Temp: return "t" + std::to_string(o.index);
    case Operand::Kind::Number: break;
  }
  return number(o.number);
}

std::string expression(const Instruction& ins, const std::string& f) {
  const std::string a = operand(ins.args[0]);
  const std::string b = ins.arity > 1 ? operand(ins.args[1]) : "";
  const std::string c = ins.arity > 2 ? operand(ins.args[2]) : "";
  auto call = [&](const char* fn) { return std::string(fn) + f + "(" + a + ")"; };
  switch (ins.op) {
    case FusedOp::Add: return a + " + " + number(ins.alpha) + " * " + b;
    case FusedOp::Sub: return a + " - " + number(ins.alpha) + " * " + b;
    case FusedOp::Mul: return a + " * " + b;
    case FusedOp::Div: return a + " / " + b;
    case FusedOp::Maximum: return "e_max(" + a + ", " + b + ")";
    case FusedOp::Minimum: return "e_min(" + a + ", " + b + ")";
    case FusedOp::Where: return a + " ? " + b + " : " + c;
    case FusedOp::Neg: return "-" + a;
    case FusedOp::Abs: return call("fabs");
    case FusedOp::Exp: return call("exp");
    case FusedOp::Exp2: return call("exp2");
    case FusedOp::Log: return call("log");
    case FusedOp::Log2: return call("log2");
    case FusedOp::Log1p: return call("log1p");
    case FusedOp::Expm1: return call("expm1");
    case FusedOp::Sqrt: return call("sqrt");
    case FusedOp::Rsqrt: return call("rsqrt");
    case FusedOp::Reciprocal: return "(T)1 / " + a;
    case FusedOp::Sin: return call("sin");
    case FusedOp::Cos: return call("cos");
    case FusedOp::Tan: return call("tan");
    case FusedOp::Tanh: return call("tanh");
    case FusedOp::Sigmoid: return "e_sigmoid(" + a + ")";
    case FusedOp::Erf: return call("erf");
    case FusedOp::Relu: return "e_relu(" + a + ")";
    case FusedOp::Silu: return "e_silu(" + a + ")";
    case FusedOp::Floor: return call("floor");
    case FusedOp::Ceil: return call("ceil");
    case FusedOp::Trunc: return call("trunc");
    case FusedOp::Round: return call("rint");  // half to even, as torch.round
    case FusedOp::Gelu: return (ins.tanh ? "e_gelu_tanh(" : "e_gelu(") + a + ")";
    case FusedOp::LeakyRelu: return a + " > (T)0 ? " + a + " : " + a + " * " + number(ins.slope);
    case FusedOp::Sum:
    case FusedOp::Mean: return a;  // the element's share; the caller accumulates it
    case FusedOp::Clamp: {
      std::string x = a;
      if (ins.has_lo) x = "(" + x + " < " + number(ins.lo) + " ? " + number(ins.lo) + " : " + x + ")";
      if (ins.has_hi) x = "(" + x + " > " + number(ins.hi) + " ? " + number(ins.hi) + " : " + x + ")";
      return x;
    }
  }
  EMBER_FAIL("fused::cuda_source: unknown op code ", static_cast<int>(ins.op));
}

// The statements that load element `idx`'s inputs through the broadcast
// shape and strides and evaluate the program into t0, t1, ...
std::string element(const FusedProgram& program, const std::vector<char>& condition, const std::string& f,
                    const std::string& pad) {
  std::ostringstream os;
  for (int32_t k = 0; k < program.num_inputs; ++k) os << pad << "long long o" << k << " = 0;\n";
  os << pad << "long long rest = idx;\n"
     << pad << "for (int d = 0; d < ndim; ++d) {\n"
     << pad << "  const long long c = rest % shape[d];\n"
     << pad << "  rest /= shape[d];\n";
  for (int32_t k = 0; k < program.num_inputs; ++k)
    os << pad << "  o" << k << " += c * strides[" << k << " * ndim + d];\n";
  os << pad << "}\n";
  for (int32_t k = 0; k < program.num_inputs; ++k)
    os << pad << "const " << (condition[static_cast<size_t>(k)] ? "bool" : "T") << " v" << k << " = i" << k << "[o" << k
       << "];\n";
  for (size_t k = 0; k < program.code.size(); ++k)
    os << pad << "const T t" << k << " = " << expression(program.code[k], f) << ";\n";
  return os.str();
}

}  // namespace

std::string cuda_source(const FusedProgram& program, DType dtype, const std::string& kernel_name) {
  EMBER_CHECK(dtype == DType::Float32 || dtype == DType::Float64, "fused::cuda_source: float32 or float64, got ",
              dtype);
  const bool is_float = dtype == DType::Float32;
  const std::string f = is_float ? "f" : "";
  const std::vector<char> condition = program.condition_inputs();
  std::ostringstream os;
  os << "// Generated by ember from the fused program\n//   " << program.str() << "\n"
     << prelude(is_float ? "float" : "double", f.c_str()) << "extern \"C\" __global__ void " << kernel_name
     << "(long long n, int ndim, const long long* shape, const long long* strides, T* out, long long row";
  for (int32_t k = 0; k < program.num_inputs; ++k)
    os << ", const " << (condition[static_cast<size_t>(k)] ? "bool" : "T") << "* __restrict__ i" << k;
  os << ") {\n";
  const std::string last = "t" + std::to_string(program.code.size() - 1);
  const bool mean = program.reduces() && program.code.back().op == FusedOp::Mean;
  if (program.reduces_rows()) {  // one block per row: strided partial sums, then a fixed tree
    os << "  __shared__ double part[" << kRowThreads << "];\n"
       << "  for (long long r = blockIdx.x; r < n / row; r += gridDim.x) {\n"
       << "    double acc = 0.0;\n"
       << "    for (long long idx = r * row + threadIdx.x; idx < (r + 1) * row; idx += blockDim.x) {\n"
       << element(program, condition, f, "      ") << "      acc += (double)" << last << ";\n"
       << "    }\n"
       << "    part[threadIdx.x] = acc;\n"
       << "    __syncthreads();\n"
       << "    for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
       << "      if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];\n"
       << "      __syncthreads();\n"
       << "    }\n"
       << "    if (threadIdx.x == 0) out[r] = (T)(" << (mean ? "part[0] / (double)row" : "part[0]") << ");\n"
       << "    __syncthreads();\n"
       << "  }\n}\n";
    return os.str();
  }
  os << "  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < n;\n"
     << "       idx += (long long)gridDim.x * blockDim.x) {\n"
     << element(program, condition, f, "    ");
  if (!program.reduces()) os << "    out[idx] = " << last << ";\n";
  else if (!mean) os << "    atomicAdd(out, " << last << ");\n";
  else os << "    atomicAdd(out, " << last << " / (T)n);\n";
  os << "  }\n}\n";
  return os.str();
}

}  // namespace ember::fused
