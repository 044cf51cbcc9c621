// The inline PTX of ember's device code, in one place: the real build emits
// the instruction, the emulation build (EMBER_CUDA_EMULATE) computes what the
// instruction computes on the CPU. Device code uses nothing else that the
// host compiler cannot compile.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#ifdef EMBER_CUDA_EMULATE
#include "ember/dtype.h"
#endif

namespace ember::cuda::ptx {

// cvt.f32.f16: float16 bits -> float (exact).
__device__ __forceinline__ float cvt_f32_f16(uint16_t bits) {
#ifdef EMBER_CUDA_EMULATE
  return static_cast<float>(Half::from_bits(bits));
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
  return f;
#endif
}

// cvt.rn.f16.f32: float -> float16 bits, rounded to nearest even.
__device__ __forceinline__ uint16_t cvt_rn_f16_f32(float f) {
#ifdef EMBER_CUDA_EMULATE
  return Half(f).bits;
#else
  uint16_t bits;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f));
  return bits;
#endif
}

}  // namespace ember::cuda::ptx
