// The composition root: the one place that wires backends and layers into
// the dispatcher. It runs once, while libember loads, after the op objects of
// core/op_decls.cpp exist (Note [Op objects are constructed first]).
//
// Order matters in two places: every formula family registers before
// install_autograd() resolves the in-place ops' formulas, and backends come
// before the layers above them only for readability (a layer's boxed kernel
// looks kernels up at call time).
#include "wiring/registrations.h"

namespace ember {
namespace {

void register_cpu_backend() {
  register_cpu_copy_kernels();
  register_cpu_binary_kernels();
  register_cpu_unary_kernels();
  register_cpu_view_kernels();
  register_cpu_shape_kernels();
  register_cpu_sort_kernels();
  register_cpu_unique_kernels();
  register_cpu_searchsorted_kernels();
  register_cpu_advanced_index_kernels();
  register_cpu_gather_scatter_kernels();
  register_cpu_flip_roll_repeat_kernels();
  register_cpu_masked_select_kernels();
  register_cpu_matmul_kernels();
  register_cpu_linalg_decomposition_kernels();
  register_cpu_random_kernels();
  register_cpu_sampling_kernels();
  register_cpu_reduce_kernels();
  register_cpu_index_reduce_kernels();
  register_cpu_scan_kernels();
  register_cpu_activation_kernels();
  register_cpu_attention_kernels();
  register_cpu_conv_kernels();
  register_cpu_fold_kernels();
  register_cpu_loss_kernels();
  register_cpu_mse_loss_kernels();
  register_cpu_embedding_kernels();
  register_cpu_dropout_kernels();
  register_cpu_norm_kernels();
  register_cpu_softmax_kernels();
  register_cpu_optim_kernels();
  register_cpu_pooling_kernels();
  register_cpu_adaptive_pooling_kernels();
  register_cpu_pooling3d_kernels();
  register_cpu_pad_kernels();
  register_cpu_upsample_kernels();
  register_cpu_lstm_kernels();
  register_cpu_fused_kernels();
}

#ifdef EMBER_WITH_CUDA
void register_cuda_backend() {
  cuda::register_cuda_allocator();
  cuda::register_cuda_copy_kernels();
  cuda::register_cuda_elementwise_kernels();
  cuda::register_cuda_reduce_kernels();
  cuda::register_cuda_matmul_kernels();
  cuda::register_cuda_random_kernels();
  cuda::register_cuda_fused_kernels();
}
#endif

void install_autograd_layer() {
  autograd::register_elementwise_formulas();
  autograd::register_reduction_formulas();
  autograd::register_view_formulas();
  autograd::register_advanced_index_formulas();
  autograd::register_linalg_formulas();
  autograd::register_linalg_decomposition_formulas();
  autograd::register_shape_formulas();
  autograd::register_copy_formulas();
  autograd::register_activation_formulas();
  autograd::register_attention_formulas();
  autograd::register_conv_formulas();
  autograd::register_indexing_formulas();
  autograd::register_loss_formulas();
  autograd::register_norm_formulas();
  autograd::register_pooling_formulas();
  autograd::register_rnn_formulas();
  autograd::install_autograd();
}

const bool wired = [] {
  register_cpu_backend();
#ifdef EMBER_WITH_CUDA
  register_cuda_backend();
#endif
  install_autograd_layer();
  amp::install_autocast();
  jit::install_tracer();
  profiler::install_profiler();
  return true;
}();

}  // namespace
}  // namespace ember
