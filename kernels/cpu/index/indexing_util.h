// Small helpers shared by the indexing kernels (gather_scatter.cpp,
// flip_roll_repeat.cpp, masked_select.cpp): a 0-d tensor seen as one element
// of a 1-d one, row-major offsets, and the work grain.
#pragma once

#include <algorithm>

#include "core/tensor_util.h"
#include "ember/parallel.h"

namespace ember::cpu {

// Elements per parallel chunk: a fixed amount of work, never a function of the thread count.
inline constexpr int64_t kIndexingGrain = 32768;

// Chunk size in units of `per_unit` elements each.
inline int64_t grain_for(int64_t per_unit) { return std::max<int64_t>(1, kIndexingGrain / std::max<int64_t>(1, per_unit)); }

// Sizes and element strides with a 0-d tensor as shape [1] (PyTorch's "nonempty" dims).
inline DimVector sizes_1d(const Tensor& t) { return t.dim() == 0 ? DimVector{1} : DimVector(t.sizes()); }
inline DimVector strides_1d(const Tensor& t) { return t.dim() == 0 ? DimVector{1} : DimVector(t.strides()); }

// Element offset, under `strides`, of the element with row-major position `linear` in `sizes`.
inline int64_t offset_of(int64_t linear, IntArrayRef sizes, IntArrayRef strides) {
  int64_t off = 0;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    const int64_t s = sizes[d];
    off += (linear % s) * strides[d];
    linear /= s;
  }
  return off;
}

}  // namespace ember::cpu
