// Philox random fills on the device: one thread per Philox block j writes
// elements [j*P, j*P + P) of the output, exactly as the CPU fills in
// core/random_fill.cpp do (Note [Philox element mapping] in core/philox.h),
// so a CUDA tensor and a CPU tensor filled from the same (seed, offset) hold
// the same uniforms and integers bit for bit, and the same normals up to the
// last bits of the device's log/sin/cos.
#include <algorithm>
#include <cmath>

#include "core/philox.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_loops.cuh"

namespace ember::cuda {
namespace {

struct UniformBlock {
  __device__ void operator()(const Philox4x32& b, float* v) const {
    uniforms_from_block(b, v);
    for (int k = 0; k < 4; ++k) v[k] = scale_uniform(v[k], f32);
  }
  __device__ void operator()(const Philox4x32& b, double* v) const {
    uniforms_from_block(b, v);
    for (int k = 0; k < 2; ++k) v[k] = scale_uniform(v[k], f64);
  }
  UniformScale<float> f32;
  UniformScale<double> f64;
};

struct NormalBlock {
  template <class T>
  __device__ void operator()(const Philox4x32& b, T* v) const {
    normals_from_block(b, v);
    for (int k = 0; k < static_cast<int>(kElementsPerBlock<T>); ++k)
      v[k] = scale_normal(v[k], static_cast<T>(mean), static_cast<T>(std));
  }
  double mean, std;
};

struct RandintBlock {
  __device__ void operator()(const Philox4x32& b, int64_t* v) const { randints_from_block(b, low, range, v); }
  int64_t low;
  uint64_t range;
};

// out: (n,). Block j of the fill is Philox block offset + j.
template <class T, class MakeBlock>
__global__ void __launch_bounds__(kThreads) philox_fill_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset,
                                                               MakeBlock make) {
  constexpr int64_t P = kElementsPerBlock<T>;
  const int64_t blocks = (n + P - 1) / P;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < blocks; j += nthreads) {
    T v[P];
    make(philox_block(seed, offset + static_cast<uint64_t>(j)), v);
    const int64_t base = j * P;
#pragma unroll
    for (int64_t k = 0; k < P; ++k)
      if (base + k < n) out[base + k] = v[k];
  }
}

template <class T, class MakeBlock>
void launch_fill_blocks(T* out, int64_t n, uint64_t seed, uint64_t offset, const MakeBlock& make, int device,
                        const char* op) {
  EMBER_CHECK(n >= 0, op, ": expected a non-negative element count, got ", n);
  if (n == 0) return;
  const int64_t blocks = (n + kElementsPerBlock<T> - 1) / kElementsPerBlock<T>;
  const int64_t max_grid = static_cast<int64_t>(multiprocessor_count(device)) * 16;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>((blocks + kThreads - 1) / kThreads, max_grid));
  launch_kernel(op, "philox_fill_kernel", philox_fill_kernel<T, MakeBlock>, grid, kThreads, 0, current_cuda_stream(), out, n,
                seed, offset, make);
}

template <class T>
UniformScale<T> checked_uniform_scale(double low, double high) {
  const UniformScale<T> scale = uniform_scale(static_cast<T>(low), static_cast<T>(high));
  EMBER_CHECK(low <= high && std::isfinite(scale.span),
              "uniform: expected low <= high with a finite high - low, got low=", low, " high=", high);
  return scale;
}

void check_normal(double mean, double std) {
  EMBER_CHECK(std >= 0.0 && std::isfinite(std) && std::isfinite(mean),
              "normal: expected a finite mean and a finite std >= 0, got mean=", mean, " std=", std);
}

}  // namespace

void launch_uniform(float* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high, int device) {
  UniformBlock make{checked_uniform_scale<float>(low, high), {}};
  launch_fill_blocks(out, n, seed, offset, make, device, "uniform_");
}
void launch_uniform(double* out, int64_t n, uint64_t seed, uint64_t offset, double low, double high, int device) {
  UniformBlock make{{}, checked_uniform_scale<double>(low, high)};
  launch_fill_blocks(out, n, seed, offset, make, device, "uniform_");
}
void launch_normal(float* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std, int device) {
  check_normal(mean, std);
  launch_fill_blocks(out, n, seed, offset, NormalBlock{mean, std}, device, "normal_");
}
void launch_normal(double* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std, int device) {
  check_normal(mean, std);
  launch_fill_blocks(out, n, seed, offset, NormalBlock{mean, std}, device, "normal_");
}
void launch_randint(int64_t* out, int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high, int device) {
  EMBER_CHECK(low < high, "randint: expected low < high, got low=", low, " high=", high);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  launch_fill_blocks(out, n, seed, offset, RandintBlock{low, range}, device, "random_");
}

}  // namespace ember::cuda
