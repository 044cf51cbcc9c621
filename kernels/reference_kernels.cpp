// The list of reference kernels (reference_kernels.h), and each row's `run`:
// it unboxes the op's arguments (Note [Calling a reference kernel]) and calls
// the reference in its family's file.
#include "kernels/reference_kernels.h"

#include "core/fused_program.h"
#include "core/op_decls_norm.h"
#include "kernels/cpu/attention/attention_reference.h"
#include "kernels/cpu/conv/conv_reference.h"
#include "kernels/cpu/elementwise/elementwise_reference.h"
#include "kernels/cpu/linalg/matmul_reference.h"
#include "kernels/cpu/norm/norm_reference.h"
#include "kernels/cpu/pool/pool_reference.h"
#include "kernels/cpu/reduce/reduce_reference.h"
#include "kernels/reference_values.h"

namespace ember {
namespace {

using namespace reference;  // the argument readers

// ---- GEMM ----
std::vector<Tensor> run_mm(const Stack& s) {
  check_arity(s, 2, "mm");
  return {cpu::mm_reference(tensor_arg(s, 0, "mm"), tensor_arg(s, 1, "mm"))};
}
std::vector<Tensor> run_addmm(const Stack& s) {
  check_arity(s, 5, "addmm");
  return {cpu::addmm_reference(tensor_arg(s, 0, "addmm"), tensor_arg(s, 1, "addmm"), tensor_arg(s, 2, "addmm"),
                               number_arg(s, 3, "addmm"), number_arg(s, 4, "addmm"))};
}
std::vector<Tensor> run_bmm(const Stack& s) {
  check_arity(s, 2, "bmm");
  return {cpu::bmm_reference(tensor_arg(s, 0, "bmm"), tensor_arg(s, 1, "bmm"))};
}

// ---- fused elementwise groups ----
std::vector<Tensor> run_fused_elementwise(const Stack& s) {
  const char* op = "_fused_elementwise";
  check_arity(s, 2, op);
  const TensorList& inputs = tensor_list_arg(s, 0, op);
  for (const Tensor& t : inputs) {
    EMBER_CHECK(t.defined() && !t.is_cuda(), op, ": the reference runs on defined CPU tensors");
  }
  const fused::FusedProgram program = fused::FusedProgram::parse(str_arg(s, 1, op), inputs.size(), op);
  return {fused::run_unfused(program, inputs).contiguous()};
}

// ---- elementwise ----
ReferenceRun run_unary(const char* op) {
  return [op](const Stack& s) -> std::vector<Tensor> {
    check_arity(s, 1, op);
    return {cpu::unary_reference(op, tensor_arg(s, 0, op))};
  };
}
// add, sub: (self, other, alpha); the others: (self, other).
ReferenceRun run_binary(const char* op) {
  return [op](const Stack& s) -> std::vector<Tensor> {
    const bool has_alpha = std::string_view(op) == "add" || std::string_view(op) == "sub";
    check_arity(s, has_alpha ? 3 : 2, op);
    return {
        cpu::binary_reference(op, tensor_arg(s, 0, op), tensor_arg(s, 1, op), has_alpha ? number_arg(s, 2, op) : 1.0)};
  };
}
std::vector<Tensor> run_gelu(const Stack& s) {
  check_arity(s, 2, "gelu");
  return {cpu::gelu_reference(tensor_arg(s, 0, "gelu"), str_arg(s, 1, "gelu"))};
}
std::vector<Tensor> run_leaky_relu(const Stack& s) {
  check_arity(s, 2, "leaky_relu");
  return {cpu::leaky_relu_reference(tensor_arg(s, 0, "leaky_relu"), number_arg(s, 1, "leaky_relu"))};
}
std::vector<Tensor> run_elu(const Stack& s) {
  check_arity(s, 2, "elu");
  return {cpu::elu_reference(tensor_arg(s, 0, "elu"), number_arg(s, 1, "elu"))};
}
std::vector<Tensor> run_softplus(const Stack& s) {
  check_arity(s, 3, "softplus");
  return {cpu::softplus_reference(tensor_arg(s, 0, "softplus"), number_arg(s, 1, "softplus"),
                                  number_arg(s, 2, "softplus"))};
}

// ---- reductions ----
// sum, prod: (self, dim[], keepdim, dtype?); mean, amax, amin: (self, dim[], keepdim).
ReferenceRun run_reduce(const char* op) {
  return [op](const Stack& s) -> std::vector<Tensor> {
    const bool has_dtype = std::string_view(op) == "sum" || std::string_view(op) == "prod";
    check_arity(s, has_dtype ? 4 : 3, op);
    return {cpu::reduce_reference(op, tensor_arg(s, 0, op), ints_arg(s, 1, op), bool_arg(s, 2, op),
                                  has_dtype ? optional_dtype_arg(s, 3, op) : std::nullopt)};
  };
}
ReferenceRun run_extreme_dim(const char* op) {  // max_dim, min_dim: (self, dim, keepdim)
  return [op](const Stack& s) {
    check_arity(s, 3, op);
    return cpu::extreme_dim_reference(op, tensor_arg(s, 0, op), int_arg(s, 1, op), bool_arg(s, 2, op));
  };
}
ReferenceRun run_arg_extreme(const char* op) {  // argmax, argmin: (self, dim?, keepdim)
  return [op](const Stack& s) -> std::vector<Tensor> {
    check_arity(s, 3, op);
    return {cpu::arg_extreme_reference(op, tensor_arg(s, 0, op), optional_int_arg(s, 1, op), bool_arg(s, 2, op))};
  };
}

// ---- norms and softmax ----
ReferenceRun run_softmax(const char* op) {  // (self, dim, dtype?)
  return [op](const Stack& s) -> std::vector<Tensor> {
    check_arity(s, 3, op);
    const Tensor& x = tensor_arg(s, 0, op);
    return {cpu::softmax_reference(op, x, int_arg(s, 1, op), optional_dtype_arg(s, 2, op).value_or(x.dtype()))};
  };
}
std::vector<Tensor> run_layer_norm(const Stack& s) {
  const char* op = "layer_norm";
  check_arity(s, 5, op);
  return cpu::layer_norm_reference(tensor_arg(s, 0, op), ints_arg(s, 1, op), optional_tensor_arg(s, 2, op),
                                   optional_tensor_arg(s, 3, op), number_arg(s, 4, op));
}
std::vector<Tensor> run_rms_norm(const Stack& s) {
  const char* op = "rms_norm";
  check_arity(s, 4, op);
  const Tensor& x = tensor_arg(s, 0, op);
  const std::optional<double> eps = optional_number_arg(s, 3, op);
  return cpu::rms_norm_reference(x, ints_arg(s, 1, op), optional_tensor_arg(s, 2, op),
                                 rms_norm_eps(eps ? std::optional<Scalar>(*eps) : std::nullopt, x.dtype()));
}
std::vector<Tensor> run_group_norm(const Stack& s) {
  const char* op = "group_norm";
  check_arity(s, 5, op);
  return cpu::group_norm_reference(tensor_arg(s, 0, op), int_arg(s, 1, op), optional_tensor_arg(s, 2, op),
                                   optional_tensor_arg(s, 3, op), number_arg(s, 4, op));
}
std::vector<Tensor> run_batch_norm(const Stack& s) {
  const char* op = "batch_norm";  // momentum (argument 6) only moves the running statistics
  check_arity(s, 8, op);
  return cpu::batch_norm_reference(tensor_arg(s, 0, op), optional_tensor_arg(s, 1, op), optional_tensor_arg(s, 2, op),
                                   optional_tensor_arg(s, 3, op), optional_tensor_arg(s, 4, op), bool_arg(s, 5, op),
                                   number_arg(s, 7, op));
}

// ---- pooling ----
// max_pool2d and max_pool2d_with_indices: (self, kernel_size, stride, padding, dilation, ceil_mode).
ReferenceRun run_max_pool2d(const char* op, bool with_indices) {
  return [op, with_indices](const Stack& s) {
    check_arity(s, 6, op);
    const cpu::Pool2dParams p{ints_arg(s, 1, op), ints_arg(s, 2, op), ints_arg(s, 3, op), ints_arg(s, 4, op),
                              bool_arg(s, 5, op)};
    std::vector<Tensor> out = cpu::max_pool2d_reference(tensor_arg(s, 0, op), p);
    if (!with_indices) out.pop_back();
    return out;
  };
}
std::vector<Tensor> run_avg_pool2d(const Stack& s) {
  // (self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
  const char* op = "avg_pool2d";
  check_arity(s, 7, op);
  const cpu::Pool2dParams p{ints_arg(s, 1, op), ints_arg(s, 2, op), ints_arg(s, 3, op), {1}, bool_arg(s, 4, op)};
  return {cpu::avg_pool2d_reference(tensor_arg(s, 0, op), p, bool_arg(s, 5, op), optional_int_arg(s, 6, op))};
}
std::vector<Tensor> run_adaptive_avg_pool2d(const Stack& s) {
  const char* op = "adaptive_avg_pool2d";
  check_arity(s, 2, op);
  return {cpu::adaptive_avg_pool2d_reference(tensor_arg(s, 0, op), ints_arg(s, 1, op))};
}

// ---- convolution and attention ----
std::vector<Tensor> run_convolution(const Stack& s) {
  // (input, weight, bias?, stride, padding, dilation, transposed, output_padding, groups)
  const char* op = "convolution";
  check_arity(s, 9, op);
  const cpu::ConvParams p{ints_arg(s, 3, op), ints_arg(s, 4, op), ints_arg(s, 5, op),
                          bool_arg(s, 6, op), ints_arg(s, 7, op), int_arg(s, 8, op)};
  return {cpu::convolution_reference(tensor_arg(s, 0, op), tensor_arg(s, 1, op), optional_tensor_arg(s, 2, op), p)};
}
std::vector<Tensor> run_flash_attention(const Stack& s) {
  // (query, key, value, attn_mask?, is_causal, scale?)
  const char* op = "flash_attention";
  check_arity(s, 6, op);
  return cpu::attention_reference(tensor_arg(s, 0, op), tensor_arg(s, 1, op), tensor_arg(s, 2, op),
                                  optional_tensor_arg(s, 3, op), bool_arg(s, 4, op), optional_number_arg(s, 5, op));
}

std::vector<ReferenceKernel> build_list() {
  constexpr const char* kCpuGemm = "kernels/cpu/linalg/gemm_reference.cpp";
  constexpr const char* kCudaGemm = "kernels/cuda/blas_reference.cu";
  constexpr const char* kElementwise = "kernels/cpu/elementwise/elementwise_reference.cpp";
  constexpr const char* kReduce = "kernels/cpu/reduce/reduce_reference.cpp";
  constexpr const char* kNorm = "kernels/cpu/norm/norm_reference.cpp";
  constexpr const char* kPool = "kernels/cpu/pool/pool_reference.cpp";
  const std::vector<DType> f32_f64 = {DType::Float32, DType::Float64};
  const std::vector<DType> cuda_gemm = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};
  constexpr DispatchKey kCPU = DispatchKey::CPU;
  // mm, addmm and bmm are one strided batched GEMM on each backend (Note [One
  // routine behind mm, addmm and bmm], Note [GEMM on CUDA]).
  std::vector<ReferenceKernel> list = {
      {"mm", kCPU, f32_f64, "cpu::gemm_reference_f32/f64", kCpuGemm, run_mm},
      {"addmm", kCPU, f32_f64, "cpu::gemm_reference_f32/f64", kCpuGemm, run_addmm},
      {"bmm", kCPU, f32_f64, "cpu::gemm_reference_f32/f64", kCpuGemm, run_bmm},
      {"mm", DispatchKey::CUDA, cuda_gemm, "cuda::blas::gemm_reference", kCudaGemm},
      {"addmm", DispatchKey::CUDA, cuda_gemm, "cuda::blas::gemm_reference", kCudaGemm},
      {"bmm", DispatchKey::CUDA, cuda_gemm, "cuda::blas::gemm_reference", kCudaGemm},
      // A fused group's reference is its unfused ops, called one by one.
      {"_fused_elementwise", kCPU, f32_f64, "fused::run_unfused", "core/fused_program.cpp", run_fused_elementwise},
      {"convolution", kCPU, f32_f64, "cpu::convolution_reference", "kernels/cpu/conv/conv_reference.cpp",
       run_convolution},
      {"max_pool2d", kCPU, f32_f64, "cpu::max_pool2d_reference", kPool, run_max_pool2d("max_pool2d", false)},
      {"max_pool2d_with_indices", kCPU, f32_f64, "cpu::max_pool2d_reference", kPool,
       run_max_pool2d("max_pool2d_with_indices", true)},
      {"avg_pool2d", kCPU, f32_f64, "cpu::avg_pool2d_reference", kPool, run_avg_pool2d},
      {"adaptive_avg_pool2d", kCPU, f32_f64, "cpu::adaptive_avg_pool2d_reference", kPool, run_adaptive_avg_pool2d},
      {"layer_norm", kCPU, f32_f64, "cpu::layer_norm_reference", kNorm, run_layer_norm},
      {"rms_norm", kCPU, f32_f64, "cpu::rms_norm_reference", kNorm, run_rms_norm},
      {"group_norm", kCPU, f32_f64, "cpu::group_norm_reference", kNorm, run_group_norm},
      {"batch_norm", kCPU, f32_f64, "cpu::batch_norm_reference", kNorm, run_batch_norm},
      {"softmax", kCPU, f32_f64, "cpu::softmax_reference", "kernels/cpu/norm/softmax_reference.cpp",
       run_softmax("softmax")},
      {"log_softmax", kCPU, f32_f64, "cpu::softmax_reference", "kernels/cpu/norm/softmax_reference.cpp",
       run_softmax("log_softmax")},
      {"flash_attention", kCPU, f32_f64, "cpu::attention_reference", "kernels/cpu/attention/attention_reference.cpp",
       run_flash_attention},
      {"max_dim", kCPU, f32_f64, "cpu::extreme_dim_reference", kReduce, run_extreme_dim("max_dim")},
      {"min_dim", kCPU, f32_f64, "cpu::extreme_dim_reference", kReduce, run_extreme_dim("min_dim")},
      {"argmax", kCPU, f32_f64, "cpu::arg_extreme_reference", kReduce, run_arg_extreme("argmax")},
      {"argmin", kCPU, f32_f64, "cpu::arg_extreme_reference", kReduce, run_arg_extreme("argmin")},
      {"gelu", kCPU, f32_f64, "cpu::gelu_reference", kElementwise, run_gelu},
      {"leaky_relu", kCPU, f32_f64, "cpu::leaky_relu_reference", kElementwise, run_leaky_relu},
      {"elu", kCPU, f32_f64, "cpu::elu_reference", kElementwise, run_elu},
      {"softplus", kCPU, f32_f64, "cpu::softplus_reference", kElementwise, run_softplus},
  };
  for (const char* op : {"sum", "mean", "prod", "amax", "amin"})
    list.push_back({op, kCPU, f32_f64, "cpu::reduce_reference", kReduce, run_reduce(op)});
  for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum"})
    list.push_back({op, kCPU, f32_f64, "cpu::binary_reference", kElementwise, run_binary(op)});
  for (const char* op : cpu::unary_reference_ops())
    list.push_back({op, kCPU, f32_f64, "cpu::unary_reference", kElementwise, run_unary(op)});
  return list;
}

}  // namespace

const std::vector<ReferenceKernel>& reference_kernels() {
  static const std::vector<ReferenceKernel> list = build_list();
  return list;
}

const ReferenceKernel* find_cpu_reference(std::string_view op) {
  for (const ReferenceKernel& r : reference_kernels()) {
    if (r.backend == DispatchKey::CPU && r.run && op == r.op) return &r;
  }
  return nullptr;
}

}  // namespace ember
