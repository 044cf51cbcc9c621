// Every registration function in ember, in one list. Each one attaches one
// family's kernels, derivative formulas or a dispatch layer to the op objects
// of core/op_decls*.h; wiring/wire.cpp calls them all, once, at load time.
//
// Adding a kernel family, a formula family or a backend: define its
// register_* function next to the code it registers, declare it here, call
// it from wiring/wire.cpp. Nothing else registers anything.
#pragma once

namespace ember {

// ---- CPU kernels (kernels/cpu/<family>/, and kernels/view_kernels.cpp) ----
void register_cpu_copy_kernels();               // elementwise/copy.cpp
void register_cpu_binary_kernels();             // elementwise/binary.cpp
void register_cpu_unary_kernels();              // elementwise/unary.cpp
void register_cpu_view_kernels();               // kernels/view_kernels.cpp
void register_cpu_shape_kernels();              // shape/shape.cpp: cat, stack, ...
void register_cpu_sort_kernels();               // sort/sort.cpp
void register_cpu_unique_kernels();             // sort/unique.cpp
void register_cpu_searchsorted_kernels();       // sort/searchsorted.cpp
void register_cpu_advanced_index_kernels();     // index/advanced_index.cpp: index, index_put_, nonzero
void register_cpu_gather_scatter_kernels();         // index/gather_scatter.cpp
void register_cpu_flip_roll_repeat_kernels();   // shape/flip_roll_repeat.cpp
void register_cpu_masked_select_kernels();      // index/masked_select.cpp
void register_cpu_matmul_kernels();             // linalg/matmul.cpp
void register_cpu_linalg_decomposition_kernels();  // linalg/decompositions.cpp: solve, inv, det, qr, svd, eigh, ...
void register_cpu_random_kernels();             // random/random.cpp
void register_cpu_sampling_kernels();           // random/sampling.cpp: bernoulli_, multinomial
void register_cpu_reduce_kernels();             // reduce/reduce.cpp
void register_cpu_index_reduce_kernels();       // reduce/reduce_index.cpp: argmax, max.dim, ...
void register_cpu_scan_kernels();               // reduce/reduce_scan.cpp: cumsum, cumprod
void register_cpu_activation_kernels();         // elementwise/activation.cpp
void register_cpu_attention_kernels();          // attention/attention.cpp
void register_cpu_conv_kernels();               // conv/conv.cpp
void register_cpu_fold_kernels();               // conv/fold.cpp
void register_cpu_loss_kernels();               // loss/loss.cpp
void register_cpu_mse_loss_kernels();           // loss/mse_loss.cpp
void register_cpu_embedding_kernels();          // index/embedding.cpp
void register_cpu_dropout_kernels();            // random/dropout.cpp
void register_cpu_norm_kernels();               // norm/norm.cpp
void register_cpu_softmax_kernels();            // norm/softmax.cpp
void register_cpu_optim_kernels();              // optim/optim_updates.cpp
void register_cpu_pooling_kernels();            // pool/pooling.cpp
void register_cpu_adaptive_pooling_kernels();   // pool/adaptive_pooling.cpp
void register_cpu_pooling3d_kernels();          // pool/pooling3d.cpp
void register_cpu_pad_kernels();                // shape/pad.cpp
void register_cpu_upsample_kernels();           // pool/upsample.cpp
void register_cpu_lstm_kernels();               // rnn/lstm.cpp
void register_cpu_fused_kernels();              // fused/fused_elementwise.cpp: jit's fused groups

}  // namespace ember

#ifdef EMBER_WITH_CUDA
namespace ember::cuda {

// ---- CUDA (kernels/cuda/) ----
void register_cuda_allocator();                 // cuda_allocator_registration.cpp (only with a device)
void register_cuda_copy_kernels();              // cuda_copy_ops.cpp
void register_cuda_elementwise_kernels();       // cuda_elementwise_ops.cpp
void register_cuda_reduce_kernels();            // cuda_reduce_ops.cpp
void register_cuda_random_kernels();            // cuda_random_ops.cpp
void register_cuda_fused_kernels();             // cuda_fused_ops.cpp
void register_cuda_matmul_kernels();            // cuda_matmul_ops.cpp (blas.h)

}  // namespace ember::cuda
#endif

namespace ember::autograd {

// ---- derivative formulas (autograd/formulas_<family>.cpp) ----
void register_elementwise_formulas();
void register_reduction_formulas();
void register_view_formulas();
void register_advanced_index_formulas();
void register_linalg_formulas();
void register_linalg_decomposition_formulas();
void register_shape_formulas();
void register_copy_formulas();
void register_activation_formulas();
void register_attention_formulas();
void register_conv_formulas();
void register_indexing_formulas();
void register_loss_formulas();
void register_norm_formulas();
void register_pooling_formulas();
void register_rnn_formulas();
// ---- the Autograd layer (autograd/autograd_kernel.cpp): after every formula ----
void install_autograd();

}  // namespace ember::autograd

namespace ember::amp {

// ---- the Autocast layer (amp/autocast.cpp) ----
void install_autocast();

}  // namespace ember::amp

namespace ember::jit {

// ---- the Tracer layer (jit/tracer.cpp) ----
void install_tracer();

}  // namespace ember::jit

namespace ember::profiler {

// ---- the Profiler layer (profiler/op_events.cpp) ----
void install_profiler();

}  // namespace ember::profiler
