// Operand layout and masks for the attention kernels (attention_geometry.h).
#include "kernels/cpu/attention/attention_geometry.h"

#include <algorithm>
#include <limits>

#include "core/dtype_dispatch.h"

namespace ember::cpu {

DType compute_dtype(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

Tensor compute_operand(const Tensor& t, DType compute) {
  Tensor c = t.dtype() == compute ? t : t.to(compute);
  if (c.dim() >= 1 && c.size(-1) > 1 && c.stride(-1) != 1) c = c.contiguous();
  return c;
}

template <class T>
MatrixView<T> matrix_view(const Tensor& t, const DimVector& batch, int64_t n) {
  MatrixView<T> m;
  m.data = static_cast<const T*>(t.data_ptr());
  const int64_t nd = t.dim();
  m.row_stride = nd >= 2 && t.size(-2) > 1 ? t.stride(-2) : 0;
  m.col_stride = nd >= 1 && t.size(-1) > 1 ? t.stride(-1) : 0;
  m.offset.assign(static_cast<size_t>(n), 0);
  const int64_t nb = static_cast<int64_t>(batch.size());
  // Walk the batch index in row-major order; dims t lacks or has as 1 add nothing.
  std::vector<int64_t> idx(static_cast<size_t>(nb), 0);
  int64_t off = 0;
  for (int64_t b = 0; b < n; ++b) {
    m.offset[static_cast<size_t>(b)] = off;
    for (int64_t d = nb - 1; d >= 0; --d) {
      const int64_t td = d - nb + (nd - 2);  // t's dim aligned with batch dim d (right-aligned)
      const int64_t st = td >= 0 && t.size(td) > 1 ? t.stride(td) : 0;
      if (++idx[static_cast<size_t>(d)] < batch[static_cast<size_t>(d)]) {
        off += st;
        break;
      }
      off -= (batch[static_cast<size_t>(d)] - 1) * st;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  return m;
}

template MatrixView<float> matrix_view<float>(const Tensor&, const DimVector&, int64_t);
template MatrixView<double> matrix_view<double>(const Tensor&, const DimVector&, int64_t);
template MatrixView<uint8_t> matrix_view<uint8_t>(const Tensor&, const DimVector&, int64_t);

template <class T>
void apply_masks(T* s, int64_t ld, int64_t i0, int64_t rows, int64_t j0, int64_t cols, bool causal,
                 const MatrixView<T>* float_mask, const MatrixView<uint8_t>* bool_mask, int64_t b) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  if (float_mask) {
    const T* base = float_mask->matrix(b);
    for (int64_t r = 0; r < rows; ++r) {
      const T* mrow = base + (i0 + r) * float_mask->row_stride + j0 * float_mask->col_stride;
      T* srow = s + r * ld;
      if (float_mask->col_stride == 1) {
        for (int64_t c = 0; c < cols; ++c) srow[c] += mrow[c];
      } else {
        for (int64_t c = 0; c < cols; ++c) srow[c] += mrow[c * float_mask->col_stride];
      }
    }
  } else if (bool_mask) {
    const uint8_t* base = bool_mask->matrix(b);
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* mrow = base + (i0 + r) * bool_mask->row_stride + j0 * bool_mask->col_stride;
      T* srow = s + r * ld;
      for (int64_t c = 0; c < cols; ++c) {
        if (!mrow[c * bool_mask->col_stride]) srow[c] = kNegInf;
      }
    }
  } else if (causal) {
    for (int64_t r = 0; r < rows; ++r) {
      // Row i0 + r attends keys j <= i0 + r (torch's tril, aligned top-left).
      for (int64_t c = std::max<int64_t>(0, i0 + r + 1 - j0); c < cols; ++c) s[r * ld + c] = kNegInf;
    }
  }
}

template void apply_masks<float>(float*, int64_t, int64_t, int64_t, int64_t, int64_t, bool,
                                 const MatrixView<float>*, const MatrixView<uint8_t>*, int64_t);
template void apply_masks<double>(double*, int64_t, int64_t, int64_t, int64_t, int64_t, bool,
                                  const MatrixView<double>*, const MatrixView<uint8_t>*, int64_t);

}  // namespace ember::cpu
