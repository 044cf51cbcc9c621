// ember's CUDA matrix products against cuBLAS called directly, in one run:
// ember::mm (through ember's cuBLASLt wrapper, kernels/cuda/blas.h) and
// ember::linear with a bias (the bias epilogue) against cublasGemmEx on the
// same device tensors and stream, for float32, float16 and bfloat16 (float
// accumulation, no TF32), median of 15 timed with CUDA events. Prints
// TFLOP/s and the ratio; exits 0 without a device.
//   build/release/bench/cuda_gemm [n, default 4096]
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cuda_timing.h"
#include "ember/cuda.h"
#include "ember/ember.h"

namespace {

using ember::Tensor;
using ember_bench::median_device_ms;

cudaDataType_t cuda_type(ember::DType t) {
  if (t == ember::kFloat16) return CUDA_R_16F;
  if (t == ember::kBFloat16) return CUDA_R_16BF;
  return CUDA_R_32F;
}

}  // namespace

int main(int argc, char** argv) {
  if (!ember::cuda_is_available()) {
    std::printf("cuda_gemm: no CUDA device; nothing measured\n");
    return 0;
  }
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 4096;
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::printf("cuda_gemm: cublasCreate failed\n");
    return 1;
  }
  cublasSetStream(handle, static_cast<cudaStream_t>(ember::cuda::current_stream().handle()));
  const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  std::printf("%-10s %-22s %12s %12s %10s\n", "dtype", "op", "ember TF/s", "cuBLAS TF/s", "ratio");
  for (ember::DType t : {ember::kFloat32, ember::kFloat16, ember::kBFloat16}) {
    const auto opts = ember::TensorOptions(t).device(ember::Device::cuda());
    const Tensor a = ember::randn({n, n}, opts), b = ember::randn({n, n}, opts), bias = ember::randn({n}, opts);
    Tensor c = ember::empty({n, n}, opts);
    const float one = 1, zero = 0;
    // Row-major c = a b is column-major c^T = b^T a^T: cuBLAS gets b, then a.
    const double direct = median_device_ms([&] {
      cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n),
                   &one, b.data_ptr(), cuda_type(t), static_cast<int>(n), a.data_ptr(), cuda_type(t),
                   static_cast<int>(n), &zero, c.data_ptr(), cuda_type(t), static_cast<int>(n), CUBLAS_COMPUTE_32F,
                   CUBLAS_GEMM_DEFAULT);
    });
    const double mm_ms = median_device_ms([&] { (void)ember::mm(a, b); });
    const double linear_ms = median_device_ms([&] { (void)ember::linear(a, b, bias); });
    const std::string name(ember::dtype_name(t));
    std::printf("%-10s %-22s %12.1f %12.1f %9.3fx\n", name.c_str(), "mm", flops / mm_ms / 1e9, flops / direct / 1e9,
                direct / mm_ms);
    std::printf("%-10s %-22s %12.1f %12.1f %9.3fx\n", name.c_str(), "linear (bias epilogue)", flops / linear_ms / 1e9,
                flops / direct / 1e9, direct / linear_ms);
  }
  cublasDestroy(handle);
  return 0;
}
