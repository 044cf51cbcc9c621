// CUDA's device-side language as host C++: the qualifiers, the built-in
// variables of a thread, barriers, warp collectives and atomics, implemented
// by the block runner (block_runner.h). Kernels include it through the
// emulation's <cuda_runtime.h>; nothing in a kernel changes.
#pragma once

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/cuda/emulate/runtime_api.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
// One static object per OS thread that runs blocks: the blocks of a launch
// run one after another on the executor thread, so all threads of a block see
// the same object. Unlike on a GPU it starts zeroed and keeps the previous
// block's values (not poisoned: reading an element no thread wrote is not caught).
#define __shared__ static thread_local

namespace ember::cuda::emulate {

// The built-in variables of the emulated thread that is running.
struct ThreadBuiltins {
  uint3 thread_idx;
  uint3 block_idx;
  dim3 block_dim;
  dim3 grid_dim;
};
const ThreadBuiltins& builtins();

void sync_block();
// Every lane of `mask` (the caller among them) must call a warp collective with the same mask.
void sync_warp(unsigned mask, const char* what);
// The caller's lane, 0..31.
int lane_id();
// The lane exchange behind the shuffles: every lane of `mask` puts `bits`;
// returns what lane `src` put (a poison pattern when src is not in the mask).
uint64_t exchange_lanes(unsigned mask, uint64_t bits, int src, const char* what);
// Bit i set when lane i of `mask` passed a true predicate.
unsigned ballot_lanes(unsigned mask, bool predicate, const char* what);
// Number of threads of the block that passed a true predicate (a block barrier).
int count_block(bool predicate);
// The dynamic shared memory of the running block (`extern __shared__` arrays).
void* dynamic_shared_memory();

template <class T>
uint64_t to_lane_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffles move values of at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <class T>
T from_lane_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

}  // namespace ember::cuda::emulate

#define threadIdx (::ember::cuda::emulate::builtins().thread_idx)
#define blockIdx (::ember::cuda::emulate::builtins().block_idx)
#define blockDim (::ember::cuda::emulate::builtins().block_dim)
#define gridDim (::ember::cuda::emulate::builtins().grid_dim)
constexpr int warpSize = 32;

inline void __syncthreads() { ember::cuda::emulate::sync_block(); }
inline int __syncthreads_count(int predicate) { return ember::cuda::emulate::count_block(predicate != 0); }
inline int __syncthreads_and(int predicate) {
  const dim3 b = ember::cuda::emulate::builtins().block_dim;
  return ember::cuda::emulate::count_block(predicate != 0) == static_cast<int>(b.x * b.y * b.z);
}
inline int __syncthreads_or(int predicate) { return ember::cuda::emulate::count_block(predicate != 0) > 0; }
inline void __syncwarp(unsigned mask = 0xffffffffu) { ember::cuda::emulate::sync_warp(mask, "__syncwarp"); }
// Threads of one emulated block run on one OS thread and blocks run in turn:
// every write is already visible to the next reader.
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// ---- warp collectives (width: segments of `width` lanes, a power of two) ----
template <class T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize) {
  const int lane = ember::cuda::emulate::lane_id();
  const int src = (lane & ~(width - 1)) + (src_lane & (width - 1));
  return ember::cuda::emulate::from_lane_bits<T>(
      ember::cuda::emulate::exchange_lanes(mask, ember::cuda::emulate::to_lane_bits(v), src, "__shfl_sync"));
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  const int lane = ember::cuda::emulate::lane_id();
  const int src = (lane & (width - 1)) >= static_cast<int>(delta) ? lane - static_cast<int>(delta) : lane;
  return ember::cuda::emulate::from_lane_bits<T>(
      ember::cuda::emulate::exchange_lanes(mask, ember::cuda::emulate::to_lane_bits(v), src, "__shfl_up_sync"));
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  const int lane = ember::cuda::emulate::lane_id();
  const int src = (lane & (width - 1)) + static_cast<int>(delta) < width ? lane + static_cast<int>(delta) : lane;
  return ember::cuda::emulate::from_lane_bits<T>(
      ember::cuda::emulate::exchange_lanes(mask, ember::cuda::emulate::to_lane_bits(v), src, "__shfl_down_sync"));
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
  const int lane = ember::cuda::emulate::lane_id();
  const int other = lane ^ lane_mask;
  // A lane reaching into a later segment gets its own value.
  const int src = (other & ~(width - 1)) > (lane & ~(width - 1)) ? lane : other;
  return ember::cuda::emulate::from_lane_bits<T>(
      ember::cuda::emulate::exchange_lanes(mask, ember::cuda::emulate::to_lane_bits(v), src, "__shfl_xor_sync"));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return ember::cuda::emulate::ballot_lanes(mask, predicate != 0, "__ballot_sync");
}
inline int __any_sync(unsigned mask, int predicate) {
  return ember::cuda::emulate::ballot_lanes(mask, predicate != 0, "__any_sync") != 0;
}
inline int __all_sync(unsigned mask, int predicate) {
  return ember::cuda::emulate::ballot_lanes(mask, predicate != 0, "__all_sync") == mask;
}

// ---- atomics: the emulated blocks of concurrent streams may race ----
template <class T>
T atomicAdd(T* address, T value) {
  return std::atomic_ref<T>(*address).fetch_add(value);
}
template <class T>
T atomicSub(T* address, T value) {
  return std::atomic_ref<T>(*address).fetch_sub(value);
}
template <class T>
T atomicExch(T* address, T value) {
  return std::atomic_ref<T>(*address).exchange(value);
}
template <class T>
T atomicCAS(T* address, T compare, T value) {
  std::atomic_ref<T>(*address).compare_exchange_strong(compare, value);
  return compare;
}
template <class T>
T atomicMax(T* address, T value) {
  std::atomic_ref<T> a(*address);
  T old = a.load();
  while (old < value && !a.compare_exchange_weak(old, value)) {}
  return old;
}
template <class T>
T atomicMin(T* address, T value) {
  std::atomic_ref<T> a(*address);
  T old = a.load();
  while (value < old && !a.compare_exchange_weak(old, value)) {}
  return old;
}

// ---- the math library: CUDA declares these at global scope ----
using std::isfinite;
using std::isinf;
using std::isnan;

// ---- intrinsics ----
inline float __uint_as_float(unsigned u) { return std::bit_cast<float>(u); }
inline unsigned __float_as_uint(float f) { return std::bit_cast<unsigned>(f); }
inline float __int_as_float(int i) { return std::bit_cast<float>(i); }
inline int __float_as_int(float f) { return std::bit_cast<int>(f); }
inline double __longlong_as_double(long long v) { return std::bit_cast<double>(v); }
inline long long __double_as_longlong(double d) { return std::bit_cast<long long>(d); }
inline int __popc(unsigned v) { return std::popcount(v); }
inline int __popcll(unsigned long long v) { return std::popcount(v); }
inline int __clz(unsigned v) { return std::countl_zero(v); }
inline int __ffs(unsigned v) { return v == 0 ? 0 : std::countr_zero(v) + 1; }
template <class T>
T __ldg(const T* p) {
  return *p;
}
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
