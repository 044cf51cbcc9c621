// The bf16 GEMM (contract in gemm_bf16.h).
//
// Note [bf16 GEMM]
// The loops are those of Note [GEMM blocking] in gemm.cpp: C cut in a grid of
// rectangles, one per thread; in each, B blocks packed into 32-column panels,
// A blocks into kRows-row panels, and a micro-kernel that computes one
// (kRows, 32) tile of C in float32 from one panel of each. What differs is
// what a panel holds: bf16, grouped the way the hardware multiplies it, and
// the depth padded with zeros to a multiple of 32 (kChunk):
//   A panel, chunk c (32 values of k), row i:  a[(c * kRows + i) * 32 + e] = A(i, 32c + e)
//   B panel, pair row r (2 values of k):       b[(r * 32 + j) * 2 + e]     = B(2r + e, j)
// Both bf16 instructions take B as "pairs of k interleaved" (the VNNI layout):
// a 32-bit lane holds B(2r, j) and B(2r+1, j), and adds both products.
//  - AMX (tdpbf16ps): a tile is 16 rows of 64 bytes. The (32, 32) C tile is
//    2 x 2 float tiles; per chunk, two A tiles are 16 rows of an A panel and
//    two B tiles are 16 pair rows of a B panel (64 of its 128-byte rows).
//  - AVX-512 BF16 (vdpbf16ps): per pair row, two zmm of B (32 columns) and a
//    32-bit broadcast of A(i, 2r..2r+1) for each of 12 rows: 24 accumulators.
// Why both: on the Xeon (Sapphire Rapids class) this was written on,
// vdpbf16ps on zmm starts once per 2 cycles, 16 bf16 products per cycle
// against 32 for float32 FMAs, so it loses to gemm_f32; tdpbf16ps there runs
// at ~380 products per cycle (about 12x the float32 FMA peak). CPUs with
// AVX-512 BF16 but no AMX (AMD Zen 4 and 5) get the dot kernel, untimed here.
//
// Every element of C is summed over the same depth blocks in the same order
// whichever thread owns it, so results are bitwise the same for any thread
// count; tiles at the edges go through a full-size buffer so they are
// computed the same way as the others.
#include "kernels/cpu/linalg/gemm_bf16.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ember/error.h"
#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm_driver.h"

#if defined(__AVX512BF16__) && defined(__AVX512BW__)
#define EMBER_GEMM_BF16_DOT 1
#include <immintrin.h>
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__linux__)
#define EMBER_GEMM_BF16_AMX 1
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif

namespace ember::cpu {
namespace {

#if defined(EMBER_GEMM_BF16_AMX)
// Linux hands out the 8 KiB AMX register state only to processes that ask for
// it, once; without it the first tile instruction faults. 18 is the tile data
// component of the XSAVE state (XFEATURE_XTILEDATA in the kernel).
bool amx_permitted() {
  static const bool permitted = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, 18) == 0;
  return permitted;
}
#endif

#if defined(EMBER_GEMM_BF16_DOT)

constexpr int kChunk = 32;     // depth values per A chunk; the packed depth is a multiple of it
constexpr int kPanelCols = 32;  // NR of both kernels

using Bf16GemmArgs = gemm_detail::GemmArgs<BFloat16, float>;

using gemm_detail::balanced_step;
using gemm_detail::round_up;

// ---- packing ----

// Lanes [0, count) of 32 bf16 at p, zeros above (count <= 0: all zero).
__m512i load_bf16(const BFloat16* p, int64_t count) {
  if (count >= 32) return _mm512_loadu_si512(p);
  if (count <= 0) return _mm512_setzero_si512();
  return _mm512_maskz_loadu_epi16((__mmask32{1} << count) - 1, p);
}

// x, y: 32 bf16 each. lo = x0 y0 x1 y1 ... x15 y15, hi = x16 y16 ... x31 y31.
void interleave_bf16(__m512i x, __m512i y, __m512i& lo, __m512i& hi) {
  alignas(64) static constexpr uint16_t kLo[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                   8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  alignas(64) static constexpr uint16_t kHi[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                                   24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
  lo = _mm512_permutex2var_epi16(x, _mm512_load_si512(kLo), y);
  hi = _mm512_permutex2var_epi16(x, _mm512_load_si512(kHi), y);
}

// GCC 12 flags the _mm512_undefined_epi32() inside its own unpack and shuffle
// intrinsics as uninitialized once they are inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
// In place: rows[i] lane j <- rows[j] lane i, for 16 rows of 16 32-bit lanes.
void transpose_16x16_epi32(__m512i (&rows)[16]) {
  __m512i t[16];
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_epi32(rows[k], rows[k + 1]);
    t[k + 1] = _mm512_unpackhi_epi32(rows[k], rows[k + 1]);
  }
  // Now per 128-bit lane L, group g (rows 4g..4g+3): rows[4g + s] lane L = column 4L + s of those rows.
  for (int g = 0; g < 16; g += 4) {
    rows[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
    rows[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
    rows[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
    rows[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
  }
  // Output row 4L + s gathers 128-bit lane L of rows[s], rows[4 + s], rows[8 + s], rows[12 + s].
  for (int s = 0; s < 4; ++s) {
    const __m512i u0 = _mm512_shuffle_i32x4(rows[s], rows[4 + s], 0x44);
    const __m512i u1 = _mm512_shuffle_i32x4(rows[s], rows[4 + s], 0xEE);
    const __m512i u2 = _mm512_shuffle_i32x4(rows[8 + s], rows[12 + s], 0x44);
    const __m512i u3 = _mm512_shuffle_i32x4(rows[8 + s], rows[12 + s], 0xEE);
    t[s] = _mm512_shuffle_i32x4(u0, u2, 0x88);
    t[4 + s] = _mm512_shuffle_i32x4(u0, u2, 0xDD);
    t[8 + s] = _mm512_shuffle_i32x4(u1, u3, 0x88);
    t[12 + s] = _mm512_shuffle_i32x4(u1, u3, 0xDD);
  }
  std::copy(t, t + 16, rows);
}
#pragma GCC diagnostic pop

// An A block (rows, depth), A(i, p) = src[i * row_stride + p * depth_stride],
// into ceil(rows / R) panels laid out as Note [bf16 GEMM] says (zeros past the
// edges). Each case walks the source in memory order as far as it can.
template <int R>
void pack_a(const BFloat16* src, int64_t row_stride, int64_t depth_stride, int64_t rows, int64_t depth,
            BFloat16* dst) {
  const int64_t chunks = (depth + kChunk - 1) / kChunk;
  for (int64_t i0 = 0; i0 < rows; i0 += R, dst += chunks * R * kChunk) {
    const int height = static_cast<int>(std::min<int64_t>(R, rows - i0));
    const BFloat16* panel = src + i0 * row_stride;
    if (depth_stride == 1) {  // rows contiguous along k: each chunk of a row is a copy
      for (int i = 0; i < R; ++i) {
        for (int64_t c = 0; c < chunks; ++c) {
          const __m512i v = i < height ? load_bf16(panel + i * row_stride + c * kChunk, depth - c * kChunk)
                                       : _mm512_setzero_si512();
          _mm512_storeu_si512(dst + (c * R + i) * kChunk, v);
        }
      }
    } else if (row_stride == 1) {  // columns contiguous along m: pair up k rows, then transpose 16 rows at a time
      for (int64_t c = 0; c < chunks; ++c) {
        for (int i = 0; i < R; i += 16) {
          const int64_t width = std::min(height - i, 16);
          __m512i pairs[16], unused;
          for (int q = 0; q < 16; ++q) {
            const int64_t p = c * kChunk + 2 * q;
            const __m512i x = p < depth ? load_bf16(panel + p * depth_stride + i, width) : _mm512_setzero_si512();
            const __m512i y =
                p + 1 < depth ? load_bf16(panel + (p + 1) * depth_stride + i, width) : _mm512_setzero_si512();
            interleave_bf16(x, y, pairs[q], unused);
          }
          transpose_16x16_epi32(pairs);
          for (int r = 0; r < std::min(16, R - i); ++r) {
            _mm512_storeu_si512(dst + (c * R + i + r) * kChunk, pairs[r]);
          }
        }
      }
    } else {
      for (int64_t c = 0; c < chunks; ++c) {
        for (int i = 0; i < R; ++i) {
          for (int e = 0; e < kChunk; ++e) {
            const int64_t p = c * kChunk + e;
            dst[(c * R + i) * kChunk + e] =
                i < height && p < depth ? panel[i * row_stride + p * depth_stride] : BFloat16();
          }
        }
      }
    }
  }
}

// A B block (depth, cols), B(p, j) = src[p * depth_stride + j * col_stride],
// into ceil(cols / 32) panels laid out as Note [bf16 GEMM] says (zeros past the edges).
void pack_b(const BFloat16* src, int64_t depth_stride, int64_t col_stride, int64_t depth, int64_t cols,
            BFloat16* dst) {
  const int64_t pair_rows = (depth + kChunk - 1) / kChunk * (kChunk / 2);
  const int64_t panel_size = pair_rows * kPanelCols * 2;
  if (col_stride == 1) {  // rows contiguous along n: interleave rows 2r and 2r + 1, across all panels in turn
    for (int64_t r = 0; r < pair_rows; ++r) {
      const int64_t p = 2 * r;
      for (int64_t j0 = 0; j0 < cols; j0 += kPanelCols) {
        const int64_t width = cols - j0;
        const __m512i x = p < depth ? load_bf16(src + p * depth_stride + j0, width) : _mm512_setzero_si512();
        const __m512i y = p + 1 < depth ? load_bf16(src + (p + 1) * depth_stride + j0, width) : _mm512_setzero_si512();
        __m512i lo, hi;
        interleave_bf16(x, y, lo, hi);
        BFloat16* out = dst + j0 / kPanelCols * panel_size + r * kPanelCols * 2;
        _mm512_storeu_si512(out, lo);
        _mm512_storeu_si512(out + 32, hi);
      }
    }
    return;
  }
  for (int64_t j0 = 0; j0 < cols; j0 += kPanelCols, dst += panel_size) {
    const int64_t width = std::min<int64_t>(kPanelCols, cols - j0);
    const BFloat16* panel = src + j0 * col_stride;
    if (depth_stride == 1) {  // columns contiguous along k: each pair is one 32-bit word; transpose
      for (int j = 0; j < kPanelCols; j += 16) {
        for (int64_t r0 = 0; r0 < pair_rows; r0 += 16) {
          __m512i words[16];
          for (int w = 0; w < 16; ++w) {
            words[w] = j + w < width ? load_bf16(panel + (j + w) * col_stride + 2 * r0, depth - 2 * r0)
                                     : _mm512_setzero_si512();
          }
          transpose_16x16_epi32(words);
          for (int q = 0; q < 16; ++q) _mm512_storeu_si512(dst + ((r0 + q) * kPanelCols + j) * 2, words[q]);
        }
      }
    } else {
      for (int64_t r = 0; r < pair_rows; ++r) {
        for (int j = 0; j < kPanelCols; ++j) {
          for (int e = 0; e < 2; ++e) {
            const bool inside = j < width && 2 * r + e < depth;
            dst[(r * kPanelCols + j) * 2 + e] = inside ? panel[(2 * r + e) * depth_stride + j * col_stride]
                                                       : BFloat16();
          }
        }
      }
    }
  }
}

// ---- micro-kernels ----
// Each computes a full (kRows, 32) tile C = alpha * A_panel B_panel + beta * C
// (beta == 0: C not read) with unit column stride, over `depth` values of k
// (the panels are padded to a whole chunk).

// C (rows, 32) = alpha * acc + beta * C, acc: (rows, 32) floats with row stride 32.
void store_tile(const float* acc, int rows, float alpha, float beta, float* c, int64_t c_rs) {
  const __m512 alpha_v = _mm512_set1_ps(alpha), beta_v = _mm512_set1_ps(beta);
  for (int i = 0; i < rows; ++i) {
    for (int v = 0; v < kPanelCols; v += 16) {
      const __m512 scaled = _mm512_mul_ps(alpha_v, _mm512_loadu_ps(acc + i * kPanelCols + v));
      float* out = c + i * c_rs + v;
      _mm512_storeu_ps(out, beta == 0 ? scaled : _mm512_fmadd_ps(beta_v, _mm512_loadu_ps(out), scaled));
    }
  }
}

struct DotKernel {
  static constexpr int kRows = 12;  // 12 x 2 zmm accumulators + 2 B vectors + 1 broadcast of 32 registers
  // KC: a packed B panel (kc x 32 bf16, 32 KiB) fits the 48 KiB L1 with room
  // for the A panels streaming past. MC: a packed A block (mc x kc) takes a
  // quarter of the 2 MiB L2.
  static constexpr int64_t kMaxDepth = 512;
  static constexpr int64_t kMaxRows = 504;
  // Problems below this many multiply-adds run on the calling thread (as gemm.cpp's).
  static constexpr double kMinParallelWork = 64.0 * 64 * 64;

  static void run(int64_t depth, const BFloat16* a, const BFloat16* b, float alpha, float beta, float* c,
                  int64_t c_rs) {
    __m512 acc[kRows][2];
#pragma GCC unroll 32
    for (int i = 0; i < kRows; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    const int64_t pairs = (depth + 1) / 2;
    for (int64_t r0 = 0; r0 < pairs; r0 += kChunk / 2) {
      const BFloat16* a_chunk = a + r0 / (kChunk / 2) * kRows * kChunk;
      const int count = static_cast<int>(std::min<int64_t>(kChunk / 2, pairs - r0));
#pragma GCC unroll 4
      for (int q = 0; q < count; ++q) {
        const BFloat16* b_row = b + (r0 + q) * kPanelCols * 2;
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b_row), b1 = (__m512bh)_mm512_loadu_si512(b_row + 32);
#pragma GCC unroll 32
        for (int i = 0; i < kRows; ++i) {
          uint32_t pair;
          std::memcpy(&pair, a_chunk + i * kChunk + 2 * q, sizeof(pair));
          const __m512bh a_pair = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair));
          acc[i][0] = _mm512_dpbf16_ps(acc[i][0], a_pair, b0);
          acc[i][1] = _mm512_dpbf16_ps(acc[i][1], a_pair, b1);
        }
      }
    }
    alignas(64) float tile[kRows * kPanelCols];
#pragma GCC unroll 32
    for (int i = 0; i < kRows; ++i) {
      _mm512_store_ps(tile + i * kPanelCols, acc[i][0]);
      _mm512_store_ps(tile + i * kPanelCols + 16, acc[i][1]);
    }
    store_tile(tile, kRows, alpha, beta, c, c_rs);
  }
};

#if defined(EMBER_GEMM_BF16_AMX)
struct AmxKernel {
  static constexpr int kRows = 32;  // 2 x 2 tiles of 16 x 16 floats
  // Each call ends by waiting for its last products before storing C, and a
  // depth block after the first reads C back: a deep KC (B panel of 64 KiB,
  // in L2, which the tile loads stream from well) pays both less often. MC:
  // a packed A block of a quarter of L2. (Measured from 512 to 2048 cubed:
  // KC 1024 with MC 256 ran 10-40% faster than KC 512 with MC 512.)
  static constexpr int64_t kMaxDepth = 1024;
  static constexpr int64_t kMaxRows = 256;
  // Problems below this many multiply-adds run on the calling thread: about
  // 50 us of work, against the ~25 us a second thread costs to start here
  // (2 threads made 256 cubed slower, 128 x 512 x 784 1.3x faster).
  static constexpr double kMinParallelWork = 256.0 * 256 * 512;

  // Tiles 0-3: C; 4, 5: A (16 rows x 32 bf16); 6, 7: B (16 pair rows x 16 columns). All 16 rows of 64 bytes.
  struct alignas(64) TileConfig {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t bytes_per_row[16] = {64, 64, 64, 64, 64, 64, 64, 64};
    uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
  };

  // The tile shapes are per-thread state: each GEMM block sets them and frees the tiles after.
  struct Scope {
    Scope() {
      static const TileConfig config;
      _tile_loadconfig(&config);
    }
    ~Scope() { _tile_release(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };

  static void run(int64_t depth, const BFloat16* a, const BFloat16* b, float alpha, float beta, float* c,
                  int64_t c_rs) {
    const int64_t c_stride = c_rs * static_cast<int64_t>(sizeof(float));
    // C = A B + C (later depth blocks of a plain product): start the sums from C.
    const bool accumulate_on_c = alpha == 1 && beta == 1;
    if (accumulate_on_c) {
      _tile_loadd(0, c, c_stride);
      _tile_loadd(1, c + 16, c_stride);
      _tile_loadd(2, c + 16 * c_rs, c_stride);
      _tile_loadd(3, c + 16 * c_rs + 16, c_stride);
    } else {
      _tile_zero(0);
      _tile_zero(1);
      _tile_zero(2);
      _tile_zero(3);
    }
    for (int64_t p0 = 0; p0 < depth; p0 += kChunk) {
      const BFloat16* a_chunk = a + p0 * kRows;
      const BFloat16* b_chunk = b + p0 * kPanelCols;
      _tile_loadd(4, a_chunk, kChunk * 2);
      _tile_loadd(5, a_chunk + 16 * kChunk, kChunk * 2);
      _tile_loadd(6, b_chunk, kPanelCols * 4);
      _tile_loadd(7, b_chunk + 32, kPanelCols * 4);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 5, 7);
    }
    if (accumulate_on_c || (alpha == 1 && beta == 0)) {  // the tiles hold the result
      _tile_stored(0, c, c_stride);
      _tile_stored(1, c + 16, c_stride);
      _tile_stored(2, c + 16 * c_rs, c_stride);
      _tile_stored(3, c + 16 * c_rs + 16, c_stride);
      return;
    }
    alignas(64) float tile[kRows * kPanelCols];
    _tile_stored(0, tile, kPanelCols * 4);
    _tile_stored(1, tile + 16, kPanelCols * 4);
    _tile_stored(2, tile + 16 * kPanelCols, kPanelCols * 4);
    _tile_stored(3, tile + 16 * kPanelCols + 16, kPanelCols * 4);
    store_tile(tile, kRows, alpha, beta, c, c_rs);
  }
};
#endif

// ---- blocking and threads ----

struct PanelBuffers {
  gemm_detail::PackBuffer<BFloat16> a, b;
};

// NC (gemm.cpp's note names the block sizes): a packed B block (kc x nc) lives in L3; this only bounds it.
constexpr int64_t kMaxCols = 4096;

// A C tile (rows, cols), at most (kRows, 32): full tiles with unit column
// stride go straight to the kernel, the rest through a full-size buffer.
template <class Kernel>
void run_tile(int64_t depth, const BFloat16* a_panel, const BFloat16* b_panel, float alpha, float beta, float* c,
              int64_t c_rs, int64_t c_cs, int rows, int cols) {
  constexpr int R = Kernel::kRows;
  if (rows == R && cols == kPanelCols && c_cs == 1) {
    Kernel::run(depth, a_panel, b_panel, alpha, beta, c, c_rs);
    return;
  }
  alignas(64) float tile[R * kPanelCols];
  if (beta != 0) {
    for (int i = 0; i < rows; ++i) {
      for (int j = 0; j < cols; ++j) tile[i * kPanelCols + j] = c[i * c_rs + j * c_cs];
    }
  }
  Kernel::run(depth, a_panel, b_panel, alpha, beta, tile, kPanelCols);
  for (int i = 0; i < rows; ++i) {
    for (int j = 0; j < cols; ++j) c[i * c_rs + j * c_cs] = tile[i * kPanelCols + j];
  }
}

// The blocked loops over the C rectangle [row_begin, row_end) x [col_begin, col_end).
template <class Kernel>
void gemm_block(const Bf16GemmArgs& g, int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end) {
  constexpr int R = Kernel::kRows;
  // Depth blocks depend on k alone: they fix the order in which each C element is summed.
  const int64_t depth_step = balanced_step(g.k, Kernel::kMaxDepth, kChunk);
  const int64_t row_step = balanced_step(row_end - row_begin, Kernel::kMaxRows, R);
  const int64_t col_step = balanced_step(col_end - col_begin, kMaxCols, kPanelCols);
  thread_local PanelBuffers buffers;
  BFloat16* packed_a = buffers.a.get(row_step * depth_step);
  BFloat16* packed_b = buffers.b.get(col_step * depth_step);

  for (int64_t jc = col_begin; jc < col_end; jc += col_step) {
    const int64_t nc = std::min(col_step, col_end - jc);
    for (int64_t pc = 0; pc < g.k; pc += depth_step) {
      const int64_t kc = std::min(depth_step, g.k - pc), padded = round_up(kc, kChunk);
      const float beta = pc == 0 ? g.beta : 1.f;  // later depth blocks add to what the first wrote
      pack_b(g.b + pc * g.b_rs + jc * g.b_cs, g.b_rs, g.b_cs, kc, nc, packed_b);
      for (int64_t ic = row_begin; ic < row_end; ic += row_step) {
        const int64_t mc = std::min(row_step, row_end - ic);
        pack_a<R>(g.a + ic * g.a_rs + pc * g.a_cs, g.a_rs, g.a_cs, mc, kc, packed_a);
        for (int64_t jr = 0; jr < nc; jr += kPanelCols) {
          const int cols = static_cast<int>(std::min<int64_t>(kPanelCols, nc - jr));
          for (int64_t ir = 0; ir < mc; ir += R) {
            const int rows = static_cast<int>(std::min<int64_t>(R, mc - ir));
            float* c = g.c + (ic + ir) * g.c_rs + (jc + jr) * g.c_cs;
            run_tile<Kernel>(kc, packed_a + ir * padded, packed_b + jr * padded, g.alpha, beta, c, g.c_rs, g.c_cs,
                             rows, cols);
          }
        }
      }
    }
  }
}

template <class Kernel>
void gemm(Bf16GemmArgs g) {
  constexpr int R = Kernel::kRows;
  if (g.c_cs != 1 && g.c_rs == 1) g = gemm_detail::transposed(g);
  const double work = static_cast<double>(g.m) * g.n * g.k;
  // Inside another parallel loop the pool runs our tasks inline, so one task packs least.
  const int threads = work < Kernel::kMinParallelWork || in_parallel_region() ? 1 : get_num_threads();
  gemm_detail::run_task_grid(g.m, g.n, R, kPanelCols, threads,
                             [&](int64_t row_begin, int64_t row_end, int64_t col_begin, int64_t col_end) {
#if defined(EMBER_GEMM_BF16_AMX)
                               if constexpr (std::is_same_v<Kernel, AmxKernel>) {
                                 const AmxKernel::Scope tiles;  // the tile shapes, for this thread
                                 gemm_block<Kernel>(g, row_begin, row_end, col_begin, col_end);
                                 return;
                               }
#endif
                               gemm_block<Kernel>(g, row_begin, row_end, col_begin, col_end);
                             });
}

#endif  // EMBER_GEMM_BF16_DOT

const char* kernel_name(GemmBf16Kernel kernel) {
  return kernel == GemmBf16Kernel::kAmxTiles ? "AMX tiles" : "AVX-512 BF16 dot";
}

}  // namespace

bool gemm_bf16_supports(GemmBf16Kernel kernel) {
  if (kernel == GemmBf16Kernel::kAmxTiles) {
#if defined(EMBER_GEMM_BF16_AMX)
    return amx_permitted();
#else
    return false;
#endif
  }
#if defined(EMBER_GEMM_BF16_DOT)
  return true;
#else
  return false;
#endif
}

bool gemm_bf16_available() { return gemm_bf16_supports(GemmBf16Kernel::kAvx512Dot); }

void gemm_bf16(int64_t m, int64_t n, int64_t k, float alpha, const BFloat16* a, int64_t a_rs, int64_t a_cs,
               const BFloat16* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t c_rs, int64_t c_cs) {
  const GemmBf16Kernel kernel =
      gemm_bf16_supports(GemmBf16Kernel::kAmxTiles) ? GemmBf16Kernel::kAmxTiles : GemmBf16Kernel::kAvx512Dot;
  gemm_bf16_using(kernel, m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs);
}

void gemm_bf16_using(GemmBf16Kernel kernel, int64_t m, int64_t n, int64_t k, float alpha, const BFloat16* a,
                     int64_t a_rs, int64_t a_cs, const BFloat16* b, int64_t b_rs, int64_t b_cs, float beta, float* c,
                     int64_t c_rs, int64_t c_cs) {
  EMBER_CHECK(gemm_bf16_supports(kernel), "gemm_bf16: the ", kernel_name(kernel),
              " kernel does not run on this CPU (or was not compiled in); check gemm_bf16_supports first");
#if defined(EMBER_GEMM_BF16_DOT)
  const Bf16GemmArgs g{m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, c_cs};
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0) {
    gemm_detail::scale_c(g);
    return;
  }
#if defined(EMBER_GEMM_BF16_AMX)
  if (kernel == GemmBf16Kernel::kAmxTiles) {
    gemm<AmxKernel>(g);
    return;
  }
#endif
  gemm<DotKernel>(g);
#else
  (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)a_rs, (void)a_cs, (void)b, (void)b_rs, (void)b_cs;
  (void)beta, (void)c, (void)c_rs, (void)c_cs;
#endif
}

}  // namespace ember::cpu
