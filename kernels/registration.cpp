#include "kernels/registration.h"

namespace ember {

void register_all_kernels() {
  register_cpu_copy_kernels();
  register_cpu_binary_kernels();
  register_cpu_view_kernels();
  register_cpu_random_kernels();
#ifdef EMBER_WITH_CUDA
  register_cuda_kernels();
#endif
}

}  // namespace ember
