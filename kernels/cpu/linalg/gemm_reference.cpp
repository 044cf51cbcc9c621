// The reference GEMM: a plain triple loop, the meaning of gemm_f32/gemm_f64
// written as directly as possible (see gemm.h for the contract).
#include "kernels/cpu/linalg/gemm.h"

namespace ember::cpu {
namespace {

// A: (m, k), B: (k, n), C: (m, n)
template <class T>
void gemm_reference(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
                    int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t c_rs, int64_t c_cs) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      if (alpha != 0) {
        for (int64_t p = 0; p < k; ++p) sum += a[i * a_rs + p * a_cs] * b[p * b_rs + j * b_cs];
      }
      T& out = c[i * c_rs + j * c_cs];
      out = beta == 0 ? alpha * sum : alpha * sum + beta * out;
    }
  }
}

}  // namespace

void gemm_reference_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_rs, int64_t a_cs,
                        const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t c_rs,
                        int64_t c_cs) {
  gemm_reference(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs);
}

void gemm_reference_f64(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t a_rs,
                        int64_t a_cs, const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c,
                        int64_t c_rs, int64_t c_cs) {
  gemm_reference(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs);
}

}  // namespace ember::cpu
