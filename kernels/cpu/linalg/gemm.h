// CPU matrix multiply (GEMM) for f32 and f64: the one kernel behind matmul,
// linear layers and convolutions on the CPU. How it is blocked is explained at
// the top of gemm.cpp.
//
// All functions compute
//   C(i, j) = alpha * sum_p A(i, p) * B(p, j) + beta * C(i, j)
// for A: (m, k), B: (k, n), C: (m, n), each given by a pointer and two
// strides in elements (any sign, so transposed and strided views work):
//   A(i, p) is at a[i * a_rs + p * a_cs]
//   B(p, j) is at b[p * b_rs + j * b_cs]
//   C(i, j) is at c[i * c_rs + j * c_cs]
// beta == 0 means C is not read (it may hold NaN); alpha == 0 means A and B are
// not read. m, n or k may be 0. C must not overlap A or B.
//
// gemm_f32/gemm_f64 are the fast kernels. They use ember's intra-op threads
// and give bitwise identical results for any thread count. gemm_reference_* are
// plain triple loops, the reference the fast kernels are tested and benchmarked
// against.
#pragma once

#include <cstdint>

namespace ember::cpu {

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_rs, int64_t a_cs,
              const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t c_rs, int64_t c_cs);
void gemm_f64(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t a_rs, int64_t a_cs,
              const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c, int64_t c_rs, int64_t c_cs);

void gemm_reference_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_rs, int64_t a_cs,
                        const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t c_rs,
                        int64_t c_cs);
void gemm_reference_f64(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t a_rs,
                        int64_t a_cs, const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c,
                        int64_t c_rs, int64_t c_cs);

}  // namespace ember::cpu
