// Inner loops for elementwise CPU kernels, driven by TensorIterator.
//
// cpu_kernel(it, op) applies a scalar functor `out op(in...)` to every
// element. Its inner loop has three shapes, chosen per run of the innermost
// dim: all operands contiguous (a plain indexed loop the compiler
// vectorises), one input broadcast (stride 0: loaded once; e.g. where(c, x, 0)),
// or general strides. cpu_kernel_vec(it, op, vop) adds an explicit SIMD functor for the
// contiguous case (kernels/cpu/vec/vec.h), used for float32 math.
#pragma once

#include <tuple>
#include <utility>

#include "core/dtype_dispatch.h"
#include "core/tensor_iterator.h"
#include "kernels/cpu/vec/vec.h"

namespace ember::cpu {

template <class F> struct function_traits : function_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct function_traits<R (C::*)(A...) const> {
  using result = R;
  using args = std::tuple<A...>;
  static constexpr int arity = sizeof...(A);
};

namespace detail {

template <class Op, size_t... I>
inline void loop_contiguous(char** data, int64_t n, Op& op, std::index_sequence<I...>) {
  using traits = function_traits<Op>;
  using out_t = typename traits::result;
  out_t* __restrict out = reinterpret_cast<out_t*>(data[0]);
  std::tuple<const std::tuple_element_t<I, typename traits::args>* __restrict...> in{
      reinterpret_cast<const std::tuple_element_t<I, typename traits::args>*>(data[I + 1])...};
  for (int64_t i = 0; i < n; ++i) out[i] = op(std::get<I>(in)[i]...);
}

template <class Op, size_t... I>
inline void loop_strided(char** data, const int64_t* strides, int64_t n, Op& op, std::index_sequence<I...>) {
  using traits = function_traits<Op>;
  using out_t = typename traits::result;
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<out_t*>(data[0] + i * strides[0]) =
        op(*reinterpret_cast<const std::tuple_element_t<I, typename traits::args>*>(data[I + 1] + i * strides[I + 1])...);
  }
}

// Contiguous except input `B` which is a broadcast scalar.
template <size_t B, class Op, size_t... I>
inline void loop_one_scalar(char** data, int64_t n, Op& op, std::index_sequence<I...>) {
  using traits = function_traits<Op>;
  using out_t = typename traits::result;
  using b_t = std::tuple_element_t<B, typename traits::args>;
  const b_t b = *reinterpret_cast<const b_t*>(data[B + 1]);
  out_t* __restrict out = reinterpret_cast<out_t*>(data[0]);
  auto arg = [&]<size_t J>(int64_t i) {
    using t = std::tuple_element_t<J, typename traits::args>;
    if constexpr (J == B) return b;
    else return reinterpret_cast<const t*>(data[J + 1])[i];
  };
  for (int64_t i = 0; i < n; ++i) out[i] = op(arg.template operator()<I>(i)...);
}

// Whether the run is contiguous except input `B`, which is broadcast (stride 0).
template <size_t B, class Op>
inline bool only_input_broadcast(const int64_t* strides) {
  using traits = function_traits<Op>;
  if (strides[0] != sizeof(typename traits::result) || strides[B + 1] != 0) return false;
  bool ok = true;
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((ok = ok && (I == B || strides[I + 1] == sizeof(std::tuple_element_t<I, typename traits::args>))), ...);
  }(std::make_index_sequence<traits::arity>{});
  return ok;
}

// Runs loop_one_scalar<B> for the one broadcast input B, if the run has that shape.
template <class Op, size_t... I>
inline bool try_loop_one_scalar(char** data, const int64_t* strides, int64_t n, Op& op, std::index_sequence<I...> seq) {
  return ((only_input_broadcast<I, Op>(strides) && (loop_one_scalar<I>(data, n, op, seq), true)) || ...);
}

template <class Op>
inline bool is_contiguous_run(const int64_t* strides) {
  using traits = function_traits<Op>;
  if (strides[0] != sizeof(typename traits::result)) return false;
  bool ok = true;
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((ok = ok && strides[I + 1] == sizeof(std::tuple_element_t<I, typename traits::args>)), ...);
  }(std::make_index_sequence<traits::arity>{});
  return ok;
}

}  // namespace detail

// Applies `op` elementwise. The iterator's output is operand 0.
template <class Op>
void cpu_kernel(TensorIterator& it, Op op, int64_t grain = TensorIterator::kDefaultGrain) {
  using traits = function_traits<Op>;
  constexpr int arity = traits::arity;
  auto seq = std::make_index_sequence<arity>{};
  it.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        if (detail::is_contiguous_run<Op>(strides)) {
          detail::loop_contiguous(data, n, op, seq);
          return;
        }
        if constexpr (arity >= 2) {
          if (detail::try_loop_one_scalar(data, strides, n, op, seq)) return;
        }
        detail::loop_strided(data, strides, n, op, seq);
      },
      grain);
}

// Like cpu_kernel for a float32 op of one or two inputs, with `vop` (the same
// math on vec::VecF lanes) run on contiguous runs and on runs where the second
// input is a broadcast scalar; tails use masked partial loads, so every
// element of a contiguous run goes through vop. `op` handles strided runs.
template <class Op, class VOp>
void cpu_kernel_vec(TensorIterator& it, Op op, VOp vop, int64_t grain = TensorIterator::kDefaultGrain) {
  using traits = function_traits<Op>;
  constexpr int arity = traits::arity;
  static_assert(arity == 1 || arity == 2, "cpu_kernel_vec: one or two inputs");
  using V = vec::VecF;
  constexpr int64_t L = V::kLanes;
  constexpr int64_t F = sizeof(float);
  // Inputs are fetched 2 KiB ahead: with a long vop (gelu: ~40 cycles a
  // vector) the hardware prefetcher alone leaves gelu at 16M floats at half
  // the memory bandwidth; with this it runs at 80%.
  constexpr int64_t kPrefetchAhead = 512;
  auto seq = std::make_index_sequence<arity>{};
  it.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        float* out = reinterpret_cast<float*>(data[0]);
        const float* a = reinterpret_cast<const float*>(data[1]);
        if constexpr (arity == 1) {
          if (strides[0] == F && strides[1] == F) {
            int64_t i = 0;
            for (; i + L <= n; i += L) {
              __builtin_prefetch(a + i + kPrefetchAhead);
              vop(V::load(a + i)).store(out + i);
            }
            if (i < n) vop(V::load_partial(a + i, static_cast<int>(n - i))).store_partial(out + i, static_cast<int>(n - i));
            return;
          }
        } else {
          const float* b = reinterpret_cast<const float*>(data[2]);
          if (strides[0] == F && strides[1] == F && (strides[2] == F || strides[2] == 0)) {
            const bool b_scalar = strides[2] == 0;
            const V bs = V::broadcast(*b);
            int64_t i = 0;
            for (; i + L <= n; i += L) {
              __builtin_prefetch(a + i + kPrefetchAhead);
              if (!b_scalar) __builtin_prefetch(b + i + kPrefetchAhead);
              vop(V::load(a + i), b_scalar ? bs : V::load(b + i)).store(out + i);
            }
            if (i < n) {
              const int r = static_cast<int>(n - i);
              vop(V::load_partial(a + i, r), b_scalar ? bs : V::load_partial(b + i, r)).store_partial(out + i, r);
            }
            return;
          }
        }
        detail::loop_strided(data, strides, n, op, seq);
      },
      grain);
}

}  // namespace ember::cpu
