// The plain reference implementations beside ember's tuned kernels, by op:
// short, obviously correct code that the fast kernels are tested and
// benchmarked against (as kernels/cpu/linalg/gemm_reference.cpp is for the
// packed GEMM). `ember inspect ops` shows this list in its "reference"
// column; a new reference adds its row here, next to its own file.
#pragma once

#include <vector>

#include "ember/dtype.h"
#include "ember/tensor_impl.h"

namespace ember {

struct ReferenceKernel {
  const char* op;                       // the dispatcher's op name
  DispatchKey backend;                  // CPU or CUDA
  std::vector<DType> dtypes;  // the dtypes the reference covers
  const char* function;       // the reference's name
  const char* file;           // where it lives
};

const std::vector<ReferenceKernel>& reference_kernels();

}  // namespace ember
