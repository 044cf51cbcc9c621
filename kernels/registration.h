// One registration path: every kernel file exposes a register_* function,
// and register_all_kernels() (kernels/registration.cpp) calls them in turn.
#pragma once

namespace ember {

void register_all_kernels();

// CPU
void register_cpu_copy_kernels();
void register_cpu_binary_kernels();
void register_cpu_unary_kernels();
void register_cpu_view_kernels();
void register_cpu_reduce_kernels();
void register_cpu_matmul_kernels();
void register_cpu_shape_kernels();
void register_cpu_index_kernels();
void register_cpu_random_kernels();
void register_cpu_activation_kernels();
void register_cpu_attention_kernels();
void register_cpu_conv_kernels();
void register_cpu_indexing_kernels();
void register_cpu_loss_kernels();
void register_cpu_norm_kernels();
void register_cpu_optim_kernels();
void register_cpu_pooling_kernels();
#ifdef EMBER_WITH_CUDA
void register_cuda_kernels();
#endif

}  // namespace ember
