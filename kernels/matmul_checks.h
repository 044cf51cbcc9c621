// The argument checks of the matrix-product kernels (mm, addmm, bmm, dot,
// mv), shared by every backend so that a bad call gets the same error on the
// CPU and on CUDA. The dispatcher has already picked the device; these check
// what it cannot: that both operands are on that one device, share a dtype,
// and have shapes that multiply.
#pragma once

#include <cstdint>

#include "ember/tensor.h"

namespace ember {

// Two operands of a product: on one device, one dtype, not bool.
void check_product_operands(const char* op, const char* name_a, const Tensor& a, const char* name_b, const Tensor& b);

// mm/addmm: (n, k) and (k, m) matrices.
void check_mm_shapes(const char* op, const Tensor& a, const Tensor& b);
// bmm: (B, n, k) and (B, k, m).
void check_bmm_shapes(const Tensor& a, const Tensor& b);
// dot: two 1-D tensors of one length.
void check_dot_shapes(const Tensor& a, const Tensor& b);
// mv: an (n, k) matrix and a (k) vector.
void check_mv_shapes(const Tensor& mat, const Tensor& vec);

// addmm's self as a view of the (n, m) result: element (i, j) of the
// broadcast self is at self.data + i * row_stride + j * col_stride (0 along a
// broadcast dim). Raises when self does not broadcast to (n, m).
struct BroadcastMatrix {
  int64_t row_stride, col_stride;
};
BroadcastMatrix addmm_self_as_result(const Tensor& self, const Tensor& mat1, const Tensor& mat2);

}  // namespace ember
