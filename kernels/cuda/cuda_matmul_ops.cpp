// mm, addmm, bmm, dot and mv on CUDA: each is one blas::Gemm (Note [GEMM on
// CUDA] in blas.h) over 3-D views (batch, rows, cols) of its operands, with
// the same argument checks as the CPU kernels (kernels/matmul_checks.h).
// Operands are passed with their own strides where one of their last two
// dims is unit-stride; anything else (an expanded vector, a slice with both
// strides > 1) is copied to a contiguous tensor first. addmm's self, when it
// is a 16-byte aligned row vector (a bias, as linear passes it) and beta is
// 1, becomes the GEMM's bias epilogue; otherwise the result starts as a copy
// of self.
#include <algorithm>
#include <cstdint>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "kernels/cuda/blas.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/matmul_checks.h"

namespace ember::cuda {
namespace {

using blas::Transpose;

// A row-major (batch, r, c) operand X as a column-major GEMM operand whose
// op(stored) is X^T (c, r): X itself read column-major when its last dim is
// unit-stride, or X's column-major storage transposed when its rows are.
struct Operand {
  Tensor keep;  // the tensor `data` points into (a copy when one was needed)
  const void* data;
  int64_t ld, batch_stride;
  Transpose op;
};

Operand transposed_operand(const Tensor& x) {
  const int64_t r = x.size(1), c = x.size(2), s0 = x.stride(1), s1 = x.stride(2);
  const int64_t sb = x.size(0) > 1 ? x.stride(0) : 0;
  if ((s1 == 1 || c == 1) && (r == 1 || s0 >= std::max<int64_t>(1, c)))
    return {x, x.data_ptr(), r == 1 ? std::max<int64_t>(1, c) : s0, sb, Transpose::No};
  if ((s0 == 1 || r == 1) && (c == 1 || s1 >= std::max<int64_t>(1, r)))
    return {x, x.data_ptr(), c == 1 ? std::max<int64_t>(1, r) : s1, sb, Transpose::Yes};
  const Tensor copy = x.contiguous();
  return {copy, copy.data_ptr(), std::max<int64_t>(1, c), r * c, Transpose::No};
}

// out (batch, n, m), contiguous = alpha * a (batch, n, k) @ b (batch, k, m) + beta * out,
// as the column-major out^T = b^T a^T.
void product_into(const char* op, const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta,
                  blas::Epilogue epilogue = blas::Epilogue::None, const void* bias = nullptr) {
  const Operand ob = transposed_operand(b), oa = transposed_operand(a);
  blas::Gemm g;
  g.dtype = out.dtype();
  g.m = out.size(2);
  g.n = out.size(1);
  g.k = a.size(2);
  g.batch = out.size(0);
  g.trans_a = ob.op;
  g.a = ob.data;
  g.lda = ob.ld;
  g.stride_a = ob.batch_stride;
  g.trans_b = oa.op;
  g.b = oa.data;
  g.ldb = oa.ld;
  g.stride_b = oa.batch_stride;
  g.c = out.data_ptr();
  g.ldc = std::max<int64_t>(1, g.m);
  g.stride_c = g.m * g.n;
  g.alpha = alpha;
  g.beta = beta;
  g.epilogue = epilogue;
  g.bias = bias;
  blas::gemm(op, g, out.device().index);
}

Tensor mm_cuda(const Tensor& a, const Tensor& b) {
  check_mm_shapes("mm", a, b);
  check_product_operands("mm", "m1", a, "m2", b);
  DeviceGuard guard(a.device().index);
  Tensor out = make_empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  product_into("mm", out.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0), 1, 0);
  return out;
}

Tensor bmm_cuda(const Tensor& a, const Tensor& b) {
  check_bmm_shapes(a, b);
  check_product_operands("bmm", "batch1", a, "batch2", b);
  DeviceGuard guard(a.device().index);
  Tensor out = make_empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  product_into("bmm", out, a, b, 1, 0);
  return out;
}

Tensor addmm_cuda(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) {
  check_mm_shapes("addmm", m1, m2);
  check_product_operands("addmm", "mat1", m1, "mat2", m2);
  check_product_operands("addmm", "self", self, "mat1", m1);
  const int64_t n = m1.size(0), m = m2.size(1);
  const BroadcastMatrix s = addmm_self_as_result(self, m1, m2);
  DeviceGuard guard(m1.device().index);
  Tensor out = make_empty({n, m}, m1.dtype(), m1.device());
  const double b = beta.to<double>(), a = alpha.to<double>();
  const Tensor out3 = out.unsqueeze(0), a3 = m1.unsqueeze(0), b3 = m2.unsqueeze(0);
  if (b == 0) {  // self is ignored, NaN included
    product_into("addmm", out3, a3, b3, a, 0);
  } else if (b == 1 && s.row_stride == 0 && (s.col_stride == 1 || m == 1) &&
             reinterpret_cast<uintptr_t>(self.data_ptr()) % 16 == 0) {  // the library's kernels load bias in 16 bytes
    product_into("addmm", out3, a3, b3, a, 0, blas::Epilogue::Bias, self.data_ptr());
  } else {
    out.copy_(self.expand({n, m}));
    product_into("addmm", out3, a3, b3, a, b);
  }
  return out;
}

Tensor dot_cuda(const Tensor& a, const Tensor& b) {
  check_dot_shapes(a, b);
  check_product_operands("dot", "self", a, "other", b);
  DeviceGuard guard(a.device().index);
  Tensor out = make_empty(IntArrayRef(), a.dtype(), a.device());
  product_into("dot", out.view({1, 1, 1}), a.view({1, 1, a.size(0)}), b.view({1, b.size(0), 1}), 1, 0);
  return out;
}

Tensor mv_cuda(const Tensor& mat, const Tensor& vec) {
  check_mv_shapes(mat, vec);
  check_product_operands("mv", "self", mat, "vec", vec);
  DeviceGuard guard(mat.device().index);
  Tensor out = make_empty({mat.size(0)}, mat.dtype(), mat.device());
  product_into("mv", out.view({1, mat.size(0), 1}), mat.unsqueeze(0), vec.view({1, vec.size(0), 1}), 1, 0);
  return out;
}

}  // namespace

void register_cuda_matmul_kernels() {
  constexpr DispatchKey K = DispatchKey::CUDA;
  op::mm.impl(K, kFloatingDTypes, &mm_cuda, "cuda::mm");
  op::addmm.impl(K, kFloatingDTypes, &addmm_cuda, "cuda::addmm");
  op::bmm.impl(K, kFloatingDTypes, &bmm_cuda, "cuda::bmm");
  op::dot.impl(K, kFloatingDTypes, &dot_cuda, "cuda::dot");
  op::mv.impl(K, kFloatingDTypes, &mv_cuda, "cuda::mv");
}

}  // namespace ember::cuda
