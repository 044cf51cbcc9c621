// The shared helpers of the linear-algebra kernels (decompositions.h), and
// their registration. Every kernel is registered for every dtype and refuses
// all but float32 and float64 with an error that names the op, as PyTorch
// does, instead of the dispatcher's "no kernel" message.
#include "kernels/cpu/linalg/decompositions.h"

#include "core/dtype_dispatch.h"
#include "core/op_decls_linalg.h"

namespace ember {
namespace cpu::linalg {

void check_matrices(const char* op, const Tensor& t, bool square, const char* what) {
  EMBER_CHECK(t.device().is_cpu(), op, ": the CPU kernel got ", what, " on ", t.device());
  EMBER_CHECK(t.dtype() == DType::Float32 || t.dtype() == DType::Float64, op, ": expected ", what,
              " of dtype float32 or float64, but got ", t.dtype(), " (shape ", t.sizes(),
              "); convert it first, e.g. A.to(kFloat64)");
  EMBER_CHECK(t.dim() >= 2, op, ": expected ", what, " to have at least 2 dims (a matrix or a batch of matrices), ",
              "but got shape ", t.sizes());
  EMBER_CHECK(!square || t.size(-1) == t.size(-2), op, ": expected ", what,
              " to be a square matrix or a batch of square matrices, but got shape ", t.sizes(), " (",
              t.size(-2), " rows, ", t.size(-1), " columns)");
}

DimVector batch_shape(const Tensor& t) { return DimVector(t.sizes().slice(0, static_cast<size_t>(t.dim() - 2))); }

int64_t batch_count(IntArrayRef batch) {
  int64_t n = 1;
  for (int64_t s : batch) n *= s;
  return n;
}

std::string batch_element(IntArrayRef batch, int64_t b) {
  return batch.empty() ? std::string() : "batch element " + std::to_string(b) + ": ";
}

MatrixBatch::MatrixBatch(const Tensor& t, IntArrayRef batch)
    : data_(t.data_ptr()),
      sizes_(batch),
      strides_(batch.size(), 0),
      rows_(t.size(-2)),
      cols_(t.size(-1)),
      row_stride_(t.stride(-2)),
      col_stride_(t.stride(-1)) {
  // The tensor's batch dims align with the last dims of `batch`; a missing or
  // size-1 dim is broadcast (stride 0).
  const int64_t lead = static_cast<int64_t>(batch.size()) - (t.dim() - 2);
  for (int64_t d = 0; d < t.dim() - 2; ++d) {
    if (t.size(d) != 1) strides_[static_cast<size_t>(lead + d)] = t.stride(d);
  }
}

int64_t MatrixBatch::offset(int64_t b) const {
  int64_t off = 0;
  for (size_t d = sizes_.size(); d-- > 0;) {
    off += (b % sizes_[d]) * strides_[d];
    b /= sizes_[d];
  }
  return off;
}

Tensor make_result(IntArrayRef batch, std::initializer_list<int64_t> tail, const Tensor& like) {
  DimVector sizes(batch);
  for (int64_t s : tail) sizes.push_back(s);
  return make_empty(sizes, like.dtype(), like.device());
}

}  // namespace cpu::linalg

void register_cpu_linalg_decomposition_kernels() {
  using namespace cpu::linalg;
  op::linalg_solve.impl(DispatchKey::CPU, kAllDTypes, &solve_kernel, "cpu::linalg_solve");
  op::linalg_inv.impl(DispatchKey::CPU, kAllDTypes, &inv_kernel, "cpu::linalg_inv");
  op::linalg_det.impl(DispatchKey::CPU, kAllDTypes, &det_kernel, "cpu::linalg_det");
  op::linalg_slogdet.impl(DispatchKey::CPU, kAllDTypes, &slogdet_kernel, "cpu::linalg_slogdet");
  op::linalg_cholesky.impl(DispatchKey::CPU, kAllDTypes, &cholesky_kernel, "cpu::linalg_cholesky");
  op::linalg_qr.impl(DispatchKey::CPU, kAllDTypes, &qr_kernel, "cpu::linalg_qr");
  op::linalg_svd.impl(DispatchKey::CPU, kAllDTypes, &svd_kernel, "cpu::linalg_svd");
  op::linalg_eigh.impl(DispatchKey::CPU, kAllDTypes, &eigh_kernel, "cpu::linalg_eigh");
  op::linalg_pinv.impl(DispatchKey::CPU, kAllDTypes, &pinv_kernel, "cpu::linalg_pinv");
}

}  // namespace ember
