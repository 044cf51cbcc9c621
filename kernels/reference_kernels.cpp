// The list of reference kernels (reference_kernels.h).
#include "kernels/reference_kernels.h"

namespace ember {

const std::vector<ReferenceKernel>& reference_kernels() {
  constexpr const char* kCpuGemm = "kernels/cpu/linalg/gemm_reference.cpp";
  constexpr const char* kCudaGemm = "kernels/cuda/blas_reference.cu";
  const std::vector<DType> cpu_gemm = {DType::Float32, DType::Float64};
  const std::vector<DType> cuda_gemm = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  // mm, addmm and bmm are one strided batched GEMM on each backend (Note [One
  // routine behind mm, addmm and bmm], Note [GEMM on CUDA]).
  static const std::vector<ReferenceKernel> list = {
      {"mm", DispatchKey::CPU, cpu_gemm, "cpu::gemm_reference_f32/f64", kCpuGemm},
      {"addmm", DispatchKey::CPU, cpu_gemm, "cpu::gemm_reference_f32/f64", kCpuGemm},
      {"bmm", DispatchKey::CPU, cpu_gemm, "cpu::gemm_reference_f32/f64", kCpuGemm},
      {"mm", DispatchKey::CUDA, cuda_gemm, "cuda::blas::gemm_reference", kCudaGemm},
      {"addmm", DispatchKey::CUDA, cuda_gemm, "cuda::blas::gemm_reference", kCudaGemm},
      {"bmm", DispatchKey::CUDA, cuda_gemm, "cuda::blas::gemm_reference", kCudaGemm},
      // A fused group's reference is its unfused ops, called one by one.
      {"_fused_elementwise", DispatchKey::CPU, {DType::Float32, DType::Float64}, "fused::run_unfused",
       "core/fused_program.cpp"},
  };
  return list;
}

}  // namespace ember
