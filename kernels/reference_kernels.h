// The plain reference implementations beside ember's tuned kernels, by op:
// short, obviously correct code that the fast kernels are tested and
// benchmarked against (as kernels/cpu/linalg/gemm_reference.cpp is for the
// packed GEMM). `ember inspect ops` shows this list in its "reference"
// column; a new reference adds its row here, next to its own file.
//
// Note [Calling a reference kernel]
// A row's `run` takes the op's boxed arguments exactly as
// Dispatcher::call_boxed receives them (every argument, in schema order, as
// a typed call boxes them) and returns the op's outputs, contiguous, on the
// CPU, in the dtype the op returns. So a caller that can call the op boxed
// (`ember bench`, the tests) can call its reference on the same Stack and
// compare. It raises an ember::Error naming the op for arguments it cannot
// take (a dtype outside `dtypes`, a CUDA tensor). `run` is empty for a
// reference that runs only on its device (the CUDA rows: the emulation
// build and the CUDA tests reach those through cuda::blas).
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "core/ivalue.h"
#include "ember/dtype.h"
#include "ember/tensor_impl.h"

namespace ember {

using ReferenceRun = std::function<std::vector<Tensor>(const Stack& args)>;

struct ReferenceKernel {
  const char* op;             // the dispatcher's op name
  DispatchKey backend;        // CPU or CUDA
  std::vector<DType> dtypes;  // the dtypes the reference covers
  const char* function;       // the reference's name
  const char* file;           // where it lives
  ReferenceRun run{};         // Note [Calling a reference kernel]; empty for the CUDA rows
};

const std::vector<ReferenceKernel>& reference_kernels();
// The CPU row of `op` that has a `run`, or null.
const ReferenceKernel* find_cpu_reference(std::string_view op);

}  // namespace ember
