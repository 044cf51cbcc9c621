// CUDA C++ source for a fused elementwise program (core/fused_program.h), to
// be compiled at run time with NVRTC, which needs no GPU and no host compiler.
//
// The generated kernel, `extern "C" __global__ void <name>(...)`, is a grid-
// stride loop over the output's elements: each thread turns its linear index
// into one offset per input through the broadcast shape and strides (in
// elements, innermost dim first, as the CPU kernel coalesces them), loads
// the inputs, evaluates the program in registers in the output's dtype with
// the same formulas as the CPU kernel, and stores one element. Signature:
//   (long long n, int ndim, const long long* shape, const long long* strides,
//    T* out, const T_or_bool* i0, const T_or_bool* i1, ...)
// with strides[k * ndim + d] for input k. A program ending in a sum or mean
// adds each element's share to out[0] with atomicAdd, so out[0] must hold 0
// before the launch. The source includes no header.
#pragma once

#include <string>

#include "core/fused_program.h"
#include "ember/dtype.h"

namespace ember::jit {

// `dtype` is the output's: float32 or float64.
std::string fused_cuda_source(const fused::FusedProgram& program, DType dtype, const std::string& kernel_name);

}  // namespace ember::jit
