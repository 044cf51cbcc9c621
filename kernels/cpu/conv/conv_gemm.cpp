// Convolutions as matrix products (contract in conv_gemm.h).
//
// Note [Convolution as GEMM]
// For one image and one group, unfold ("im2col") the input x_g (C_g, H, W)
// into a matrix col (C_g * kH * kW, H_out * W_out): row (c, ki, kj), column
// (oh, ow) holds x_g[c, oh * s - p + ki * d, ow * s - p + kj * d], or 0 in the
// padding. A 3-D convolution adds a depth to both: row (c, kd, ki, kj), column
// (od, oh, ow); a 2-D one is the depth-1 case, with the same runs. Then the
// three computations are one GEMM each (kernels/cpu/linalg/gemm.h,
// the BLIS-style kernel near the FMA peak):
//   forward        y_g (O_g, P)      = w_g (O_g, K) . col (K, P)
//   input grad     col_grad (K, P)   = w_g^T (K, O_g) . y_grad_g (O_g, P), then
//                  "col2im" adds each entry back to the x position it came from
//   weight grad    w_grad_g (O_g, K) += y_grad_g (O_g, P) . col^T (P, K)
// (K = C_g kH kW, P = H_out W_out), each done block of pixels by block. A
// 1x1 convolution with stride 1 and no padding needs no unfolding: col is x_g.
//
// bfloat16 operands stay bfloat16: col is unfolded in bf16 (half the bytes
// to copy) and every GEMM is gemm_bf16 (kernels/cpu/linalg/gemm_bf16.h: AMX or
// AVX-512 BF16), which reads bf16 and accumulates in float32; the results
// (y, col_grad, x_grad, w_grad) are float32, rounded to bf16 by the caller.
//
// The unfolded matrix is never built whole (576 x 3136 floats, 7 MB, for a
// 64-channel 3x3 layer on 56x56): it is made a block of pixels at a time
// (pixel_block: about 512 KB, so it is near when the GEMM packs it),
// in a per-thread buffer kept between calls (a fresh multi-megabyte
// allocation costs more in page faults than the copy). With the whole matrix
// the GEMM's packing streams it back from memory, and the forward GEMM of
// that layer (64 x 3136 x 576) ran at half the speed of the blocked one.
// The copy costs K * nb stores against 2 * O_g * K * nb flops: negligible for
// wide layers. A layer with few output channels per group (a first layer,
// a depthwise one) makes a thin GEMM; its forward is computed directly
// instead (Note [Direct convolution] in conv_direct.cpp).
//
// Threads and determinism:
//   - forward and input grad: each image is independent. With at least two
//     images per thread, images are split over threads and every GEMM runs
//     single-threaded; otherwise images run one after the other and each GEMM
//     uses all threads. Every output element is computed by the same sequence
//     of operations either way (the GEMM is thread-count invariant), so the
//     choice only affects speed.
//   - weight grad sums over images: the batch is cut into chunks of
//     kWeightGradChunk images (fixed, never by the thread count); each chunk
//     accumulates its own partial gradient, and the partials are added in
//     chunk order. Bitwise the same for any thread count.
//   - bias sums: one channel per task, a fixed lane pattern inside.
#include "kernels/cpu/conv/conv_gemm.h"

#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "ember/parallel.h"
#include "kernels/cpu/conv/conv_direct.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/linalg/gemm_bf16.h"
#include "kernels/cpu/vec/vec.h"

namespace ember::cpu {
namespace {

// Images per chunk of the weight-gradient sum (see the Note).
constexpr int64_t kWeightGradChunk = 4;
// Multiply-adds below which a parallel task is not worth waking a thread.
constexpr double kMinTaskWork = 64.0 * 64 * 64;

// c (m, n) = a (m, k) . b (k, n) + beta * c, with c in ConvAcc<T>.
template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, ConvAcc<T> beta, ConvAcc<T>* c, int64_t c_rs) {
  if constexpr (std::is_same_v<T, float>)
    gemm_f32(m, n, k, 1.0f, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, 1);
  else if constexpr (std::is_same_v<T, double>)
    gemm_f64(m, n, k, 1.0, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, 1);
  else
    gemm_bf16(m, n, k, 1.0f, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, c_rs, 1);
}

// A per-thread buffer of at least n elements, kept between calls. `slot`
// tells apart two buffers used at once.
template <class T>
T* scratch(int64_t n, int slot) {
  struct Buffer {
    std::unique_ptr<T[]> data;
    int64_t size = 0;
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[slot];
  if (b.size < n) {
    b.data = std::make_unique_for_overwrite<T[]>(static_cast<size_t>(n));
    b.size = n;
  }
  return b.data.get();
}

bool is_pointwise(const ConvGeometry& g) {
  return g.kernel_taps() == 1 && g.stride_d == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_d == 0 &&
         g.pad_h == 0 && g.pad_w == 0 && g.out_d == g.in_d && g.out_h == g.in_h && g.out_w == g.in_w;
}

// The output columns [lo, hi) whose input column ow * s + offset lies in [0, size).
struct ValidRange {
  int64_t lo, hi;
};
ValidRange valid_range(int64_t offset, int64_t stride, int64_t size, int64_t out_size) {
  // ow * stride + offset >= 0  <=>  ow >= ceil(-offset / stride)
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  // ow * stride + offset < size  <=>  ow < ceil((size - offset) / stride)
  int64_t hi = size - offset <= 0 ? 0 : (size - offset + stride - 1) / stride;
  lo = std::min(lo, out_size);
  hi = std::clamp(hi, lo, out_size);
  return {lo, hi};
}

// Pixels (columns of the unfolded matrix) per block: a block of K rows holds
// about 128K elements (512 KB of floats, Zen 3's L2; 64K and 512K measured
// 5-15% slower on the 64-channel 3x3 layer). A multiple of the micro-kernel's
// width; fixed by the shape alone.
int64_t pixel_block(const ConvGeometry& g) {
  constexpr int64_t kBlockElements = 128 * 1024;
  const int64_t block = std::max<int64_t>(64, kBlockElements / std::max<int64_t>(1, g.col_rows()) / 16 * 16);
  return std::min(block, std::max<int64_t>(1, g.out_pixels()));
}

// One run of an unfolded row inside a pixel block [j0, j1): the part of one
// output row (od, oh) that the block holds, in one row (c, kd, ki, kj) of the
// unfolded matrix, as offsets for input channel c = 0 (channel c adds
// c kD kH kW rows to dst and c D H W to src). col[dst + before + i] takes
// x_g[src + i * stride_w] for i in [0, count); the `before` columns ahead of
// it and the `after` columns behind it read the padding.
struct Run {
  int64_t dst, src, before, count, after;
};

// The runs of channel 0's rows that the pixel block [j0, j1) touches, in
// (kd, ki, kj, output row) order: the same for every channel, so computed once
// per block.
void block_runs(const ConvGeometry& g, int64_t j0, int64_t j1, std::vector<Run>& runs) {
  runs.clear();
  // Output rows r = od * out_h + oh.
  const int64_t width = j1 - j0, r_first = j0 / g.out_w, r_last = (j1 - 1) / g.out_w;
  for (int64_t kd = 0; kd < g.kernel_d; ++kd) {
    for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
      for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
        const int64_t row = (kd * g.kernel_h + ki) * g.kernel_w + kj;
        const int64_t iw0 = kj * g.dilation_w - g.pad_w;  // the input column under output column 0
        const ValidRange cols = valid_range(iw0, g.stride_w, g.in_w, g.out_w);
        for (int64_t r = r_first; r <= r_last; ++r) {
          const int64_t od = r / g.out_h, oh = r % g.out_h;
          const int64_t id = od * g.stride_d - g.pad_d + kd * g.dilation_d;
          const int64_t ih = oh * g.stride_h - g.pad_h + ki * g.dilation_h;
          const int64_t begin = r == r_first ? j0 - r * g.out_w : 0;
          const int64_t end = r == r_last ? j1 - r * g.out_w : g.out_w;
          const int64_t dst = row * width + r * g.out_w - j0 + begin;
          if (id < 0 || id >= g.in_d || ih < 0 || ih >= g.in_h) {
            runs.push_back({dst, 0, end - begin, 0, 0});
            continue;
          }
          const int64_t lo = std::clamp(cols.lo, begin, end), hi = std::clamp(cols.hi, lo, end);
          runs.push_back({dst, (id * g.in_h + ih) * g.in_w + iw0 + lo * g.stride_w, lo - begin, hi - lo, end - hi});
        }
      }
    }
  }
}

// Calls f(run, dst_offset, src_offset) for every run of the pixel block
// [j0, j1), channel by channel (the offsets are the channel's).
template <class F>
void for_each_run(const ConvGeometry& g, int64_t j0, int64_t j1, F&& f) {
  thread_local std::vector<Run> runs;
  block_runs(g, j0, j1, runs);
  const int64_t dst_step = g.kernel_taps() * (j1 - j0), src_step = g.in_pixels();
  for (int64_t c = 0; c < g.in_per_group(); ++c) {
    for (const Run& r : runs) f(r, c * dst_step, c * src_step);
  }
}

// Copies, zero fills and adds of one run of an unfolded row. Runs are an output
// row long, often shorter than a vector (11 pixels in the demo's second
// layer), so float runs go by masked vector moves; a memcpy or fill call per
// run cost more than the bytes it moved. for_each_vector calls f(i, count)
// for the vectors covering [0, n), count lanes from i.
template <class F>
void for_each_vector(int64_t n, F&& f) {
  constexpr int kLanes = vec::VecF::kLanes;
  for (int64_t i = 0; i < n; i += kLanes) f(i, static_cast<int>(std::min<int64_t>(kLanes, n - i)));
}

template <class T>
void copy_run(T* dst, const T* src, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    for_each_vector(n, [&](int64_t i, int count) {
      vec::VecF::load_partial(src + i, count).store_partial(dst + i, count);
    });
  } else {
    std::copy(src, src + n, dst);
  }
}

template <class T>
void zero_run(T* dst, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    for_each_vector(n, [&](int64_t i, int count) { vec::VecF(0.0f).store_partial(dst + i, count); });
  } else {
    std::fill(dst, dst + n, T(0));
  }
}

template <class T>
void add_run(T* dst, const T* src, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    using vec::VecF;
    for_each_vector(n, [&](int64_t i, int count) {
      (VecF::load_partial(dst + i, count) + VecF::load_partial(src + i, count)).store_partial(dst + i, count);
    });
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
  }
}

// One image and group by the direct kernel (conv_direct.h). It computes in
// float or double; bf16 operands are widened first, a copy that is small next
// to the O_g kH kW multiply-adds each input value takes part in.
template <class T>
void direct_forward(const ConvGeometry& g, const T* x, const T* w, ConvAcc<T>* y) {
  const int64_t padded_size = g.in_per_group() * (g.in_h + 2 * g.pad_h) * (g.in_w + 2 * g.pad_w);
  if constexpr (std::is_same_v<T, BFloat16>) {
    const int64_t x_size = g.in_per_group() * g.in_pixels(), w_size = g.out_per_group() * g.col_rows();
    float* wide = scratch<float>(x_size + w_size, 0);
    std::copy(x, x + x_size, wide);
    std::copy(w, w + w_size, wide + x_size);
    conv_direct_forward<float>(g, wide, wide + x_size, y, scratch<float>(padded_size, 1));
  } else {
    conv_direct_forward<T>(g, x, w, y, scratch<T>(padded_size, 1));
  }
}

// Runs f(image) for every image: split over threads when there are at least
// two images per thread (or the images are too small for a threaded GEMM),
// else one after the other (each GEMM then uses the threads). See the Note.
template <class F>
void for_each_image(const ConvGeometry& g, F&& f) {
  const double work_per_image = g.batch > 0 ? g.macs() / static_cast<double>(g.batch) : 0;
  const int threads = get_num_threads();
  const bool split_images = g.batch >= 2 * threads || work_per_image < 4 * kMinTaskWork;
  if (split_images && threads > 1) {
    const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kMinTaskWork / std::max(work_per_image, 1.0)));
    parallel_for(0, g.batch, grain, [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) f(n);
    });
  } else {
    for (int64_t n = 0; n < g.batch; ++n) f(n);
  }
}

}  // namespace

template <class T>
void im2col(const ConvGeometry& g, const T* x, int64_t j0, int64_t j1, T* col) {
  const int64_t sw = g.stride_w;
  for_each_run(g, j0, j1, [&](const Run& r, int64_t dst_at, int64_t src_at) {
    T* dst = col + dst_at + r.dst;
    const T* src = x + src_at + r.src;
    zero_run(dst, r.before);
    if (sw == 1) {
      copy_run(dst + r.before, src, r.count);
    } else {
      for (int64_t i = 0; i < r.count; ++i) dst[r.before + i] = src[i * sw];
    }
    zero_run(dst + r.before + r.count, r.after);
  });
}

template <class T>
void col2im_add(const ConvGeometry& g, const T* col, int64_t j0, int64_t j1, T* x) {
  const int64_t sw = g.stride_w;
  for_each_run(g, j0, j1, [&](const Run& r, int64_t col_at, int64_t x_at) {
    const T* src = col + col_at + r.dst + r.before;
    T* dst = x + x_at + r.src;
    if (sw == 1) {
      add_run(dst, src, r.count);
    } else {
      for (int64_t i = 0; i < r.count; ++i) dst[i * sw] += src[i];
    }
  });
}

template <class T>
void add_channel_bias(T* t, const T* bias, int64_t batch, int64_t channels, int64_t pixels) {
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      T* row = t + (n * channels + c) * pixels;
      const T b = bias[c];
      for (int64_t p = 0; p < pixels; ++p) row[p] += b;
    }
  }
}

template <class T>
void conv_forward(const ConvGeometry& g, const T* x, const T* w, const ConvAcc<T>* bias, ConvAcc<T>* y) {
  using Acc = ConvAcc<T>;
  const int64_t K = g.col_rows(), P = g.out_pixels(), Og = g.out_per_group(), Cg = g.in_per_group();
  const bool pointwise = is_pointwise(g), direct = conv_direct_suits(g);
  const int64_t block = pixel_block(g);
  for_each_image(g, [&](int64_t n) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const T* xg = x + (n * g.in_channels + gi * Cg) * g.in_pixels();
      Acc* yg = y + (n * g.out_channels + gi * Og) * P;
      const T* wg = w + gi * Og * K;
      if (direct) {
        direct_forward(g, xg, wg, yg);
      } else if (pointwise) {
        gemm<T>(Og, P, K, wg, K, 1, xg, P, 1, Acc(0), yg, P);
      } else {
        T* col = scratch<T>(K * block, 0);
        for (int64_t j0 = 0; j0 < P; j0 += block) {
          const int64_t j1 = std::min(P, j0 + block);
          im2col(g, xg, j0, j1, col);
          // y_g[:, j0:j1] (O_g, nb) = w_g (O_g, K) . col (K, nb)
          gemm<T>(Og, j1 - j0, K, wg, K, 1, col, j1 - j0, 1, Acc(0), yg + j0, P);
        }
      }
      if (bias != nullptr) add_channel_bias(yg, bias + gi * Og, 1, Og, P);
    }
  });
}

template <class T>
void conv_input_grad(const ConvGeometry& g, const T* y_grad, const T* w, ConvAcc<T>* x_grad) {
  using Acc = ConvAcc<T>;
  const int64_t K = g.col_rows(), P = g.out_pixels(), Og = g.out_per_group(), Cg = g.in_per_group();
  const bool pointwise = is_pointwise(g);
  const int64_t block = pixel_block(g);
  for_each_image(g, [&](int64_t n) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      Acc* xg = x_grad + (n * g.in_channels + gi * Cg) * g.in_pixels();
      const T* wg = w + gi * Og * K;
      const T* yg = y_grad + (n * g.out_channels + gi * Og) * P;
      if (pointwise) {
        gemm<T>(K, P, Og, wg, 1, K, yg, P, 1, Acc(0), xg, P);
        continue;
      }
      std::fill(xg, xg + Cg * g.in_pixels(), Acc(0));
      Acc* col = scratch<Acc>(K * block, 0);
      for (int64_t j0 = 0; j0 < P; j0 += block) {
        const int64_t j1 = std::min(P, j0 + block);
        // col (K, nb) = w_g^T (K, O_g) . y_grad_g[:, j0:j1] (O_g, nb)
        gemm<T>(K, j1 - j0, Og, wg, 1, K, yg + j0, P, 1, Acc(0), col, j1 - j0);
        col2im_add(g, col, j0, j1, xg);
      }
    }
  });
}

template <class T>
void conv_weight_grad(const ConvGeometry& g, const T* y_grad, const T* x, ConvAcc<T>* w_grad) {
  using Acc = ConvAcc<T>;
  const int64_t K = g.col_rows(), P = g.out_pixels(), Og = g.out_per_group(), Cg = g.in_per_group();
  const int64_t wsize = g.out_channels * K;
  if (g.batch == 0) {
    std::fill(w_grad, w_grad + wsize, Acc(0));
    return;
  }
  const bool pointwise = is_pointwise(g);
  const int64_t block = pointwise ? P : pixel_block(g);
  const int64_t chunks = (g.batch + kWeightGradChunk - 1) / kWeightGradChunk;
  // Chunk 0 writes w_grad directly; the others their own partial.
  std::vector<Acc> partials(static_cast<size_t>((chunks - 1) * wsize));
  const double chunk_work = g.macs() / static_cast<double>(chunks);
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kMinTaskWork / std::max(chunk_work, 1.0)));
  parallel_for(0, chunks, grain, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      Acc* acc = chunk == 0 ? w_grad : partials.data() + (chunk - 1) * wsize;
      const int64_t n0 = chunk * kWeightGradChunk, n1 = std::min(g.batch, n0 + kWeightGradChunk);
      for (int64_t n = n0; n < n1; ++n) {
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          const T* xg = x + (n * g.in_channels + gi * Cg) * g.in_pixels();
          const T* yg = y_grad + (n * g.out_channels + gi * Og) * P;
          Acc* accg = acc + gi * Og * K;
          for (int64_t j0 = 0; j0 < P; j0 += block) {
            const int64_t j1 = std::min(P, j0 + block), width = j1 - j0;
            const T* col = xg + j0;  // pointwise: x_g itself, row stride P
            int64_t col_rs = P;
            if (!pointwise) {
              T* buf = scratch<T>(K * block, 0);
              im2col(g, xg, j0, j1, buf);
              col = buf;
              col_rs = width;
            }
            // acc_g (O_g, K) (+)= y_grad_g[:, j0:j1] (O_g, nb) . col^T (nb, K)
            const bool first = n == n0 && j0 == 0;
            gemm<T>(Og, K, width, yg + j0, P, 1, col, 1, col_rs, first ? Acc(0) : Acc(1), accg, K);
          }
        }
      }
    }
  });
  if (chunks == 1) return;
  parallel_for(0, wsize, 1 << 14, [&](int64_t b, int64_t e) {
    for (int64_t chunk = 1; chunk < chunks; ++chunk) {
      const Acc* p = partials.data() + (chunk - 1) * wsize;
      for (int64_t i = b; i < e; ++i) w_grad[i] += p[i];
    }
  });
}

template <class T>
void channel_sums(const T* t, int64_t batch, int64_t channels, int64_t pixels, ConvAcc<T>* out) {
  using Acc = ConvAcc<T>;
  constexpr int kLanes = 16;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(1, batch * pixels));
  parallel_for(0, channels, grain, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      // Lane l adds the pixels p = l mod kLanes of every image; lanes are folded pairwise at the end.
      Acc acc[kLanes] = {};
      for (int64_t n = 0; n < batch; ++n) {
        const T* row = t + (n * channels + c) * pixels;
        int64_t p = 0;
        for (; p + kLanes <= pixels; p += kLanes) {
          for (int l = 0; l < kLanes; ++l) acc[l] += static_cast<Acc>(row[p + l]);
        }
        for (int l = 0; p < pixels; ++p, ++l) acc[l] += static_cast<Acc>(row[p]);
      }
      for (int width = kLanes / 2; width >= 1; width /= 2) {
        for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
      }
      out[c] = acc[0];
    }
  });
}

#define EMBER_CONV_INSTANTIATE(T)                                                                           \
  template void conv_forward<T>(const ConvGeometry&, const T*, const T*, const ConvAcc<T>*, ConvAcc<T>*); \
  template void conv_input_grad<T>(const ConvGeometry&, const T*, const T*, ConvAcc<T>*);                 \
  template void conv_weight_grad<T>(const ConvGeometry&, const T*, const T*, ConvAcc<T>*);                \
  template void channel_sums<T>(const T*, int64_t, int64_t, int64_t, ConvAcc<T>*);
template void im2col<float>(const ConvGeometry&, const float*, int64_t, int64_t, float*);
template void im2col<double>(const ConvGeometry&, const double*, int64_t, int64_t, double*);
template void im2col<Half>(const ConvGeometry&, const Half*, int64_t, int64_t, Half*);
template void im2col<BFloat16>(const ConvGeometry&, const BFloat16*, int64_t, int64_t, BFloat16*);
template void col2im_add<float>(const ConvGeometry&, const float*, int64_t, int64_t, float*);
template void col2im_add<double>(const ConvGeometry&, const double*, int64_t, int64_t, double*);
EMBER_CONV_INSTANTIATE(float)
EMBER_CONV_INSTANTIATE(double)
EMBER_CONV_INSTANTIATE(BFloat16)
#undef EMBER_CONV_INSTANTIATE
template void add_channel_bias<float>(float*, const float*, int64_t, int64_t, int64_t);
template void add_channel_bias<double>(double*, const double*, int64_t, int64_t, int64_t);

}  // namespace ember::cpu
