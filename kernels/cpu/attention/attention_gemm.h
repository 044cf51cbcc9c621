// The GEMM entry of the attention kernels: one name for float and double
// (contract of cpu::gemm_f32/f64 in gemm.h). Called inside a task of the
// thread pool, so each product runs on the calling thread.
#pragma once

#include <type_traits>

#include "kernels/cpu/linalg/gemm.h"

namespace ember::cpu {

template <class T>
inline void attention_gemm(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_cs,
                           const T* b, int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t c_rs) {
  if constexpr (std::is_same_v<T, float>) {
    gemm_f32(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, 1);
  } else {
    gemm_f64(m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, 1);
  }
}

}  // namespace ember::cpu
