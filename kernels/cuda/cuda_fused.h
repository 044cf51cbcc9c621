// The real CUDA build's fused kernels: a fused program compiled with NVRTC
// and launched through the driver API (Note [Fused groups on CUDA] in
// cuda_fused_ops.cpp; cuda_fused_nvrtc.cpp, which the emulation build leaves
// out).
#pragma once

#include "core/fused_program.h"

namespace ember::cuda {

// Runs `program` on `inputs` (checked by the caller: `dtype` float32 or
// float64, where conditions bool, all on `device`, which is current) and
// returns the output. The kernel is compiled once per program, dtype and
// device.
Tensor launch_fused_program(const fused::FusedProgram& program, const TensorList& inputs, DType dtype, Device device);

}  // namespace ember::cuda
