// The host half of the elementwise launcher (Note [CUDA elementwise launcher]
// in cuda_loops.h): kernel choice, parameters, grid size, splitting. It is
// the same for every functor, so it is compiled once, here, by the host
// compiler; each functor only adds its two kernels and the host code that launches them.
#include <algorithm>
#include <cstdlib>

#include "kernels/cuda/cuda_loops.h"
#include "kernels/cuda/cuda_utils.h"

namespace ember::cuda {
namespace {

// Elements per launch of the strided kernel: its 32-bit index limit, or, in
// the emulation build, EMBER_CUDA_EMULATE_PIECE_LIMIT when set, so tests can
// drive the splitting of huge iterations with small tensors.
int64_t strided_piece_limit() {
#ifdef EMBER_CUDA_EMULATE
  static const int64_t limit = [] {
    const char* v = std::getenv("EMBER_CUDA_EMULATE_PIECE_LIMIT");
    const long long n = v ? std::atoll(v) : 0;
    return n > 0 && n < kMaxStridedElements ? static_cast<int64_t>(n) : kMaxStridedElements;
  }();
  return limit;
#else
  return kMaxStridedElements;
#endif
}

bool aligned(const void* p, DType t) {
  return reinterpret_cast<uintptr_t>(p) % (element_size(t) * kVec) == 0;
}

}  // namespace

unsigned elementwise_grid(int64_t numel, int per_thread, int multiprocessors) {
  const int64_t max_blocks = static_cast<int64_t>(multiprocessors) * 16;
  const int64_t threads = (numel + per_thread - 1) / per_thread;
  const int64_t blocks = (threads + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, max_blocks)));
}

void run_elementwise(const ElementwiseArgs& a, const void* functor, const ElementwiseKernels& kernels, const char* op) {
  if (a.numel == 0) return;
  InputMode modes[kMaxInputs];
  if (contiguous_modes(a, modes)) {
    ContiguousParams p{};
    p.out = a.data[0];
    p.n = a.numel;
    bool vectorize = aligned(a.data[0], a.dtypes[0]);
    for (int i = 0; i < a.num_inputs; ++i) {
      p.in[i] = a.data[i + 1];
      p.value[i] = a.value[i + 1];
      p.mode[i] = modes[i];
      if (modes[i] == InputMode::Contiguous) vectorize = vectorize && aligned(a.data[i + 1], a.dtypes[i + 1]);
    }
    p.vectorize = vectorize;
    kernels.contiguous(functor, p,
                       elementwise_grid(a.numel, kernels.contiguous_per_thread, multiprocessor_count(a.device)), op);
    return;
  }
  for_each_strided_piece(a, [&](const ElementwiseArgs& piece) {
    StridedParams p{};
    p.ndim = piece.ndim;
    p.n = static_cast<uint32_t>(piece.numel);
    for (int d = 0; d < piece.ndim; ++d) p.sizes[d] = IntDivider(static_cast<uint32_t>(piece.sizes[d]));
    for (int o = 0; o < piece.num_operands(); ++o) {
      p.data[o] = piece.data[o];
      p.value[o] = piece.value[o];
      p.by_value[o] = piece.by_value[o];
      for (int d = 0; d < piece.ndim; ++d) p.strides[d][o] = piece.strides[o][d];
    }
    kernels.strided(functor, p, elementwise_grid(piece.numel, 1, multiprocessor_count(a.device)), op);
  }, strided_piece_limit());
}

}  // namespace ember::cuda
