// Deterministic sums on the device.
//
// Note [CUDA sum]
// The op wrapper (cuda_reduce_ops.cpp) reduces every sum to a contiguous input
// viewed as (outer, k, inner), summed over k. No float atomics: each output
// is built by a fixed tree of partial sums whose shape depends only on
// (outer, k, inner), never on the grid size or the GPU, so a sum gives the
// same bits on every run and every device model.
//  - inner == 1 (rows): a warp sums a tile of kRowTile elements of a row,
//    each lane adding its 16 elements (k = tile start + lane + 32 j) in
//    order, then the lanes combine by a butterfly of shuffles; the tile sums
//    form a (outer, tiles) array that the same kernel sums again until one
//    tile is left. Covers the full reduction (outer = 1).
//  - inner > 1 (columns): a thread sums kColChunk consecutive k of one
//    (o, i) in order, neighbouring threads taking neighbouring i (coalesced);
//    the chunk sums (outer, chunks, inner) are summed again the same way.
// Accumulation is in float for float32/float16/bfloat16, double for float64,
// int64 for integers and bool.
#include <algorithm>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_loops.cuh"

namespace ember::cuda {
namespace {

constexpr int64_t kRowTile = 512;   // elements per warp and pass (32 lanes x 16)
constexpr int64_t kColChunk = 256;  // elements per thread and pass

// Element `index` of `base`: In when known at compile time, else `dtype` read at run time.
template <class In, class Acc>
__device__ __forceinline__ Acc load_acc(const char* base, int64_t index, DType dtype, int64_t elem) {
  if constexpr (std::is_void_v<In>) return load_converted<Acc>(dtype, base + index * elem);
  else return static_cast<Acc>(reinterpret_cast<const In*>(base)[index]);
}

// in: (rows, len) contiguous; out: (rows, tiles), tiles = ceil(len / kRowTile).
template <class In, class Acc>
__global__ void __launch_bounds__(kThreads) row_sum_kernel(const char* in, DType dtype, int64_t elem, int64_t rows,
                                                           int64_t len, int64_t tiles, Acc* out) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  const int64_t nwarps = (static_cast<int64_t>(gridDim.x) * blockDim.x) >> 5;
  for (int64_t w = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; w < rows * tiles; w += nwarps) {
    const int64_t row = w / tiles;
    const int64_t start = (w - row * tiles) * kRowTile;
    const int64_t end = std::min(len, start + kRowTile);
    const int64_t row_base = row * len;
    Acc acc = 0;
#pragma unroll
    for (int64_t j = 0; j < kRowTile / 32; ++j) {
      const int64_t k = start + j * 32 + lane;
      if (k < end) acc += load_acc<In, Acc>(in, row_base + k, dtype, elem);
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if (lane == 0) out[w] = acc;
  }
}

// in: (outer, len, inner) contiguous; out: (outer, chunks, inner), chunks = ceil(len / kColChunk).
template <class In, class Acc>
__global__ void __launch_bounds__(kThreads) column_sum_kernel(const char* in, DType dtype, int64_t elem, int64_t outer,
                                                              int64_t len, int64_t inner, int64_t chunks, Acc* out) {
  const int64_t total = outer * chunks * inner;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += nthreads) {
    const int64_t i = t % inner;
    const int64_t rest = t / inner;
    const int64_t o = rest / chunks;
    const int64_t k0 = (rest - o * chunks) * kColChunk;
    const int64_t k1 = std::min(len, k0 + kColChunk);
    Acc acc = 0;
    for (int64_t k = k0; k < k1; ++k) acc += load_acc<In, Acc>(in, (o * len + k) * inner + i, dtype, elem);
    out[t] = acc;
  }
}

unsigned blocks_for(int64_t threads, int device) {
  const int64_t max_blocks = static_cast<int64_t>(multiprocessor_count(device)) * 16;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min((threads + kThreads - 1) / kThreads, max_blocks)));
}

// One pass: in (outer, len, inner) of dtype In (void: `dtype` at run time) -> out of Acc.
template <class In, class Acc>
void sum_pass(const char* in, DType dtype, int64_t outer, int64_t len, int64_t inner, int64_t parts, Acc* out,
              int device) {
  const int64_t elem = static_cast<int64_t>(element_size(dtype));
  if (inner == 1) {
    launch_kernel("sum", "row_sum_kernel", row_sum_kernel<In, Acc>, blocks_for(outer * parts * 32, device), kThreads, 0,
                  current_cuda_stream(), in, dtype, elem, outer, len, parts, out);
  } else {
    launch_kernel("sum", "column_sum_kernel", column_sum_kernel<In, Acc>, blocks_for(outer * parts * inner, device),
                  kThreads, 0, current_cuda_stream(), in, dtype, elem, outer, len, inner, parts, out);
  }
}

template <class Acc>
void sum_all_passes(const void* input, DType in_dtype, void* output, const SumShape& s, int device,
                    void* (*scratch)(void*, size_t), void* ctx) {
  const char* in = static_cast<const char*>(input);
  DType dtype = in_dtype;
  int64_t len = s.k;
  for (bool first = true;; first = false) {
    const int64_t parts = (len + (s.inner == 1 ? kRowTile : kColChunk) - 1) / (s.inner == 1 ? kRowTile : kColChunk);
    Acc* out = parts == 1 ? static_cast<Acc*>(output)
                          : static_cast<Acc*>(scratch(ctx, static_cast<size_t>(s.outer * parts * s.inner) * sizeof(Acc)));
    if (!first || dtype == dtype_v<Acc>) {
      sum_pass<Acc, Acc>(in, dtype, s.outer, len, s.inner, parts, out, device);
    } else if constexpr (!std::is_same_v<Acc, double>) {  // float64 inputs are the only ones summed in double
      sum_pass<void, Acc>(in, dtype, s.outer, len, s.inner, parts, out, device);
    }
    if (parts == 1) return;
    in = reinterpret_cast<const char*>(out);
    dtype = dtype_v<Acc>;
    len = parts;
  }
}

}  // namespace

DType sum_accumulate_dtype(DType in) {
  switch (in) {
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16: return DType::Float32;
    case DType::Float64: return DType::Float64;
    default: return DType::Int64;
  }
}

void launch_sum(const void* in, DType in_dtype, void* out, const SumShape& shape, int device,
                void* (*scratch)(void* ctx, size_t nbytes), void* scratch_ctx) {
  const DType acc = sum_accumulate_dtype(in_dtype);
  if (shape.outer == 0 || shape.inner == 0) return;
  if (shape.k == 0) {  // empty sums are 0, and 0 is all-zero bits in every accumulation type
    const size_t nbytes = static_cast<size_t>(shape.outer * shape.inner) * element_size(acc);
    EMBER_CUDA_CHECK(cudaMemsetAsync(out, 0, nbytes, current_cuda_stream()), "sum");
    return;
  }
  switch (acc) {
    case DType::Float32: sum_all_passes<float>(in, in_dtype, out, shape, device, scratch, scratch_ctx); break;
    case DType::Float64: sum_all_passes<double>(in, in_dtype, out, shape, device, scratch, scratch_ctx); break;
    default: sum_all_passes<int64_t>(in, in_dtype, out, shape, device, scratch, scratch_ctx); break;
  }
}

}  // namespace ember::cuda
