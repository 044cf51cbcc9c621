// Reductions in a wider type: f16 and bf16 buffers are reduced in f32
// (neither Gloo nor MPI sums them), and avg divides a sum in place.
#pragma once

#include <cstddef>
#include <vector>

#include "ember/dtype.h"

namespace ember::distributed {

// The dtype a reduction over `dtype` runs in: f32 for f16/bf16, else itself.
DType reduction_dtype(DType dtype);
// Converts n elements between a 16-bit float buffer and f32.
void widen_to_f32(const void* src, DType dtype, float* dst, size_t n);
void narrow_from_f32(const float* src, DType dtype, void* dst, size_t n);
// data[i] /= divisor for an f32 or f64 buffer.
void divide_in_place(void* data, DType dtype, size_t n, int divisor);

}  // namespace ember::distributed
