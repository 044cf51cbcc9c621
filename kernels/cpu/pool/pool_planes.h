// What the 2-D pooling kernels (pooling.cpp, adaptive_pooling.cpp) share: an
// input read as planes, argument parsing, the parallel chunking and the
// backward's per-plane scatter (Note [Pooling loops] in pooling.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "ember/tensor.h"

namespace ember::cpu {

template <class T>
using acc_t = opmath_t<T>;

inline constexpr int64_t kChunkElements = int64_t{1} << 15;  // input + output elements per parallel chunk

// Planes per chunk when each plane costs `per_plane` elements of work.
inline int64_t planes_per_chunk(int64_t per_plane) {
  return std::max<int64_t>(1, kChunkElements / std::max<int64_t>(1, per_plane));
}

struct Pair {
  int64_t h, w;
};

// (h, w) from a list of one int (both dims) or two.
inline Pair pair_arg(IntArrayRef v, const char* op, const char* what) {
  EMBER_CHECK(v.size() == 1 || v.size() == 2, op, ": ", what, " must be one int or two ints (h, w), got ", v);
  return v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]};
}

// An input viewed as planes: [C, H, W] or [N, C, H, W].
struct Planes {
  int64_t count, h, w;
};

inline Planes planes_of(IntArrayRef sizes, const char* op) {
  EMBER_CHECK(sizes.size() == 3 || sizes.size() == 4, op,
              ": expected a 3-D [C, H, W] or 4-D [N, C, H, W] input, got shape ", sizes);
  const size_t n = sizes.size();
  EMBER_CHECK(sizes[n - 3] > 0 && sizes[n - 2] > 0 && sizes[n - 1] > 0, op,
              ": expected non-zero C, H and W (only the batch may be empty), got shape ", sizes);
  int64_t count = 1;
  for (size_t d = 0; d + 2 < n; ++d) count *= sizes[d];
  return {count, sizes[n - 2], sizes[n - 1]};
}

// `sizes` with its last two dims replaced.
inline DimVector with_spatial(IntArrayRef sizes, int64_t h, int64_t w) {
  DimVector out(sizes);
  out[out.size() - 2] = h;
  out[out.size() - 1] = w;
  return out;
}

// The window geometry of max_pool2d and avg_pool2d, checked as PyTorch does.
// Checks that a backward op's grad_output has the forward output's shape.
inline void check_grad_shape(const char* op, const Tensor& grad_output, IntArrayRef input_size, int64_t out_h, int64_t out_w) {
  const DimVector want = with_spatial(input_size, out_h, out_w);
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(want), op, ": expected grad_output of shape ", IntArrayRef(want),
              " for an input of shape ", input_size, ", got ", grad_output.sizes());
}

// Runs `scatter(plane index, grad plane, accumulator plane)` over the planes of grad_input,
// with the accumulators zeroed and in float for f16/bf16.
template <class T, class F>
void scatter_planes(const Tensor& grad, Tensor& grad_input, const Planes& in, int64_t out_plane, F scatter) {
  using A = acc_t<T>;
  const int64_t plane = in.h * in.w;
  parallel_for(0, in.count, planes_per_chunk(plane + out_plane), [&](int64_t b, int64_t e) {
    std::vector<A> scratch(std::is_same_v<T, A> ? 0 : static_cast<size_t>(plane));
    for (int64_t p = b; p < e; ++p) {
      T* gi = grad_input.data_ptr<T>() + p * plane;
      A* acc = std::is_same_v<T, A> ? reinterpret_cast<A*>(gi) : scratch.data();
      std::fill(acc, acc + plane, A(0));
      scatter(p, grad.data_ptr<T>() + p * out_plane, acc);
      if constexpr (!std::is_same_v<T, A>) std::copy(acc, acc + plane, gi);
    }
  });
}

}  // namespace ember::cpu
