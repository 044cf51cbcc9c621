// The reference GEMM on the device (Note [GEMM on CUDA] in blas.h): one
// thread per element of C, its k products summed in order in the accumulator
// type, then beta * C, the bias and the activation, rounded once. Short and
// obviously correct rather than fast: the emulation build runs every product
// through it, and on a GPU it is what cuBLASLt is checked against.
#include <algorithm>

#include "kernels/cuda/blas_backends.h"
#include "kernels/cuda/cuda_loops.cuh"

namespace ember::cuda::blas {
namespace {

__device__ __forceinline__ float acc_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double acc_tanh(double x) { return tanh(x); }

template <class Acc>
__device__ __forceinline__ Acc apply_activation(Epilogue e, Acc x) {
  switch (e) {
    case Epilogue::Relu:
    case Epilogue::BiasRelu: return x > Acc(0) ? x : Acc(0);
    case Epilogue::GeluTanh:
    case Epilogue::BiasGeluTanh: {
      const Acc u = static_cast<Acc>(0.79788456080286535588) * (x + static_cast<Acc>(0.044715) * x * x * x);
      return static_cast<Acc>(0.5) * x * (Acc(1) + acc_tanh(u));
    }
    default: return x;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) gemm_reference_kernel(Gemm g) {
  using Acc = opmath_t<T>;
  const T* a = static_cast<const T*>(g.a);
  const T* b = static_cast<const T*>(g.b);
  T* c = static_cast<T*>(g.c);
  const T* bias = static_cast<const T*>(g.bias);
  const Acc alpha = static_cast<Acc>(g.alpha), beta = static_cast<Acc>(g.beta);
  const bool ta = g.trans_a == Transpose::Yes, tb = g.trans_b == Transpose::Yes;
  const int64_t total = g.batch * g.m * g.n;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total; t += nthreads) {
    const int64_t i = t % g.m, j = (t / g.m) % g.n, batch = t / (g.m * g.n);
    const T* ab = a + batch * g.stride_a;
    const T* bb = b + batch * g.stride_b;
    Acc sum = 0;
    for (int64_t p = 0; p < g.k; ++p) {
      const Acc x = up(ab[ta ? p + i * g.lda : i + p * g.lda]);
      const Acc y = up(bb[tb ? j + p * g.ldb : p + j * g.ldb]);
      sum += x * y;
    }
    T& out = c[batch * g.stride_c + i + j * g.ldc];
    Acc r = alpha * sum;
    if (g.beta != 0) r += beta * up(out);
    if (has_bias(g.epilogue)) r += up(bias[i]);
    out = down<T>(apply_activation(g.epilogue, r));
  }
}

}  // namespace

void launch_gemm_reference(const char* op, const Gemm& g, int device) {
  const int64_t total = g.batch * g.m * g.n;
  const int64_t max_blocks = static_cast<int64_t>(multiprocessor_count(device)) * 16;
  const auto blocks = static_cast<unsigned>(std::min((total + kThreads - 1) / kThreads, max_blocks));
  dispatch_device_floating(g.dtype, op, [&]<class T>() {
    launch_kernel(op, "gemm_reference_kernel", gemm_reference_kernel<T>, blocks, kThreads, 0, current_cuda_stream(), g);
  });
}

}  // namespace ember::cuda::blas
