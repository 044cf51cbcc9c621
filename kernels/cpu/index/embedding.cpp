// CPU kernels of embedding and its backward.
//
// Note [Deterministic embedding backward]
// The backward adds the gradient rows of all positions holding id v into row
// v of the result. Parallel adds into shared rows would race (or, with
// atomics, add in an order that depends on timing). Instead a counting sort
// groups the positions by id, in increasing position order, and the vocabulary
// rows are split among threads: each result row is owned by one thread and
// summed in position order, so the bits never depend on the thread count.
// Rows nobody refers to (and the padding_idx row) are zero-filled in the
// same pass, so the result is written once.
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_loss.h"
#include "ember/ops.h"
#include "ember/parallel.h"

namespace ember {

namespace {

constexpr int64_t kGrainElements = 32768;

// indices (int64 or int32, any shape) as contiguous int64, each checked against [0, num_weights).
std::vector<int64_t> checked_ids(const char* op, const Tensor& indices, int64_t num_weights) {
  EMBER_CHECK(indices.dtype() == DType::Int64 || indices.dtype() == DType::Int32, op,
              ": expected int64 or int32 indices, got ", indices.dtype(), " ", indices.sizes());
  const Tensor ids = indices.to(DType::Int64).contiguous();
  const int64_t* p = ids.data_ptr<int64_t>();
  std::vector<int64_t> out(p, p + ids.numel());
  for (size_t k = 0; k < out.size(); ++k) {
    EMBER_CHECK(out[k] >= 0 && out[k] < num_weights, op, ": index ", out[k], " at position ", k,
                " is out of range for an embedding of ", num_weights, " rows (expected 0 <= index < ", num_weights,
                ")");
  }
  return out;
}

int64_t row_grain(int64_t width) { return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(1, width)); }

// weight (V, D), indices (...) -> (..., D): row copies.
Tensor embedding_cpu(const Tensor& weight, const Tensor& indices, std::optional<int64_t> /*padding_idx*/) {
  const char* op = "embedding";
  EMBER_CHECK(weight.dim() == 2, op, ": expected a 2-d weight (num_embeddings, embedding_dim), got ", weight.sizes());
  const int64_t V = weight.size(0), D = weight.size(1);
  const std::vector<int64_t> ids = checked_ids(op, indices, V);
  std::vector<int64_t> sizes = indices.sizes().vec();
  sizes.push_back(D);
  Tensor out = empty(sizes, weight.options());
  const Tensor w = weight.contiguous();
  const size_t row_bytes = static_cast<size_t>(D) * w.element_size();
  const char* src = static_cast<const char*>(w.data_ptr());
  char* dst = static_cast<char*>(out.data_ptr());
  parallel_for(0, static_cast<int64_t>(ids.size()), row_grain(D), [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) {
      std::memcpy(dst + static_cast<size_t>(k) * row_bytes, src + static_cast<size_t>(ids[k]) * row_bytes, row_bytes);
    }
  });
  return out;
}

// grad_output (..., D), indices (...) -> (num_weights, D); the padding_idx row stays 0.
Tensor embedding_backward_cpu(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                              std::optional<int64_t> padding_idx) {
  const char* op = "embedding_backward";
  EMBER_CHECK(num_weights >= 0, op, ": num_weights must be >= 0, got ", num_weights);
  const std::vector<int64_t> ids = checked_ids(op, indices, num_weights);
  const int64_t n = static_cast<int64_t>(ids.size());
  const size_t id_dims = static_cast<size_t>(indices.dim());
  EMBER_CHECK(grad_output.dim() == indices.dim() + 1 && grad_output.sizes().slice(0, id_dims) == indices.sizes(), op,
              ": expected grad_output of shape (", indices.sizes(), ", D), got ", grad_output.sizes());
  const int64_t V = num_weights, D = grad_output.size(-1);
  const int64_t pad = padding_idx.value_or(-1);
  // Counting sort: positions of id v are order[start[v], start[v + 1]), ascending.
  std::vector<int64_t> start(static_cast<size_t>(V) + 1, 0), order(static_cast<size_t>(n));
  for (int64_t id : ids) ++start[static_cast<size_t>(id) + 1];
  for (int64_t v = 0; v < V; ++v) start[v + 1] += start[v];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t k = 0; k < n; ++k) order[static_cast<size_t>(fill[static_cast<size_t>(ids[k])]++)] = k;

  const Tensor g = grad_output.contiguous();
  Tensor out = empty({V, D}, grad_output.options());
  dispatch_floating(grad_output.dtype(), op, [&]<class T>() {
    using A = opmath_t<T>;
    const T* gp = g.data_ptr<T>();
    T* op_ = out.data_ptr<T>();
    parallel_for(0, V, row_grain(D), [&](int64_t begin, int64_t end) {
      std::vector<A> acc(static_cast<size_t>(D));
      for (int64_t v = begin; v < end; ++v) {
        T* dst = op_ + v * D;
        const int64_t first = start[v], last = start[v + 1];
        if (first == last || v == pad) {
          std::fill(dst, dst + D, T(0.0f));
          continue;
        }
        if constexpr (std::is_same_v<T, A>) {
          std::memcpy(dst, gp + order[first] * D, static_cast<size_t>(D) * sizeof(T));
          for (int64_t k = first + 1; k < last; ++k) {
            const T* src = gp + order[k] * D;
            for (int64_t d = 0; d < D; ++d) dst[d] += src[d];
          }
        } else {
          std::fill(acc.begin(), acc.end(), A(0));
          for (int64_t k = first; k < last; ++k) {
            const T* src = gp + order[k] * D;
            for (int64_t d = 0; d < D; ++d) acc[d] += static_cast<A>(src[d]);
          }
          for (int64_t d = 0; d < D; ++d) dst[d] = static_cast<T>(acc[d]);
        }
      }
    });
  });
  return out;
}

}  // namespace

void register_cpu_embedding_kernels() {
  op::embedding.impl(DispatchKey::CPU, kFloatingDTypes, &embedding_cpu, "cpu::embedding");
  op::embedding_backward.impl(DispatchKey::CPU, kFloatingDTypes, &embedding_backward_cpu, "cpu::embedding_backward");
}

}  // namespace ember
