#include "kernels/registration.h"

namespace ember {

void register_all_kernels() {
  register_cpu_copy_kernels();
  register_cpu_binary_kernels();
  register_cpu_unary_kernels();
  register_cpu_view_kernels();
  register_cpu_shape_kernels();
  register_cpu_index_kernels();
  register_cpu_matmul_kernels();
  register_cpu_random_kernels();
  register_cpu_reduce_kernels();
  register_cpu_activation_kernels();
  register_cpu_attention_kernels();
  register_cpu_conv_kernels();
  register_cpu_indexing_kernels();
  register_cpu_loss_kernels();
  register_cpu_norm_kernels();
  register_cpu_optim_kernels();
  register_cpu_pooling_kernels();
#ifdef EMBER_WITH_CUDA
  register_cuda_kernels();
#endif
}

}  // namespace ember
