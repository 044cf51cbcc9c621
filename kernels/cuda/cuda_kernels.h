// The CUDA kernels as the host code sees them: plain functions that take an
// ElementwiseArgs (or raw pointers) and launch. Defined in the .cu files,
// called from the op wrappers in the .cpp files; no CUDA types here.
//
// Note [Few kernel instantiations]
// Every functor instantiation compiles two kernels, and nvcc is slow, so ops
// that cost about the same per element share a functor and pick their
// operation from a small runtime code (BinaryKind, CompareKind, ...): the
// branch is uniform across the grid, so it costs a few instructions per
// element of a memory-bound kernel. Ops that only move bits (where, fill,
// same-dtype copies) are instantiated per element size, not per dtype.
#pragma once

#include <cstdint>
#include <optional>

#include "ember/scalar.h"
#include "kernels/cuda/cuda_loops.h"

namespace ember::cuda {

// ---- cuda_binary.cu: all operands in one dtype (a.dtypes[0]) unless noted ----
enum class BinaryKind : uint8_t { Add, Mul, Div, Maximum, Minimum, Remainder, Pow, ThresholdBackward };
// Add computes a + alpha * b (sub passes -alpha); Div is only called for floating dtypes;
// ThresholdBackward computes b > alpha ? a : 0 (a the gradient, b the input, alpha the threshold).
void launch_binary(BinaryKind kind, const ElementwiseArgs& a, const Scalar& alpha);
enum class CompareKind : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
// bool output; both inputs in a.dtypes[1].
void launch_compare(CompareKind kind, const ElementwiseArgs& a);
enum class LogicalKind : uint8_t { And, Or, Xor, Not };
// bool inputs and output; Not takes one input.
void launch_logical(LogicalKind kind, const ElementwiseArgs& a);
// out = cond ? x : y; operands (out, cond (bool), x, y) with x, y in out's dtype.
void launch_where(const ElementwiseArgs& a);

// ---- cuda_unary.cu: one input, output in the input's dtype unless noted ----
enum class UnaryKind : uint8_t {
  Neg, Abs, Sign, Exp, Exp2, Log, Log2, Log1p, Expm1, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tan, Asin, Acos, Atan,
  Sinh, Cosh, Tanh, Asinh, Acosh, Atanh,
  Sigmoid, Relu, Silu, Erf, Floor, Ceil, Round, Trunc, GeluErf, GeluTanh, Softplus
};
// Floating dtypes take every kind; integer dtypes Neg, Abs, Sign, Relu. Softplus reads beta, threshold.
void launch_unary(UnaryKind kind, const ElementwiseArgs& a, double beta = 1.0, double threshold = 20.0);
// min(max(x, min), max) in the (non-bool) dtype of the operands; a missing bound is not applied.
void launch_clamp(const ElementwiseArgs& a, const std::optional<Scalar>& min, const std::optional<Scalar>& max);
// bool output from a floating input: isnan, or isinf when `inf`.
void launch_float_class(const ElementwiseArgs& a, bool inf);

// ---- cuda_copy.cu ----
// out = in converted from a.dtypes[1] to a.dtypes[0] (any pair, any layout).
void launch_copy(const ElementwiseArgs& a);
// Every element of the output (no inputs) set to `bits`, the value in a.dtypes[0].
void launch_fill(const ElementwiseArgs& a, uint64_t bits);

// ---- cuda_random.cu: contiguous outputs, Note [Philox element mapping] in core/philox.h ----
void launch_uniform(float* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high, int device);
void launch_uniform(double* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high, int device);
void launch_normal(float* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std, int device);
void launch_normal(double* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std, int device);
void launch_randint(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high, int device);

// ---- cuda_reduce.cu: deterministic sums (Note [CUDA sum] in cuda_reduce.cu) ----
// The accumulation type of a sum over `in` dtype: float for float32/16/bf16,
// double for float64, int64 for integers and bool.
DType sum_accumulate_dtype(DType in);
// out[o, i] = sum_k in[o, k, i] over a contiguous (outer, k, inner) input,
// written contiguously in sum_accumulate_dtype(in_dtype). `scratch` supplies
// temporary device memory: scratch(nbytes) returns a pointer valid until the
// call returns.
struct SumShape {
  int64_t outer = 1, k = 1, inner = 1;
};
void launch_sum(const void* in, DType in_dtype, void* out, const SumShape& shape, int device,
                void* (*scratch)(void* ctx, size_t nbytes), void* scratch_ctx);

}  // namespace ember::cuda
