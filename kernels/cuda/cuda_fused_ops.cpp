// _fused_elementwise on CUDA: a fused group (core/fused_program.h) on a CUDA
// device.
//
// Note [Fused groups on CUDA]
// In the real CUDA build the program's CUDA C++ source (core/fused_cuda_source.h)
// is compiled with NVRTC to PTX for the device's architecture, loaded with
// the driver API (cuModuleLoadData) and launched with cuLaunchKernel on the
// current stream (cuda_fused_nvrtc.cpp): one kernel, one pass over memory.
// The compiled module is cached per program, dtype and device for the
// process. NVRTC and the driver library are loaded at run time (dlopen), so
// ember links neither; a machine without NVRTC gets an ember::Error naming
// the library when a fused node runs on its GPU.
//
// The emulation build has no NVRTC to execute and cannot run generated
// source: there a fused node runs its program as the unfused ops
// (fused::run_unfused), each one an emulated CUDA kernel. Its results are
// those of the unfused graph on the emulated device (what the cuda-emu tests
// compare with the CPU fused kernel); the generated source itself is checked
// by the NVRTC compile test (tests/test_jit_fused_cuda_source.cpp) and run by
// the `cuda` tests on a GPU.
#include "core/fused_program.h"
#include "core/op_decls_fused.h"
#include "core/tensor_util.h"
#include "kernels/cuda/cuda_fused.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

Tensor fused_elementwise_cuda(const TensorList& inputs, std::string_view expr) {
  const fused::FusedProgram p = fused::FusedProgram::parse(expr, inputs.size(), "_fused_elementwise");
  const std::vector<char> condition = p.condition_inputs();
  EMBER_CHECK(!inputs.empty() && inputs[0].defined() && inputs[0].dtype() != DType::Bool,
              "_fused_elementwise: the first input must hold the output's dtype");
  const DType dtype = inputs[0].dtype();
  EMBER_CHECK(dtype == DType::Float32 || dtype == DType::Float64, "_fused_elementwise: on CUDA it computes in float32 ",
              "or float64, got ", dtype);
  const Device device = inputs[0].device();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor& t = inputs[k];
    EMBER_CHECK(t.defined(), "_fused_elementwise: input i", k, " is undefined");
    const DType want = condition[k] ? DType::Bool : dtype;
    EMBER_CHECK(t.dtype() == want, "_fused_elementwise: input i", k, " is ", t.dtype(), ", expected ", want,
                condition[k] ? " (a where condition)" : " (the output's dtype)");
    EMBER_CHECK(t.device() == device, "_fused_elementwise: input i", k, " is on ", t.device(), ", expected ", device);
  }
  DeviceGuard guard(device.index);
#ifdef EMBER_CUDA_EMULATE
  return fused::run_unfused(p, std::vector<Tensor>(inputs.begin(), inputs.end()));
#else
  return launch_fused_program(p, inputs, dtype, device);
#endif
}

}  // namespace

void register_cuda_fused_kernels() {
  op::_fused_elementwise.impl(DispatchKey::CUDA, {DType::Float32, DType::Float64}, &fused_elementwise_cuda,
                              "cuda::_fused_elementwise");
}

}  // namespace ember::cuda
