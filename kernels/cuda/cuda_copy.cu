// Copy and fill kernels on the device: same-dtype copies move bits (one
// functor per element size), dtype conversions read their source dtype at
// run time (one kernel pair per destination dtype, a uniform switch per
// element), except the float32 <-> float16/bfloat16 casts of mixed precision,
// which get typed, vectorised functors. Conversions follow the CPU copy_
// (kernels/cpu/elementwise/copy.cpp) bit for bit, except NaN payloads.
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/cuda_loops.cuh"

namespace ember::cuda {
namespace {

template <class U>
struct IdentityOp {
  __device__ U operator()(U a) const { return a; }
};

template <class U>
struct FillOp {
  U value;
  __device__ U operator()() const { return value; }
};

template <class To, class From>
struct ConvertOp {
  __device__ To operator()(From a) const { return convert<To>(a); }
};

// Any dtype -> To. Parameters as for the launcher's kernels with one input.
template <class To>
struct DynamicConvert {
  DType from;
  int64_t from_size;
};

// The source is always a device tensor (the host wrapper never passes a CPU scalar).
template <class To>
__global__ void __launch_bounds__(kThreads) convert_contiguous_kernel(DynamicConvert<To> f, ContiguousParams p) {
  To* out = reinterpret_cast<To*>(p.out);
  const int64_t step = p.mode[0] == InputMode::Contiguous ? f.from_size : 0;
  const char* in = p.in[0];
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += nthreads)
    out[i] = load_converted<To>(f.from, in + i * step);
}

template <class To>
__global__ void __launch_bounds__(kThreads) convert_strided_kernel(DynamicConvert<To> f, StridedParams p) {
  const uint32_t nthreads = gridDim.x * blockDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += nthreads) {
    int64_t out_offset = 0, in_offset = 0;
    uint32_t rest = i;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == p.ndim) break;
      const uint32_t q = p.sizes[d].div(rest);
      const int64_t coord = static_cast<int64_t>(rest - q * p.sizes[d].divisor);
      out_offset += coord * p.strides[d][0];
      in_offset += coord * p.strides[d][1];
      rest = q;
    }
    *reinterpret_cast<To*>(p.data[0] + out_offset) = load_converted<To>(f.from, p.data[1] + in_offset);
  }
}

template <class To>
void launch_convert_contiguous(const void* f, const ContiguousParams& p, unsigned grid, const char* op) {
  launch_kernel(op, "convert_contiguous_kernel", convert_contiguous_kernel<To>, grid, kThreads, 0, current_cuda_stream(),
                *static_cast<const DynamicConvert<To>*>(f), p);
}
template <class To>
void launch_convert_strided(const void* f, const StridedParams& p, unsigned grid, const char* op) {
  launch_kernel(op, "convert_strided_kernel", convert_strided_kernel<To>, grid, kThreads, 0, current_cuda_stream(),
                *static_cast<const DynamicConvert<To>*>(f), p);
}

template <class U>
void launch_by_size(const ElementwiseArgs& a, uint64_t bits, bool fill) {
  if (fill) launch_elementwise(a, FillOp<U>{static_cast<U>(bits)}, "fill_");
  else launch_elementwise(a, IdentityOp<U>{}, "copy_");
}

void move_bits(const ElementwiseArgs& a, uint64_t bits, bool fill) {
  switch (element_size(a.dtypes[0])) {
    case 1: launch_by_size<uint8_t>(a, bits, fill); break;
    case 2: launch_by_size<uint16_t>(a, bits, fill); break;
    case 4: launch_by_size<uint32_t>(a, bits, fill); break;
    default: launch_by_size<uint64_t>(a, bits, fill); break;
  }
}

}  // namespace

void launch_copy(const ElementwiseArgs& a) {
  EMBER_CHECK(!a.by_value[1], "copy_: the CUDA copy kernel needs its source on the device");
  const DType to = a.dtypes[0], from = a.dtypes[1];
  if (to == from) return move_bits(a, 0, false);
  if (from == DType::Float32 && to == DType::Float16) return launch_elementwise(a, ConvertOp<half_t, float>{}, "copy_");
  if (from == DType::Float32 && to == DType::BFloat16) return launch_elementwise(a, ConvertOp<bf16_t, float>{}, "copy_");
  if (from == DType::Float16 && to == DType::Float32) return launch_elementwise(a, ConvertOp<float, half_t>{}, "copy_");
  if (from == DType::BFloat16 && to == DType::Float32) return launch_elementwise(a, ConvertOp<float, bf16_t>{}, "copy_");
  dispatch_device_dtype(to, "copy_", [&]<class To>() {
    // One element per thread and pass: the grid is sized for that (not for kVec).
    static constexpr ElementwiseKernels kernels{&launch_convert_contiguous<To>, &launch_convert_strided<To>, 1};
    const DynamicConvert<To> f{from, static_cast<int64_t>(element_size(from))};
    run_elementwise(a, &f, kernels, "copy_");
  });
}

void launch_fill(const ElementwiseArgs& a, uint64_t bits) { move_bits(a, bits, true); }

}  // namespace ember::cuda
