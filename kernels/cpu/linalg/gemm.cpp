// The fast CPU GEMM (contract in gemm.h).
//
// Note [GEMM blocking]
// A GEMM does 2*m*n*k flops on m*k + k*n + m*n numbers, so it can run at the
// FMA peak only if each number, once in a register or near cache, is used
// many times. The loops are cut in blocks sized for each level of memory (the
// BLIS design, with its two inner loops swapped):
//
//   for jc in n, step NC:                      C columns
//     for pc in k, step KC:                    depth
//       pack B(pc:pc+kc, jc:jc+nc)             -> NR-wide panels (kc x NR); the block stays in L2
//       for ic in m, step MC:
//         pack A(ic:ic+mc, pc:pc+kc)           -> MR-tall panels (kc x MR)
//         for ir in mc, step MR:               one A panel stays in L1 ...
//           for jr in nc, step NR:             ... while the B panels stream past from L2
//             micro-kernel: C(MR x NR) (+)= A panel * B panel, in registers
//
// The innermost loop walks along C's rows: the tiles it updates lie side by
// side in the same MR rows, a pattern the hardware prefetcher follows. BLIS's
// order (a B panel in L1, A panels streaming from L2) walks down a column of
// C tiles instead, whose rows are a row stride apart: they share a few cache
// sets, and at n = 2048 that order ran 10% slower on a Sapphire Rapids core.
//
// Block sizes follow the core's caches (block_limits below):
// - KC: one B panel (kc x NR) is 2/3 of L1; the A panel (kc x MR) stays in L1
//   beside the B panel streaming through.
//   Measured at 2048^3 on Sapphire Rapids (48 KiB L1): KC 128 to 384 are within
//   3% of each other, 256 (this rule) the fastest.
// - NC: the packed B block (kc x nc) fills half of L2. A block as large as L2
//   cost 13% there (NC 2048 against 1024 or 1536, 2 MiB L2).
// - MC: only bounds the packed A block, to half of L2; each A panel is read
//   once per block (504 and 1008 rows ran alike).
//
// Packing copies each block once into the exact order the micro-kernel reads
// it, so the kernel sees unit strides whatever the caller's strides were, and
// pads ragged edges with zeros so the kernel always computes a full tile.
// Edge tiles and C with a non-unit column stride go through a small tile
// buffer; a C with unit row stride (column-major) is handled as the
// transposed problem C^T = B^T A^T, which computes every element the same way.
//
// Threads: C is cut into a grid of rectangles, one per thread, each running
// the loops above with its own packing buffers. Every element of C is still
// the sum over the same KC blocks in the same order, whichever thread computes
// it, so the result is bitwise the same for any thread count (K is never split).
#include "kernels/cpu/linalg/gemm.h"

#include <algorithm>
#include <array>
#include <utility>

#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm_driver.h"
#include "kernels/cpu/linalg/gemm_microkernel.h"
#include "kernels/cpu/linalg/gemm_pack.h"

namespace ember::cpu {
namespace {

using gemm_detail::balanced_step;
using gemm_detail::GemmArgs;
using gemm_detail::PackBuffer;
using gemm_detail::Tile;

// The largest cache blocks (KC, MC, NC of Note [GEMM blocking]) for element type T on this CPU.
struct BlockLimits {
  int64_t depth, rows, cols;
};

template <class T>
const BlockLimits& block_limits() {
  static const BlockLimits limits = [] {
    using B = Tile<T>;
    const gemm_detail::CacheSizes& caches = gemm_detail::cache_sizes();
    const int64_t depth = caches.l1 * 2 / 3 / (B::kCols * sizeof(T)) / 8 * 8;
    const int64_t half_l2 = caches.l2 / 2 / (depth * sizeof(T));
    return BlockLimits{depth, std::max<int64_t>(B::kRows, half_l2 / B::kRows * B::kRows),
                       std::max<int64_t>(B::kCols, half_l2 / B::kCols * B::kCols)};
  }();
  return limits;
}

template <class T>
struct ThreadScratch {
  PackBuffer<T> a, b;
};

template <class T>
ThreadScratch<T>& thread_scratch() {
  thread_local ThreadScratch<T> scratch;
  return scratch;
}

// The micro-kernel for C tiles of `rows` rows, 1 to MR (index rows - 1): the
// last row tile of an m that is not a multiple of MR computes only its rows
// (m = 64 with MR = 12 would otherwise compute 72). Each C element goes
// through the same operations whichever kernel computes it.
template <class T>
using Microkernel = void (*)(int64_t, const T*, const T*, T, T, T*, int64_t);

template <class T, size_t... kRowsMinusOne>
constexpr auto make_kernels(std::index_sequence<kRowsMinusOne...>) {
  using B = Tile<T>;
  return std::array<Microkernel<T>, sizeof...(kRowsMinusOne)>{
      &gemm_detail::microkernel<typename B::Simd, static_cast<int>(kRowsMinusOne) + 1, B::kVectors, B::kRows>...};
}

template <class T>
constexpr auto kKernelsByRows = make_kernels<T>(std::make_index_sequence<Tile<T>::kRows>());

// C tile (rows, cols), at most (MR, NR), at c with strides c_rs, c_cs:
//   C = alpha * A_panel * B_panel + beta * C
// Tiles of full width with unit column stride go straight to the micro-kernel
// for their row count; the rest through a full-size tile buffer, so every
// element is computed the same way.
template <class T>
void run_tile(int64_t kc, const T* a_panel, const T* b_panel, T alpha, T beta, T* c, int64_t c_rs, int64_t c_cs,
              int rows, int cols) {
  using B = Tile<T>;
  const Microkernel<T> kernel = kKernelsByRows<T>[rows - 1];
  if (cols == B::kCols && c_cs == 1) {
    kernel(kc, a_panel, b_panel, alpha, beta, c, c_rs);
    return;
  }
  alignas(64) T tile[B::kRows * B::kCols];
  if (beta != 0) {
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) tile[i * B::kCols + j] = c[i * c_rs + j * c_cs];
    }
  }
  kernel(kc, a_panel, b_panel, alpha, beta, tile, B::kCols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) c[i * c_rs + j * c_cs] = tile[i * B::kCols + j];
  }
}

// The loops of Note [GEMM blocking] over the C block rows [row_begin, row_end) x
// columns [col_begin, col_end).
template <class T>
void gemm_block(const GemmArgs<T>& g, int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end) {
  using B = Tile<T>;
  const BlockLimits& limits = block_limits<T>();
  // Depth blocks depend on k (and the CPU) alone: they fix the order in which each C element is summed.
  const int64_t depth_step = balanced_step(g.k, limits.depth, 8);
  const int64_t row_step = balanced_step(row_end - row_begin, limits.rows, B::kRows);
  const int64_t col_step = balanced_step(col_end - col_begin, limits.cols, B::kCols);
  ThreadScratch<T>& scratch = thread_scratch<T>();
  T* packed_b = scratch.b.get(col_step * depth_step);
  T* packed_a = scratch.a.get(row_step * depth_step);

  for (int64_t jc = col_begin; jc < col_end; jc += col_step) {
    const int64_t nc = std::min(col_step, col_end - jc);
    for (int64_t pc = 0; pc < g.k; pc += depth_step) {
      const int64_t kc = std::min(depth_step, g.k - pc);
      const T beta = pc == 0 ? g.beta : T(1);  // later depth blocks add to what the first wrote
      gemm_detail::pack_panels<B::kCols>(g.b + pc * g.b_rs + jc * g.b_cs, g.b_rs, g.b_cs, kc, nc, packed_b);
      for (int64_t ic = row_begin; ic < row_end; ic += row_step) {
        const int64_t mc = std::min(row_step, row_end - ic);
        gemm_detail::pack_panels<B::kRows>(g.a + ic * g.a_rs + pc * g.a_cs, g.a_cs, g.a_rs, kc, mc, packed_a);
        for (int64_t ir = 0; ir < mc; ir += B::kRows) {
          const int rows = static_cast<int>(std::min<int64_t>(B::kRows, mc - ir));
          for (int64_t jr = 0; jr < nc; jr += B::kCols) {
            const int cols = static_cast<int>(std::min<int64_t>(B::kCols, nc - jr));
            T* c = g.c + (ic + ir) * g.c_rs + (jc + jr) * g.c_cs;
            run_tile(kc, packed_a + ir * kc, packed_b + jr * kc, g.alpha, beta, c, g.c_rs, g.c_cs, rows, cols);
          }
        }
      }
    }
  }
}

// Problems below this many multiply-adds run on the calling thread: waking
// the pool would cost more than it saves.
constexpr double kMinParallelWork = 64.0 * 64 * 64;

template <class T>
void gemm(GemmArgs<T> g) {
  using B = Tile<T>;
  if (g.m <= 0 || g.n <= 0) return;
  if (g.k <= 0 || g.alpha == 0) {
    gemm_detail::scale_c(g);
    return;
  }
  if (g.c_cs != 1 && g.c_rs == 1) g = gemm_detail::transposed(g);

  const double work = static_cast<double>(g.m) * g.n * g.k;
  // Inside another parallel loop the pool runs our tasks inline, so one task packs least.
  const int threads = work < kMinParallelWork || in_parallel_region() ? 1 : get_num_threads();
  gemm_detail::run_task_grid(g.m, g.n, B::kRows, B::kCols, threads,
                             [&](int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end) {
                               gemm_block(g, row_begin, row_end, col_begin, col_end);
                             });
}

}  // namespace

void gemm_f32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_rs, int64_t a_cs,
              const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t c_rs, int64_t c_cs) {
  gemm<float>({m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs});
}

void gemm_f64(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t a_rs, int64_t a_cs,
              const double* b, int64_t b_rs, int64_t b_cs, double beta, double* c, int64_t c_rs, int64_t c_cs) {
  gemm<double>({m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs});
}

}  // namespace ember::cpu
