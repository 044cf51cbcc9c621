// What the CPU GEMMs (gemm.cpp for f32/f64, gemm_bf16.cpp) share: their
// arguments, block sizes balanced over a dimension, the grid of C rectangles
// that the threads share (Note [GEMM blocking] in gemm.cpp), and the buffers
// panels are packed into. Included by those two files only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>

#include <unistd.h>

#include "ember/parallel.h"

namespace ember::cpu::gemm_detail {

// C = alpha * A B + beta * C, gemm.h's contract: operands of type In, C and
// the scalars of type Out (the same, or float for bf16 operands).
template <class In, class Out = In>
struct GemmArgs {
  int64_t m, n, k;
  Out alpha;
  const In* a;
  int64_t a_rs, a_cs;
  const In* b;
  int64_t b_rs, b_cs;
  Out beta;
  Out* c;
  int64_t c_rs, c_cs;
};

// The same product written for C^T: C^T (n, m) = B^T (n, k) * A^T (k, m).
template <class In, class Out>
GemmArgs<In, Out> transposed(const GemmArgs<In, Out>& g) {
  return {g.n, g.m, g.k, g.alpha, g.b, g.b_cs, g.b_rs, g.a, g.a_cs, g.a_rs, g.beta, g.c, g.c_cs, g.c_rs};
}

// C = beta * C (beta == 0: C = 0 without reading it), for k == 0 or alpha == 0.
template <class In, class Out>
void scale_c(const GemmArgs<In, Out>& g) {
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j) {
      Out& out = g.c[i * g.c_rs + j * g.c_cs];
      out = g.beta == 0 ? Out(0) : g.beta * out;
    }
  }
}

// A grow-only, 64-byte aligned buffer for packed panels, kept per thread.
template <class T>
class PackBuffer {
 public:
  PackBuffer() = default;
  PackBuffer(const PackBuffer&) = delete;
  PackBuffer& operator=(const PackBuffer&) = delete;
  ~PackBuffer() { release(); }

  T* get(int64_t count) {
    if (count > capacity_) {
      release();
      data_ = static_cast<T*>(::operator new(count * sizeof(T), std::align_val_t{64}));
      capacity_ = count;
    }
    return data_;
  }

 private:
  void release() {
    if (data_ != nullptr) ::operator delete(data_, std::align_val_t{64});
    data_ = nullptr;
    capacity_ = 0;
  }
  T* data_ = nullptr;
  int64_t capacity_ = 0;
};

// Data cache sizes of one core, read once from the OS (glibc's sysconf reads
// CPUID). Where it does not say, or says something implausible (virtual
// machines can), those of an AMD Zen 3 core.
struct CacheSizes {
  int64_t l1 = 32 * 1024, l2 = 512 * 1024;
};

inline const CacheSizes& cache_sizes() {
  static const CacheSizes sizes = [] {
    CacheSizes found;
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l1 >= 16 * 1024 && l1 <= 256 * 1024) found.l1 = l1;
    if (l2 >= 256 * 1024 && l2 <= 8 * 1024 * 1024) found.l2 = l2;
#endif
    return found;
  }();
  return sizes;
}

inline int64_t round_up(int64_t x, int64_t multiple) { return (x + multiple - 1) / multiple * multiple; }

// The step that cuts `total` into the fewest blocks of about max_step or less,
// of near-equal size (a multiple of `multiple`), so no block is a sliver that
// would waste the reuse of the others: 1024 rows with max 504 in steps of 12
// give 348 + 348 + 328, not 504 + 504 + 16.
inline int64_t balanced_step(int64_t total, int64_t max_step, int64_t multiple) {
  const int64_t blocks = (total + max_step - 1) / max_step;
  return round_up((total + blocks - 1) / blocks, multiple);
}

// How C is cut among threads: row_groups x col_groups rectangles.
struct TaskGrid {
  int64_t row_groups = 1, col_groups = 1;
};

// Cutting C's rows in r groups makes each group pack all of B (k*n); cutting
// its columns in c groups makes each pack all of A (m*k). Pick the r x c = threads
// grid that packs the least (ties cut columns, so the threads share B's
// packing, the larger cost in profiles on Zen 3), using as many threads as
// there are tiles.
inline TaskGrid choose_task_grid(int64_t m, int64_t n, int64_t row_tiles, int64_t col_tiles, int threads) {
  for (; threads > 1; --threads) {
    TaskGrid best;
    double best_cost = -1;
    for (int64_t rows = 1; rows <= threads; ++rows) {
      if (threads % rows != 0 || rows > row_tiles || threads / rows > col_tiles) continue;
      const double cost = static_cast<double>(rows) * n + static_cast<double>(threads / rows) * m;
      if (best_cost < 0 || cost < best_cost) {
        best = {rows, threads / rows};
        best_cost = cost;
      }
    }
    if (best_cost >= 0) return best;
  }
  return {};
}

// Cuts C (m, n), in tiles of (tile_rows, tile_cols), into the grid above for
// `threads` threads and runs block(row_begin, row_end, col_begin, col_end)
// for each rectangle, in parallel. Group r gets row tiles
// [r * row_tiles / row_groups, (r + 1) * row_tiles / row_groups); the same for columns.
template <class Block>
void run_task_grid(int64_t m, int64_t n, int64_t tile_rows, int64_t tile_cols, int threads, const Block& block) {
  const int64_t row_tiles = (m + tile_rows - 1) / tile_rows, col_tiles = (n + tile_cols - 1) / tile_cols;
  const TaskGrid grid = choose_task_grid(m, n, row_tiles, col_tiles, threads);
  parallel_for(0, grid.row_groups * grid.col_groups, 1, [&](int64_t begin, int64_t end) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t r = task / grid.col_groups, c = task % grid.col_groups;
      const int64_t row_begin = r * row_tiles / grid.row_groups * tile_rows;
      const int64_t row_end = std::min(m, (r + 1) * row_tiles / grid.row_groups * tile_rows);
      const int64_t col_begin = c * col_tiles / grid.col_groups * tile_cols;
      const int64_t col_end = std::min(n, (c + 1) * col_tiles / grid.col_groups * tile_cols);
      block(row_begin, row_end, col_begin, col_end);
    }
  });
}

}  // namespace ember::cpu::gemm_detail
