// How an elementwise CUDA kernel sees its work: the host builds an
// ElementwiseArgs from a TensorIterator (shape, byte strides, pointers,
// dtypes) and the launcher in cuda_loops.cuh turns it into one of two grid-
// stride kernels. This header has no CUDA types, so tests check its index
// arithmetic on the CPU.
//
// Note [CUDA elementwise launcher]
// TensorIterator (core/tensor_iterator.h) does the device-agnostic work once
// on the host: broadcasting, type promotion, coalescing dims. The launcher
// then picks:
//  - the contiguous kernel when the iteration is one dim and the output and
//    every input are contiguous or a single broadcast value: a flat index,
//    4 elements per thread with aligned vector loads/stores when every
//    pointer allows it (float4 for float32);
//  - the strided kernel otherwise: each thread splits its flat index into
//    per-dim coordinates with precomputed 32-bit magic-number divisions
//    (IntDivider; no 64-bit division on the GPU) and adds coordinate * byte
//    stride per operand. It takes up to kMaxDims dims and 2^31 - 1 elements
//    per launch; for_each_strided_piece splits bigger iterations into
//    pieces on the host (the dims above kMaxDims are looped over, too-big
//    pieces are halved along their outermost dim).
//
// Note [CPU scalars in CUDA kernels]
// A CPU 0-d operand (a wrapped Scalar as in `x * 2`, or a 0-d CPU tensor)
// never goes to the device: its value is read on the host, converted to the
// operand's dtype and passed to the kernel by value (ElementwiseArgs::value).
// That saves an allocation and a host-to-device copy per op, and the value
// sits in the kernel's parameter space, which every thread reads for free.
#pragma once

#include <cstdint>
#include <cstring>

#include "ember/dtype.h"

#if defined(__CUDACC__)
#define EMBER_CUDA_HD __host__ __device__
#else
#define EMBER_CUDA_HD
#endif

namespace ember::cuda {

inline constexpr int kMaxOperands = 5;    // 1 output + up to 4 inputs (TensorIterator::kMaxOperands)
inline constexpr int kMaxIterDims = 16;   // TensorIterator's limit after coalescing
inline constexpr int kMaxDims = 6;        // dims one strided launch handles
inline constexpr int64_t kMaxStridedElements = (int64_t{1} << 31) - 1;

// n / divisor and n % divisor for 0 <= n < 2^31, 1 <= divisor < 2^31, as
// (mulhi(n, magic) + n) >> shift (Granlund & Montgomery, "Division by
// invariant integers using multiplication", 1994): shift = ceil(log2 d),
// magic = floor(2^32 * (2^shift - d) / d) + 1. The sum cannot overflow since
// mulhi(n, magic) <= n < 2^31.
struct IntDivider {
  uint32_t divisor = 1;
  uint32_t magic = 1;
  uint32_t shift = 0;

  IntDivider() = default;
  explicit IntDivider(uint32_t d) : divisor(d) {
    while ((uint64_t{1} << shift) < d) ++shift;
    magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }
  EMBER_CUDA_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(n, magic);
#else
    const uint32_t t = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
    return (t + n) >> shift;
  }
};

// One elementwise launch, as built from a TensorIterator (innermost dim first).
struct ElementwiseArgs {
  int num_inputs = 0;  // operand 0 is the output; operands 1..num_inputs are the inputs
  int ndim = 0;
  int64_t numel = 0;
  int device = 0;
  int64_t sizes[kMaxIterDims] = {};
  int64_t strides[kMaxOperands][kMaxIterDims] = {};  // in bytes; 0 along broadcast dims
  char* data[kMaxOperands] = {};
  DType dtypes[kMaxOperands] = {};
  bool by_value[kMaxOperands] = {};  // Note [CPU scalars in CUDA kernels]
  uint64_t value[kMaxOperands] = {};  // the value's bytes in dtypes[i] (little-endian, low bytes used)

  int num_operands() const { return num_inputs + 1; }
};

// Calls fn(piece) for pieces of `a` that each have ndim <= kMaxDims and
// numel <= max_elements, covering `a` exactly once.
template <class Fn>
void for_each_strided_piece(const ElementwiseArgs& a, Fn&& fn, int64_t max_elements = kMaxStridedElements) {
  if (a.numel == 0) return;
  ElementwiseArgs p = a;
  while (p.ndim > 1 && p.sizes[p.ndim - 1] == 1) --p.ndim;  // a halved dim may have become 1
  const int outer = p.ndim - 1;
  if (p.ndim > kMaxDims) {  // loop over the outermost dim on the host
    ElementwiseArgs sub = p;
    sub.ndim = outer;
    sub.numel = p.numel / p.sizes[outer];
    for (int64_t i = 0; i < p.sizes[outer]; ++i) {
      for (int o = 0; o < p.num_operands(); ++o) sub.data[o] = p.data[o] + i * p.strides[o][outer];
      for_each_strided_piece(sub, fn, max_elements);
    }
    return;
  }
  if (p.numel <= max_elements) {
    fn(p);
    return;
  }
  const int64_t half = p.sizes[outer] / 2;
  ElementwiseArgs lo = p, hi = p;
  lo.sizes[outer] = half;
  hi.sizes[outer] = p.sizes[outer] - half;
  lo.numel = p.numel / p.sizes[outer] * half;
  hi.numel = p.numel - lo.numel;
  for (int o = 0; o < p.num_operands(); ++o) hi.data[o] = p.data[o] + half * p.strides[o][outer];
  for_each_strided_piece(lo, fn, max_elements);
  for_each_strided_piece(hi, fn, max_elements);
}

// How the contiguous kernel reads an input (Note [CUDA elementwise launcher]).
enum class InputMode : uint8_t { Contiguous, Broadcast, ByValue };

// True when `a` can run on the contiguous kernel; then fills modes[i] for input i.
inline bool contiguous_modes(const ElementwiseArgs& a, InputMode* modes) {
  if (a.ndim != 1) return false;
  const bool single = a.numel == 1;  // any stride reaches element 0
  if (!single && a.strides[0][0] != static_cast<int64_t>(element_size(a.dtypes[0]))) return false;
  for (int i = 1; i <= a.num_inputs; ++i) {
    const bool contiguous = single || a.strides[i][0] == static_cast<int64_t>(element_size(a.dtypes[i]));
    if (a.by_value[i]) modes[i - 1] = InputMode::ByValue;
    else if (contiguous) modes[i - 1] = InputMode::Contiguous;
    else if (a.strides[i][0] == 0) modes[i - 1] = InputMode::Broadcast;
    else return false;
  }
  return true;
}

inline constexpr int kMaxInputs = kMaxOperands - 1;
inline constexpr int kThreads = 256;  // threads per block of the elementwise kernels
inline constexpr int kVec = 4;        // elements per thread and iteration in the contiguous kernel

// Kernel parameters (passed by value). Only the first arity (+1) entries are used.
struct ContiguousParams {
  char* out;
  const char* in[kMaxInputs];
  uint64_t value[kMaxInputs];
  InputMode mode[kMaxInputs];
  int64_t n;
  bool vectorize;  // every contiguous pointer is aligned to kVec elements
};

struct StridedParams {
  char* data[kMaxOperands];
  int64_t strides[kMaxDims][kMaxOperands];  // bytes, [dim][operand]
  IntDivider sizes[kMaxDims];
  uint64_t value[kMaxOperands];
  bool by_value[kMaxOperands];
  int ndim;
  uint32_t n;
};

// The two kernels compiled for one functor, launched with `grid` blocks of
// kThreads (and checked, naming `op`). The contiguous kernel handles
// `contiguous_per_thread` elements per thread and pass, the strided one 1.
struct ElementwiseKernels {
  void (*contiguous)(const void* functor, const ContiguousParams& p, unsigned grid, const char* op);
  void (*strided)(const void* functor, const StridedParams& p, unsigned grid, const char* op);
  int contiguous_per_thread;
};

// Blocks for a grid-stride loop over `numel` elements taken `per_thread` at a
// time: enough to fill `multiprocessors` several times over, no more.
unsigned elementwise_grid(int64_t numel, int per_thread, int multiprocessors);

// Picks the kernel for `a`, builds its parameters and launches it (once, or
// once per piece), checking each launch. Compiled once for all functors.
void run_elementwise(const ElementwiseArgs& a, const void* functor, const ElementwiseKernels& kernels, const char* op);

}  // namespace ember::cuda
