// blas::gemm: the checks every product gets, then cuBLASLt (real build) or
// the reference kernel (emulation build). Note [GEMM on CUDA] in blas.h.
#include "kernels/cuda/blas.h"

#include <algorithm>
#include <limits>

#include "core/tensor_util.h"
#include "ember/error.h"
#include "kernels/cuda/blas_backends.h"

namespace ember::cuda::blas {
namespace {

const char* name(Transpose t) { return t == Transpose::No ? "N" : "T"; }

void check_gemm(const char* op, const Gemm& g) {
  EMBER_CHECK(is_floating_point(g.dtype), op, ": CUDA matrix products support float32, float64, float16 and "
              "bfloat16, but got ", g.dtype);
  EMBER_CHECK(g.m >= 0 && g.n >= 0 && g.k >= 0 && g.batch >= 0, op, ": GEMM sizes must be non-negative, got m=",
              g.m, " n=", g.n, " k=", g.k, " batch=", g.batch);
  EMBER_CHECK(g.batch <= std::numeric_limits<int32_t>::max(), op, ": a GEMM batch of ", g.batch,
              " matrices exceeds the library's limit of 2^31 - 1");
  checked_numel({g.batch, g.m, g.n}, op);
  const int64_t rows_a = g.trans_a == Transpose::No ? g.m : g.k, rows_b = g.trans_b == Transpose::No ? g.k : g.n;
  EMBER_CHECK(g.lda >= std::max<int64_t>(1, rows_a) && g.ldb >= std::max<int64_t>(1, rows_b) &&
                  g.ldc >= std::max<int64_t>(1, g.m),
              op, ": GEMM leading dimensions too small: lda=", g.lda, " (A is ", rows_a, " rows, op ",
              name(g.trans_a), "), ldb=", g.ldb, " (B is ", rows_b, " rows, op ", name(g.trans_b), "), ldc=", g.ldc,
              " (C is ", g.m, " rows)");
  EMBER_CHECK(g.batch <= 1 || (g.stride_a >= 0 && g.stride_b >= 0 && g.stride_c >= g.ldc * g.n), op,
              ": GEMM batch strides must be non-negative and C's must not overlap (", g.stride_c, " < ldc * n = ",
              g.ldc * g.n, ")");
  EMBER_CHECK(has_bias(g.epilogue) == (g.bias != nullptr), op,
              has_bias(g.epilogue) ? ": the GEMM epilogue adds a bias but no bias was given"
                                   : ": a GEMM bias was given but the epilogue adds none");
  const bool empty = g.batch * g.m * g.n == 0;
  EMBER_CHECK(empty || (g.c != nullptr && (g.k == 0 || (g.a != nullptr && g.b != nullptr))), op,
              ": GEMM operand pointers must not be null");
}

}  // namespace

void gemm(const char* op, const Gemm& g, int device) {
  check_gemm(op, g);
  if (g.batch * g.m * g.n == 0) return;
#ifdef EMBER_CUDA_EMULATE
  launch_gemm_reference(op, g, device);
#else
  // k == 0 is C = epilogue(beta C): the reference kernel does that without a library special case.
  if (g.k == 0) {
    launch_gemm_reference(op, g, device);
    return;
  }
  if (cublaslt_gemm(op, g, device)) return;
  // No library kernel takes this epilogue here (a bias the kernels cannot
  // align, say): the product alone, then the epilogue as a k = 0 pass.
  Gemm product = g;
  product.epilogue = Epilogue::None;
  product.bias = nullptr;
  EMBER_CHECK(g.epilogue != Epilogue::None && cublaslt_gemm(op, product, device), op,
              ": cuBLASLt has no algorithm for this ", g.dtype, " GEMM (m=", g.m, " n=", g.n, " k=", g.k,
              " batch=", g.batch, ", op(A)=", name(g.trans_a), ", op(B)=", name(g.trans_b), ")");
  Gemm epilogue = g;
  epilogue.k = 0;
  epilogue.beta = 1;
  launch_gemm_reference(op, epilogue, device);
#endif
}

void gemm_reference(const char* op, const Gemm& g, int device) {
  check_gemm(op, g);
  if (g.batch * g.m * g.n != 0) launch_gemm_reference(op, g, device);
}

}  // namespace ember::cuda::blas
