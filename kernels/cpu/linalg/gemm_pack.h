// Packing for the GEMM: copies a block of A or B, whatever its strides, into
// the panel layout the micro-kernel reads with unit stride. Included by
// gemm.cpp only.
//
// A block of depth x wide elements, src(p, w) = src[p * depth_stride + w * wide_stride],
// becomes ceil(wide / W) panels of depth x W, each stored row after row:
//   panel q, row p:  dst[(q * depth + p) * W + w] = src(p, q * W + w)   (0 past `wide`)
// For A (W = MR) p runs along k and w along m; for B (W = NR) p along k, w along n.
//
// Three cases by layout:
// - wide_stride == 1 (row-major B, column-major A): each panel row is a copy.
// - depth_stride == 1 (row-major A, column-major B): a transpose, done in
//   8 x 8 (f32) or 4 x 4 (f64) register blocks with AVX.
// - anything else: element by element.
#pragma once

#include <algorithm>
#include <cstdint>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace ember::cpu::gemm_detail {

#if defined(__AVX__)
// Register block transposes: in rows r = 0..kBlock-1 each hold kBlock values
// (row r of a tile), out row q holds element q of every input row.
inline void transpose_block(__m256 (&rows)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(rows[0], rows[1]), t1 = _mm256_unpackhi_ps(rows[0], rows[1]);
  const __m256 t2 = _mm256_unpacklo_ps(rows[2], rows[3]), t3 = _mm256_unpackhi_ps(rows[2], rows[3]);
  const __m256 t4 = _mm256_unpacklo_ps(rows[4], rows[5]), t5 = _mm256_unpackhi_ps(rows[4], rows[5]);
  const __m256 t6 = _mm256_unpacklo_ps(rows[6], rows[7]), t7 = _mm256_unpackhi_ps(rows[6], rows[7]);
  // Within each 128-bit half, u0..u3 hold columns 0..3 of rows 0-3, u4..u7 of rows 4-7.
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  rows[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  rows[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  rows[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  rows[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  rows[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  rows[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  rows[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  rows[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

inline void transpose_block(__m256d (&rows)[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(rows[0], rows[1]), t1 = _mm256_unpackhi_pd(rows[0], rows[1]);
  const __m256d t2 = _mm256_unpacklo_pd(rows[2], rows[3]), t3 = _mm256_unpackhi_pd(rows[2], rows[3]);
  rows[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  rows[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  rows[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  rows[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

template <class T>
struct TransposeVec;
template <>
struct TransposeVec<float> {
  using V = __m256;
  static constexpr int kBlock = 8;
  static V load(const float* p) { return _mm256_loadu_ps(p); }
  static V zero() { return _mm256_setzero_ps(); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};
template <>
struct TransposeVec<double> {
  using V = __m256d;
  static constexpr int kBlock = 4;
  static V load(const double* p) { return _mm256_loadu_pd(p); }
  static V zero() { return _mm256_setzero_pd(); }
  static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};

// One kBlock x kBlock transpose step of a panel: source rows w0.. (each
// contiguous along p, `rows` of them valid, the rest zero) become kBlock panel
// rows of which the first kRoom columns are written.
// src: (rows, kBlock) with row stride wide_stride; dst: (kBlock, kRoom) with row stride W.
template <int W, int kRoom, class T>
void transpose_into_panel(const T* src, int64_t wide_stride, int rows, T* dst) {
  using Vec = TransposeVec<T>;
  constexpr int kBlock = Vec::kBlock;
  typename Vec::V block[kBlock];
  for (int r = 0; r < kBlock; ++r) block[r] = r < rows ? Vec::load(src + r * wide_stride) : Vec::zero();
  transpose_block(block);
  if constexpr (kRoom == kBlock) {
    for (int q = 0; q < kBlock; ++q) Vec::store(dst + q * W, block[q]);
  } else {
    alignas(32) T tile[kBlock][kBlock];
    for (int q = 0; q < kBlock; ++q) Vec::store(tile[q], block[q]);
    for (int q = 0; q < kBlock; ++q) {
      for (int w = 0; w < kRoom; ++w) dst[q * W + w] = tile[q][w];
    }
  }
}

// The transposing case of pack_panel (depth_stride == 1): whole kBlock x kBlock
// blocks; returns how many rows p it packed.
template <int W, class T>
int64_t pack_panel_transposed(const T* src, int64_t wide_stride, int64_t depth, int width, T* dst) {
  constexpr int kBlock = TransposeVec<T>::kBlock;
  constexpr int kFullColumns = W / kBlock * kBlock;
  int64_t p = 0;
  for (; p + kBlock <= depth; p += kBlock) {
    for (int w0 = 0; w0 < kFullColumns; w0 += kBlock) {
      transpose_into_panel<W, kBlock>(src + w0 * wide_stride + p, wide_stride, std::clamp(width - w0, 0, kBlock),
                                      dst + p * W + w0);
    }
    if constexpr (kFullColumns < W) {
      transpose_into_panel<W, W - kFullColumns>(src + kFullColumns * wide_stride + p, wide_stride,
                                                std::max(width - kFullColumns, 0), dst + p * W + kFullColumns);
    }
  }
  return p;
}
#endif

// One panel: width valid columns of W. src(p, w) = src[p * depth_stride + w * wide_stride];
// dst: (depth, W). For wide_stride == 1 see pack_panels_rowwise.
template <int W, class T>
void pack_panel(const T* src, int64_t depth_stride, int64_t wide_stride, int64_t depth, int width, T* dst) {
  int64_t p = 0;
#if defined(__AVX__)
  if (depth_stride == 1) p = pack_panel_transposed<W>(src, wide_stride, depth, width, dst);
#endif
  for (; p < depth; ++p) {
    for (int w = 0; w < W; ++w) dst[p * W + w] = w < width ? src[p * depth_stride + w * wide_stride] : T(0);
  }
}

// The copying case (wide_stride == 1): source rows are contiguous, a panel
// row is a slice of one. Rows are taken kRowsPerPass at a time across all
// panels, so the reads walk each source row in order and only a few pages of
// the source and the destination are live at once (a column-wise walk down a
// panel would touch a new page per row when the source is wide). Each read
// also prefetches the same place in the next pass's rows: the source usually
// comes from L3 or memory, and the hardware prefetcher alone falls behind.
template <int W, class T>
void pack_panels_rowwise(const T* src, int64_t depth_stride, int64_t depth, int64_t wide, T* dst) {
  constexpr int64_t kRowsPerPass = 16;
  for (int64_t p0 = 0; p0 < depth; p0 += kRowsPerPass) {
    const int64_t p_end = std::min(depth, p0 + kRowsPerPass);
    T* panel = dst;
    for (int64_t w0 = 0; w0 < wide; w0 += W, panel += depth * W) {
      const int64_t width = std::min<int64_t>(W, wide - w0);
      for (int64_t p = p0; p < p_end; ++p) {
        const T* in = src + p * depth_stride + w0;
        T* out = panel + p * W;
        __builtin_prefetch(in + kRowsPerPass * depth_stride);
        __builtin_prefetch(in + kRowsPerPass * depth_stride + W - 1);
        if (width == W) {
          for (int w = 0; w < W; ++w) out[w] = in[w];
        } else {
          for (int w = 0; w < W; ++w) out[w] = w < width ? in[w] : T(0);
        }
      }
    }
  }
}

// A (depth, wide) block into ceil(wide / W) panels of (depth, W), see the top of this file.
template <int W, class T>
void pack_panels(const T* src, int64_t depth_stride, int64_t wide_stride, int64_t depth, int64_t wide, T* dst) {
  if (wide_stride == 1) {
    pack_panels_rowwise<W>(src, depth_stride, depth, wide, dst);
    return;
  }
  for (int64_t w0 = 0; w0 < wide; w0 += W) {
    const int width = static_cast<int>(std::min<int64_t>(W, wide - w0));
    pack_panel<W>(src + w0 * wide_stride, depth_stride, wide_stride, depth, width, dst);
    dst += depth * W;
  }
}

}  // namespace ember::cpu::gemm_detail
