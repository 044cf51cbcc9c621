// The loop behind the fused optimiser updates (kernels/cpu/optim/optim_updates.cpp):
// one pass over every element of a list of tensors, in SIMD blocks.
//
// Note [Fused updates: chunks and lanes]
// The tensors of a group are walked as if concatenated: the concatenation is
// cut into fixed chunks of kOptimGrain elements (never by thread count) that
// go to the thread pool, and each chunk visits the pieces of the tensors it
// covers. Inside a piece, the update runs on VecF/VecD blocks, and the last
// few elements run as one partial block (masked loads and stores) through the
// same code, so an element's result does not depend on where it falls. Every
// update is elementwise and uses only correctly rounded lane operations, so
// results are bitwise identical for any thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ember/parallel.h"
#include "ember/tensor.h"
#include "kernels/cpu/vec/vec.h"

namespace ember::cpu {

inline constexpr int64_t kOptimGrain = 32768;

// The SIMD block type of a scalar type: float -> VecF, double -> VecD.
template <class T>
struct LanesOf;
template <>
struct LanesOf<float> {
  using type = vec::VecF;
};
template <>
struct LanesOf<double> {
  using type = vec::VecD;
};
template <class T>
using Lanes = typename LanesOf<T>::type;

// A block of a piece: all kLanes elements, or the first `n` (the tail).
template <class T>
struct FullBlock {
  Lanes<T> load(const T* p) const { return Lanes<T>::load(p); }
  void store(const Lanes<T>& v, T* p) const { v.store(p); }
};
template <class T>
struct TailBlock {
  int n;
  Lanes<T> load(const T* p) const { return Lanes<T>::load_partial(p, n); }
  void store(const Lanes<T>& v, T* p) const { v.store_partial(p, n); }
};

// Calls block(i, FullBlock or TailBlock) for the blocks of [begin, end): the
// callee loads and stores elements [i, i + lanes) through the block.
template <class T, class F>
inline void for_each_block(int64_t begin, int64_t end, F&& block) {
  constexpr int64_t kLanes = Lanes<T>::kLanes;
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) block(i, FullBlock<T>{});
  if (i < end) block(i, TailBlock<T>{static_cast<int>(end - i)});
}

// Calls piece(t, begin, end) for the element range [begin, end) of tensors[t],
// over the fixed chunks of the concatenation (Note above); pieces of
// different chunks may run concurrently.
template <class F>
void for_each_piece(const TensorList& tensors, F&& piece) {
  std::vector<int64_t> offsets(tensors.size() + 1, 0);  // offsets[t]: where tensor t starts
  for (size_t t = 0; t < tensors.size(); ++t) offsets[t + 1] = offsets[t] + tensors[t].numel();
  parallel_for(0, offsets.back(), kOptimGrain, [&](int64_t chunk_begin, int64_t chunk_end) {
    size_t t = static_cast<size_t>(std::upper_bound(offsets.begin(), offsets.end(), chunk_begin) - offsets.begin()) - 1;
    for (; t < tensors.size() && offsets[t] < chunk_end; ++t) {
      const int64_t begin = std::max(chunk_begin, offsets[t]) - offsets[t];
      const int64_t end = std::min(chunk_end, offsets[t + 1]) - offsets[t];
      if (begin < end) piece(t, begin, end);
    }
  });
}

}  // namespace ember::cpu
