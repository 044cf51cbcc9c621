// ember's one door to the GEMM libraries: every matrix product on CUDA is a
// blas::Gemm, run by gemm(). No cuBLAS type appears here.
//
// Note [GEMM on CUDA]
// A Gemm is cuBLAS's column-major, strided-batched product
//   C[b] = epilogue(alpha * op(A[b]) op(B[b]) + beta * C[b])      b < batch
// with op(X) = X or X^T, op(A) of shape (m, k), op(B) (k, n), C (m, n);
// element (i, j) of a column-major matrix X is X[i + j * ldX] and matrix b of
// a batch starts at X + b * stride_X. The epilogue adds `bias` (m values, one
// per row of C, the same for every column and every matrix of the batch) and
// then applies ReLU or GELU's tanh approximation, in the accumulator type.
// The accumulator is float for float32/float16/bfloat16 (float32 without
// TF32, as PyTorch's default) and double for float64; C is rounded once.
//
// In the real build gemm() calls cuBLASLt (blas_cublaslt.cpp); in the
// emulation build it runs gemm_reference(), a plain kernel (one thread per
// element of C, k products summed in order), so every call ember makes,
// transposes, leading dimensions, batch strides and epilogues included, runs
// in CI. The op wrappers (cuda_matmul_ops.cpp) map ember's row-major tensors
// to this form: a row-major (r, c) matrix with strides (s, 1) is the
// column-major (c, r) matrix with ld s, so C = A B in rows is C^T = B^T A^T in
// columns, and a transposed operand is passed as op(X) = X^T, not copied.
#pragma once

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cuda::blas {

enum class Transpose : uint8_t { No, Yes };
enum class Epilogue : uint8_t { None, Bias, Relu, BiasRelu, GeluTanh, BiasGeluTanh };

struct Gemm {
  DType dtype = DType::Float32;  // of A, B, C and bias: float32, float64, float16 or bfloat16
  Transpose trans_a = Transpose::No, trans_b = Transpose::No;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  const void* a = nullptr;
  int64_t lda = 1, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 1, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 1, stride_c = 0;
  double alpha = 1, beta = 0;  // beta == 0: C is not read (NaN in C does not propagate)
  Epilogue epilogue = Epilogue::None;
  const void* bias = nullptr;  // for Bias* epilogues
};

// Runs `g` on the current stream of `device` (ember's current device must be
// `device`). Raises an ember::Error naming `op` for an invalid Gemm (a leading
// dimension shorter than a column, a missing bias, a non-floating dtype) or a
// library failure.
void gemm(const char* op, const Gemm& g, int device);

// The plain kernel behind gemm() in the emulation build; on a real GPU, the
// reference that tests compare cuBLASLt against.
void gemm_reference(const char* op, const Gemm& g, int device);

// True when the epilogue adds a bias.
constexpr bool has_bias(Epilogue e) {
  return e == Epilogue::Bias || e == Epilogue::BiasRelu || e == Epilogue::BiasGeluTanh;
}

}  // namespace ember::cuda::blas
