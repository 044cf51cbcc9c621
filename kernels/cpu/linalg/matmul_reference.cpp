// mm, addmm and bmm computed by the reference GEMM (matmul_reference.h).
#include "kernels/cpu/linalg/matmul_reference.h"

#include "ember/ops.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/matmul_checks.h"
#include "kernels/reference_values.h"

namespace ember::cpu {
namespace {

// C(b) = alpha * A(b) B(b) + beta * C(b) for each of the `batch` matrices; A, B
// with their own strides, C contiguous (n, m) matrices.
void gemm_batch_reference(int64_t batch, const Tensor& a, const Tensor& b, double alpha, double beta, Tensor& c) {
  const int64_t d = a.dim() == 3 ? 1 : 0;  // the first matrix dim
  const int64_t n = a.size(d), k = a.size(d + 1), m = b.size(d + 1);
  for (int64_t i = 0; i < batch; ++i) {
    const int64_t a_off = d ? i * a.stride(0) : 0, b_off = d ? i * b.stride(0) : 0;
    if (a.dtype() == DType::Float32) {
      gemm_reference_f32(n, m, k, static_cast<float>(alpha), a.data_ptr<float>() + a_off, a.stride(d), a.stride(d + 1),
                         b.data_ptr<float>() + b_off, b.stride(d), b.stride(d + 1), static_cast<float>(beta),
                         c.data_ptr<float>() + i * n * m, m, 1);
    } else {
      gemm_reference_f64(n, m, k, alpha, a.data_ptr<double>() + a_off, a.stride(d), a.stride(d + 1),
                         b.data_ptr<double>() + b_off, b.stride(d), b.stride(d + 1), beta,
                         c.data_ptr<double>() + i * n * m, m, 1);
    }
  }
}

void check_reference_operands(const char* op, const Tensor& a, const Tensor& b) {
  check_product_operands(op, "self", a, "mat2", b);
  reference::check_dtype(a, op);
  EMBER_CHECK(!a.is_cuda(), op, ": the reference runs on the CPU, got tensors on ", a.device());
}

}  // namespace

Tensor mm_reference(const Tensor& a, const Tensor& b) {
  check_reference_operands("mm", a, b);
  check_mm_shapes("mm", a, b);
  Tensor c = empty({a.size(0), b.size(1)}, TensorOptions(a.dtype()));
  gemm_batch_reference(1, a, b, 1.0, 0.0, c);
  return c;
}

Tensor addmm_reference(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha) {
  check_reference_operands("addmm", a, b);
  check_mm_shapes("addmm", a, b);
  EMBER_CHECK(self.dtype() == a.dtype(), "addmm: self is ", self.dtype(), " but mat1 is ", a.dtype());
  addmm_self_as_result(self, a, b);  // raises when self does not broadcast to (n, m)
  const std::vector<int64_t> sizes = {a.size(0), b.size(1)};
  // C starts as self broadcast to (n, m); beta == 0 ignores it (NaN included).
  Tensor c = beta == 0 ? zeros(sizes, TensorOptions(a.dtype()))
                       : reference::write(reference::read(self.expand(sizes), "addmm"), a.dtype());
  gemm_batch_reference(1, a, b, alpha, beta, c);
  return c;
}

Tensor bmm_reference(const Tensor& a, const Tensor& b) {
  check_reference_operands("bmm", a, b);
  check_bmm_shapes(a, b);
  Tensor c = empty({a.size(0), a.size(1), b.size(2)}, TensorOptions(a.dtype()));
  gemm_batch_reference(a.size(0), a, b, 1.0, 0.0, c);
  return c;
}

}  // namespace ember::cpu
