// Shapes and memory layout shared by the attention kernels
// (kernels/cpu/attention/attention.cpp forward, attention_backward.cpp backward).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/attention_checks.h"
#include "core/op_decls.h"
#include "ember/scalar.h"
#include "ember/tensor.h"

namespace ember::cpu {

// The argument checks and the problem's shape (core/attention_checks.h).
using attention::AttentionShape;
using attention::check_attention;

// An operand seen as n matrices: element (b, i, c) is at data[offset[b] + i * row_stride + c * col_stride].
// Broadcast dims contribute offset 0.
template <class T>
struct MatrixView {
  const T* data = nullptr;
  std::vector<int64_t> offset;
  int64_t row_stride = 0, col_stride = 1;
  const T* matrix(int64_t b) const { return data + offset[static_cast<size_t>(b)]; }
};

// `t` ([..., rows, cols], broadcastable to batch + [rows, cols]) as the matrices of `batch`.
// `t` must already hold T's elements; its strides are kept.
template <class T>
MatrixView<T> matrix_view(const Tensor& t, const DimVector& batch, int64_t n);

// `t` in the compute dtype with unit stride along its last dim (a copy only when needed).
Tensor compute_operand(const Tensor& t, DType compute);
// The dtype the kernels compute in: float32 for float16/bfloat16.
DType compute_dtype(DType t);

// Query rows and key rows per tile. Fixed (never derived from the thread
// count), so every element is summed in the same order on any thread count.
// Chosen by measurement (bench/compare_attention.cpp) among 64, 128 and 256:
// a 128 x 128 float score tile (64 KiB) stays in L2.
inline constexpr int64_t kForwardBlockQ = 128;
inline constexpr int64_t kForwardBlockK = 128;
inline constexpr int64_t kBackwardBlockQ = 128;
inline constexpr int64_t kBackwardBlockK = 64;

// Adds the mask (float: added; bool: false becomes -inf) and the causal mask
// (key j > query i is -inf) to the score tile s (rows i0.., cols j0.., leading dim ld).
template <class T>
void apply_masks(T* s, int64_t ld, int64_t i0, int64_t rows, int64_t j0, int64_t cols, bool causal,
                 const MatrixView<T>* float_mask, const MatrixView<uint8_t>* bool_mask, int64_t b);

// The flash_attention_backward kernel (attention_backward.cpp).
TensorTriple flash_attention_backward_cpu(const Tensor& grad_output, const std::optional<Tensor>& grad_logsumexp,
                                          const Tensor& query, const Tensor& key, const Tensor& value,
                                          const Tensor& output, const Tensor& logsumexp,
                                          const std::optional<Tensor>& attn_mask, bool is_causal,
                                          const std::optional<Scalar>& scale);

}  // namespace ember::cpu
