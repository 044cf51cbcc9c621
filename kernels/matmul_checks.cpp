// The shared argument checks of the matrix products (matmul_checks.h). The
// messages follow PyTorch's, which print a matrix shape [2, 3] as 2x3.
#include "kernels/matmul_checks.h"

#include <ostream>

#include "ember/error.h"

namespace ember {
namespace {

struct TimesShape {
  IntArrayRef sizes;
};
std::ostream& operator<<(std::ostream& os, TimesShape s) {
  for (size_t i = 0; i < s.sizes.size(); ++i) os << (i ? "x" : "") << s.sizes[i];
  return os;
}

}  // namespace

void check_product_operands(const char* op, const char* name_a, const Tensor& a, const char* name_b, const Tensor& b) {
  EMBER_CHECK(a.device() == b.device(), op, ": expected ", name_a, " and ", name_b,
              " on the same device, but got ", a.device(), " and ", b.device());
  EMBER_CHECK(a.dtype() == b.dtype(), op, ": expected ", name_a, " and ", name_b,
              " to have the same dtype, but got: ", a.dtype(), " != ", b.dtype(), " (shapes ", a.sizes(), " and ",
              b.sizes(), ")");
  EMBER_CHECK(a.dtype() != DType::Bool, op, ": bool tensors are not supported (", name_a, " ", a.sizes(), ", ",
              name_b, " ", b.sizes(), "); convert them to an integer or floating dtype");
}

void check_mm_shapes(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2, op, ": expected 2-D matrices, got shapes ", a.sizes(), " and ",
              b.sizes());
  EMBER_CHECK(a.size(1) == b.size(0), op, ": mat1 and mat2 shapes cannot be multiplied (", TimesShape{a.sizes()},
              " and ", TimesShape{b.sizes()}, ")");
}

void check_bmm_shapes(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 3 && b.dim() == 3, "bmm: expected 3-D tensors, got shapes ", a.sizes(), " and ",
              b.sizes());
  EMBER_CHECK(a.size(0) == b.size(0), "bmm: batch sizes differ (", a.size(0), " vs ", b.size(0), ") for shapes ",
              a.sizes(), " and ", b.sizes());
  EMBER_CHECK(a.size(2) == b.size(1), "bmm: batch1 and batch2 shapes cannot be multiplied (",
              TimesShape{a.sizes()}, " and ", TimesShape{b.sizes()}, ")");
}

void check_dot_shapes(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() == 1 && b.dim() == 1, "dot: expected two 1-D tensors, got shapes ", a.sizes(), " and ",
              b.sizes());
  EMBER_CHECK(a.size(0) == b.size(0), "dot: tensors have different lengths (", a.size(0), " and ", b.size(0),
              "), shapes ", a.sizes(), " and ", b.sizes());
}

void check_mv_shapes(const Tensor& mat, const Tensor& vec) {
  EMBER_CHECK(mat.dim() == 2 && vec.dim() == 1, "mv: expected a 2-D matrix and a 1-D vector, got shapes ",
              mat.sizes(), " and ", vec.sizes());
  EMBER_CHECK(mat.size(1) == vec.size(0), "mv: matrix and vector shapes cannot be multiplied (",
              TimesShape{mat.sizes()}, " and ", vec.size(0), ")");
}

BroadcastMatrix addmm_self_as_result(const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
  const int64_t n = mat1.size(0), m = mat2.size(1);
  EMBER_CHECK(self.dim() <= 2, "addmm: self of shape ", self.sizes(), " cannot be broadcast to the result shape [",
              n, ", ", m, "] (mat1 ", mat1.sizes(), ", mat2 ", mat2.sizes(), ")");
  const int64_t rows = self.dim() == 2 ? self.size(0) : 1, cols = self.dim() >= 1 ? self.size(-1) : 1;
  EMBER_CHECK((rows == n || rows == 1) && (cols == m || cols == 1), "addmm: self of shape ", self.sizes(),
              " cannot be broadcast to the result shape [", n, ", ", m, "] (mat1 ", mat1.sizes(), ", mat2 ",
              mat2.sizes(), ")");
  BroadcastMatrix v{0, 0};
  if (self.dim() == 2 && rows != 1) v.row_stride = self.stride(0);
  if (self.dim() >= 1 && cols != 1) v.col_stride = self.stride(-1);
  return v;
}

}  // namespace ember
