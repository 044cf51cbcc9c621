// The references of mm, addmm and bmm on tensors: each matrix of the batch
// goes through cpu::gemm_reference_f32/f64 (gemm.h) with the operands' own
// strides. Inputs are CPU float32 or float64; results are new contiguous tensors.
#pragma once

#include "ember/tensor.h"

namespace ember::cpu {

// (n, k) x (k, m) -> (n, m)
Tensor mm_reference(const Tensor& a, const Tensor& b);
// beta * self + alpha * (n, k) x (k, m); self broadcasts to (n, m); beta == 0 ignores self.
Tensor addmm_reference(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha);
// (B, n, k) x (B, k, m) -> (B, n, m)
Tensor bmm_reference(const Tensor& a, const Tensor& b);

}  // namespace ember::cpu
