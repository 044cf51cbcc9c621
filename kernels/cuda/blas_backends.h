// The two implementations behind blas::gemm (Note [GEMM on CUDA] in blas.h).
// Both take a Gemm already checked by check_gemm and with m, n, batch > 0.
#pragma once

#include "kernels/cuda/blas.h"

namespace ember::cuda::blas {

// blas_reference.cu: the plain kernel.
void launch_gemm_reference(const char* op, const Gemm& g, int device);

#ifndef EMBER_CUDA_EMULATE
// blas_cublaslt.cpp: cuBLASLt (real build only); false when the library has
// no algorithm for `g` (nothing was queued then).
bool cublaslt_gemm(const char* op, const Gemm& g, int device);
#endif

}  // namespace ember::cuda::blas
