// The device side of the elementwise launcher (Note [CUDA elementwise
// launcher] in cuda_loops.h) and the device value types. Included only by .cu
// files.
//
//   struct AddOp { float alpha; __device__ float operator()(float a, float b) const { return a + alpha * b; } };
//   launch_elementwise(args, AddOp{2.f}, "add");
//
// A functor's operator() takes the inputs' storage types and returns the
// output's; one instantiation of launch_elementwise compiles exactly two
// kernels (contiguous and strided) for it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/float_to_int.h"
#include "ember/dtype.h"
#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/ptx.cuh"

namespace ember::cuda {

// ---- device value types ----
// float16 and bfloat16 as stored (bits); arithmetic happens in float
// (opmath_t), rounded once on store. The conversions give the same bits as
// ember's CPU Half and BFloat16 (round to nearest even; NaN -> quiet NaN).
struct alignas(2) half_t {
  uint16_t bits;
};
struct alignas(2) bf16_t {
  uint16_t bits;
};

template <class T> struct OpMath { using type = T; };
template <> struct OpMath<half_t> { using type = float; };
template <> struct OpMath<bf16_t> { using type = float; };
template <class T> using opmath_t = typename OpMath<T>::type;
template <class T> inline constexpr bool is_reduced_float_v = std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>;
template <class T> inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

__device__ __forceinline__ float to_float(half_t h) { return ptx::cvt_f32_f16(h.bits); }
__device__ __forceinline__ float to_float(bf16_t b) { return __uint_as_float(static_cast<uint32_t>(b.bits) << 16); }

__device__ __forceinline__ half_t to_half(float f) {
  half_t h{ptx::cvt_rn_f16_f32(f)};
  if (f != f) h.bits = static_cast<uint16_t>(((__float_as_uint(f) >> 16) & 0x8000u) | 0x7e00u);  // CPU's quiet NaN
  return h;
}
__device__ __forceinline__ bf16_t to_bf16(float f) {
  const uint32_t u = __float_as_uint(f);
  bf16_t b;
  if ((u & 0x7fffffffu) > 0x7f800000u) b.bits = static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  else b.bits = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  return b;
}

// T -> its opmath type, and back with one rounding.
template <class T>
__device__ __forceinline__ opmath_t<T> up(T v) {
  if constexpr (is_reduced_float_v<T>) return to_float(v);
  else return v;
}
template <class T>
__device__ __forceinline__ T down(opmath_t<T> v) {
  if constexpr (std::is_same_v<T, half_t>) return to_half(v);
  else if constexpr (std::is_same_v<T, bf16_t>) return to_bf16(v);
  else return v;
}

// The dtype conversion of ember's CPU copy_ (kernels/cpu/elementwise/copy.cpp), on the device.
// Floating to integer follows Note [Float to integer conversion] (core/float_to_int.h).
template <class To, class From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (std::is_same_v<To, bool>) return static_cast<double>(up(v)) != 0.0;
  else if constexpr (is_reduced_float_v<To>) return down<To>(static_cast<float>(up(v)));
  else if constexpr (std::is_integral_v<To> && is_floating_v<From>) return float_to_int<To>(up(v));
  else return static_cast<To>(up(v));
}

// The element at `p`, of dtype `from` (known only at run time), converted to To.
template <class To>
__device__ __forceinline__ To load_converted(DType from, const char* p) {
  switch (from) {
    case DType::Float32: return convert<To>(*reinterpret_cast<const float*>(p));
    case DType::Float64: return convert<To>(*reinterpret_cast<const double*>(p));
    case DType::Float16: return convert<To>(*reinterpret_cast<const half_t*>(p));
    case DType::BFloat16: return convert<To>(*reinterpret_cast<const bf16_t*>(p));
    case DType::Int32: return convert<To>(*reinterpret_cast<const int32_t*>(p));
    case DType::Int64: return convert<To>(*reinterpret_cast<const int64_t*>(p));
    case DType::UInt8: return convert<To>(*reinterpret_cast<const uint8_t*>(p));
    default: return convert<To>(*reinterpret_cast<const bool*>(p));
  }
}

// Storage type of each DType on the device, for dispatch_device_dtype.
template <class F>
decltype(auto) dispatch_device_dtype(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Float16: return f.template operator()<half_t>();
    case DType::BFloat16: return f.template operator()<bf16_t>();
    case DType::Int32: return f.template operator()<int32_t>();
    case DType::Int64: return f.template operator()<int64_t>();
    case DType::UInt8: return f.template operator()<uint8_t>();
    case DType::Bool: return f.template operator()<bool>();
  }
  EMBER_FAIL(op, ": invalid dtype ", static_cast<int>(t));
}
template <class F>
decltype(auto) dispatch_device_floating(DType t, const char* op, F&& f) {
  switch (t) {
    case DType::Float32: return f.template operator()<float>();
    case DType::Float64: return f.template operator()<double>();
    case DType::Float16: return f.template operator()<half_t>();
    case DType::BFloat16: return f.template operator()<bf16_t>();
    default: EMBER_FAIL(op, ": expected a floating-point dtype, got ", t);
  }
}

// ---- functor introspection ----
template <class F> struct functor_traits : functor_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct functor_traits<R (C::*)(A...) const> {
  using result = R;
  using args = std::tuple<A...>;
  static constexpr int arity = sizeof...(A);
};
template <class F, size_t I> using arg_t = std::tuple_element_t<I, typename functor_traits<F>::args>;
template <class F> using result_t = typename functor_traits<F>::result;
template <class F> inline constexpr int arity_v = functor_traits<F>::arity;

// ---- kernels ----
template <class T>
struct alignas(sizeof(T) * kVec) Vec {
  T v[kVec];
};

template <class T>
__device__ __forceinline__ T value_from_bits(uint64_t bits) {
  T v;
  memcpy(&v, &bits, sizeof(T));
  return v;
}

// The kVec elements [base, base + kVec) of input j; `full` when all exist and
// the vector access is aligned. Missing elements repeat element `base` (they
// are never stored; a zero there would make the functor divide by zero).
template <class T>
__device__ __forceinline__ Vec<T> load_group(const ContiguousParams& p, int j, int64_t base, bool full) {
  Vec<T> r;
  if (p.mode[j] == InputMode::Contiguous) {
    const T* in = reinterpret_cast<const T*>(p.in[j]);
    if (full) return *reinterpret_cast<const Vec<T>*>(in + base);
#pragma unroll
    for (int k = 0; k < kVec; ++k) r.v[k] = in[base + k < p.n ? base + k : base];
    return r;
  }
  const T x = p.mode[j] == InputMode::Broadcast ? *reinterpret_cast<const T*>(p.in[j]) : value_from_bits<T>(p.value[j]);
#pragma unroll
  for (int k = 0; k < kVec; ++k) r.v[k] = x;
  return r;
}

// Written out, not a loop: nvcc may keep a loop around a large functor (a
// switch over many ops) rolled, which would put the Vec arrays in local memory.
template <class F, class Out, class... In>
__device__ __forceinline__ void apply_vec(const F& f, Out& out, const In&... in) {
  static_assert(kVec == 4, "apply_vec is written for kVec == 4");
  out.v[0] = f(in.v[0]...);
  out.v[1] = f(in.v[1]...);
  out.v[2] = f(in.v[2]...);
  out.v[3] = f(in.v[3]...);
}

// out[i] = f(in_0[i], ...) for i in [0, n): a grid-stride loop over groups of
// kVec elements; f is inlined kVec times (once per element of a group).
template <class F, size_t... I>
__device__ __forceinline__ void contiguous_body(const F& f, const ContiguousParams& p, std::index_sequence<I...>) {
  using out_t = result_t<F>;
  out_t* out = reinterpret_cast<out_t*>(p.out);
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t base = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * kVec; base < p.n;
       base += nthreads * kVec) {
    const bool full = p.vectorize && base + kVec <= p.n;
    Vec<out_t> o;
    apply_vec(f, o, load_group<arg_t<F, I>>(p, static_cast<int>(I), base, full)...);
    if (full) {
      *reinterpret_cast<Vec<out_t>*>(out + base) = o;
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k)
        if (base + k < p.n) out[base + k] = o.v[k];
    }
  }
}

template <class F>
__global__ void __launch_bounds__(kThreads) contiguous_kernel(F f, ContiguousParams p) {
  contiguous_body(f, p, std::make_index_sequence<arity_v<F>>{});
}

template <class T>
__device__ __forceinline__ T load_strided(const StridedParams& p, int op, int64_t offset) {
  if (p.by_value[op]) return value_from_bits<T>(p.value[op]);
  return *reinterpret_cast<const T*>(p.data[op] + offset);
}

template <class F, size_t... I>
__device__ __forceinline__ void strided_body(const F& f, const StridedParams& p, std::index_sequence<I...>) {
  constexpr int kOps = arity_v<F> + 1;
  using out_t = result_t<F>;
  const uint32_t nthreads = gridDim.x * blockDim.x;
  // i + nthreads < 2^32 because both are below 2^31: no wrap-around.
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += nthreads) {
    int64_t offset[kOps];
#pragma unroll
    for (int o = 0; o < kOps; ++o) offset[o] = 0;
    uint32_t rest = i;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == p.ndim) break;
      const uint32_t q = p.sizes[d].div(rest);
      const int64_t coord = static_cast<int64_t>(rest - q * p.sizes[d].divisor);
#pragma unroll
      for (int o = 0; o < kOps; ++o) offset[o] += coord * p.strides[d][o];
      rest = q;
    }
    *reinterpret_cast<out_t*>(p.data[0] + offset[0]) =
        f(load_strided<arg_t<F, I>>(p, static_cast<int>(I) + 1, offset[I + 1])...);
  }
}

template <class F>
__global__ void __launch_bounds__(kThreads) strided_kernel(F f, StridedParams p) {
  strided_body(f, p, std::make_index_sequence<arity_v<F>>{});
}

template <class F>
void launch_contiguous(const void* f, const ContiguousParams& p, unsigned grid, const char* op) {
  launch_kernel(op, "contiguous_kernel", contiguous_kernel<F>, grid, kThreads, 0, current_cuda_stream(),
                *static_cast<const F*>(f), p);
}
template <class F>
void launch_strided(const void* f, const StridedParams& p, unsigned grid, const char* op) {
  launch_kernel(op, "strided_kernel", strided_kernel<F>, grid, kThreads, 0, current_cuda_stream(), *static_cast<const F*>(f),
                p);
}

// Runs f over `a` (Note [CUDA elementwise launcher]). The caller has checked
// that the operand dtypes are f's argument and result types.
template <class F>
void launch_elementwise(const ElementwiseArgs& a, const F& f, const char* op) {
  static_assert(arity_v<F> <= kMaxInputs, "too many inputs for the elementwise launcher");
  static constexpr ElementwiseKernels kernels{&launch_contiguous<F>, &launch_strided<F>, kVec};
  run_elementwise(a, &f, kernels, op);
}

}  // namespace ember::cuda
