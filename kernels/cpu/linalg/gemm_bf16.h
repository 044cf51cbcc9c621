// CPU matrix multiply of bfloat16 matrices with float32 accumulation, on the
// bf16 hardware of the CPU: AMX tiles where the CPU and the OS allow them,
// else AVX-512 BF16 dot products. How it works is explained at the top of
// gemm_bf16.cpp.
//
// gemm_bf16 computes
//   C(i, j) = alpha * sum_p A(i, p) * B(p, j) + beta * C(i, j)
// for bf16 A: (m, k) and B: (k, n) and a float32 C: (m, n) (the caller rounds
// C to bf16 once, if it wants bf16), with gemm.h's contract: pointer plus two
// strides in elements, any sign; beta == 0 means C is not read; alpha == 0
// means A and B are not read; m, n or k may be 0; C must not overlap A or B.
// Each product of two bf16 numbers is exact in float32, so the result differs
// from an exact sum only by the float32 additions, in an order fixed by k
// alone: bitwise the same for any thread count. As the hardware does, it
// counts subnormal bf16 inputs and subnormal float32 results as zero.
#pragma once

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cpu {

enum class GemmBf16Kernel : uint8_t {
  kAvx512Dot,  // vdpbf16ps: 16 float lanes, each adding two bf16 products per instruction
  kAmxTiles,   // tdpbf16ps: a 16 x 16 float tile += a 16 x 32 by 32 x 16 bf16 product per instruction
};

// Whether `kernel` was compiled in and may run on this CPU and OS.
bool gemm_bf16_supports(GemmBf16Kernel kernel);
// Whether any bf16 kernel runs here; when not, callers widen to float32 and use gemm_f32.
bool gemm_bf16_available();

// C (m, n) = alpha * A (m, k) B (k, n) + beta * C with the fastest kernel that runs here
// (gemm_bf16_available() must be true).
void gemm_bf16(int64_t m, int64_t n, int64_t k, float alpha, const BFloat16* a, int64_t a_rs, int64_t a_cs,
               const BFloat16* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t c_rs, int64_t c_cs);

// The same with a chosen kernel (gemm_bf16_supports(kernel) must be true), for tests and benchmarks.
void gemm_bf16_using(GemmBf16Kernel kernel, int64_t m, int64_t n, int64_t k, float alpha, const BFloat16* a,
                     int64_t a_rs, int64_t a_cs, const BFloat16* b, int64_t b_rs, int64_t b_cs, float beta, float* c,
                     int64_t c_rs, int64_t c_cs);

}  // namespace ember::cpu
