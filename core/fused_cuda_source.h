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
//    T* out, long long row, const T_or_bool* i0, const T_or_bool* i1, ...)
// with strides[k * ndim + d] for input k; n is the number of elements of the
// broadcast shape. A program ending in a sum or mean over every element adds
// each element's share to out[0] with atomicAdd, so out[0] must hold 0
// before the launch. One reducing the last dim (of length `row`, >= 1; other
// programs ignore it) runs one block of kRowThreads threads per row: each
// thread adds its strided share of the row in double, a fixed tree adds the
// shares, thread 0 writes out[r]; deterministic. The source includes no
// header.
#pragma once

#include <string>

#include "core/fused_program.h"
#include "ember/dtype.h"

namespace ember::fused {

// Threads per block of a last-dim reduction's kernel (it must be launched so).
inline constexpr int kRowThreads = 256;

// `dtype` is the output's: float32 or float64.
std::string cuda_source(const FusedProgram& program, DType dtype, const std::string& kernel_name);

}  // namespace ember::fused
