// Direct forward convolution (contract in conv_direct.h).
//
// Note [Direct convolution]
// With few output channels per group, the GEMM of Note [Convolution as GEMM]
// is a thin one (6 x P x 25 for a 1 -> 6 channel 5x5 layer; 1 x P x 9 for a
// depthwise 3x3 one): the micro-kernel's tile is mostly empty and unfolding
// the input costs as much as the arithmetic. Computed directly instead, a
// vector of kLanes adjacent outputs of each of up to kTile output channels
// stays in registers while the taps (c, ki, kj) stream past:
//   acc[t] += w[o + t, c, ki, kj] * x[c, oh * s + ki * d, ow .. ow + kLanes - 1 + kj * d]
// one unaligned load of x serves kTile FMAs. Padding is handled once, by a
// zero-padded copy of the image (none when the padding is 0), so the loop has
// no bounds checks; the last vector of a row uses masked loads and stores.
// It needs unit horizontal stride (adjacent outputs read adjacent inputs).
// Every output is the sum over the taps in the same order, in the same lane
// arithmetic wherever it sits in a row: results do not depend on threads.
#include "kernels/cpu/conv/conv_direct.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/vec/vec.h"

namespace ember::cpu {
namespace {

template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  using type = vec::VecF;
};
template <>
struct VecOf<double> {
  using type = vec::VecD;
};

// Output channels computed together: kTile accumulators plus the shared input vector fit the registers.
constexpr int kTile = 6;

// Output channels [o0, o0 + NT) of one image and group. xp: the (padded) image
// (C_g, hp, wp); w: the group's weights (O_g, C_g kH kW); y: the group's output.
template <class T, int NT>
void direct_tile(const ConvGeometry& g, const T* xp, int64_t hp, int64_t wp, const T* w, int64_t o0, T* y) {
  using V = typename VecOf<T>::type;
  constexpr int L = V::kLanes;
  const int64_t K = g.col_rows(), P = g.out_pixels();
  const T* wt = w + o0 * K;
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    for (int64_t ow = 0; ow < g.out_w; ow += L) {
      const int n = static_cast<int>(std::min<int64_t>(L, g.out_w - ow));
      V acc[NT];
      for (int t = 0; t < NT; ++t) acc[t] = V::broadcast(T(0));
      for (int64_t c = 0; c < g.in_per_group(); ++c) {
        for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
          const T* row = xp + (c * hp + oh * g.stride_h + ki * g.dilation_h) * wp + ow;
          const T* wk = wt + (c * g.kernel_h + ki) * g.kernel_w;
          for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
            const T* src = row + kj * g.dilation_w;
            const V xv = n == L ? V::load(src) : V::load_partial(src, n);
            for (int t = 0; t < NT; ++t) acc[t] = vec::fma(V::broadcast(wk[t * K + kj]), xv, acc[t]);
          }
        }
      }
      for (int t = 0; t < NT; ++t) {
        T* dst = y + (o0 + t) * P + oh * g.out_w + ow;
        if (n == L)
          acc[t].store(dst);
        else
          acc[t].store_partial(dst, n);
      }
    }
  }
}

template <class T, int NT>
void direct_tail(const ConvGeometry& g, const T* xp, int64_t hp, int64_t wp, const T* w, int64_t o0, int nt, T* y) {
  if constexpr (NT > 0) {
    if (nt == NT) return direct_tile<T, NT>(g, xp, hp, wp, w, o0, y);
    direct_tail<T, NT - 1>(g, xp, hp, wp, w, o0, nt, y);
  }
}

}  // namespace

bool conv_direct_suits(const ConvGeometry& g) {
  return g.planar() && g.stride_w == 1 && g.out_per_group() <= 8 && g.out_w > 0 && g.out_h > 0;
}

template <class T>
void conv_direct_forward(const ConvGeometry& g, const T* x, const T* w, T* y, T* padded) {
  const int64_t hp = g.in_h + 2 * g.pad_h, wp = g.in_w + 2 * g.pad_w, channels = g.in_per_group();
  const T* xp = x;
  if (g.pad_h != 0 || g.pad_w != 0) {
    std::fill(padded, padded + channels * hp * wp, T(0));
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t ih = 0; ih < g.in_h; ++ih) {
        std::memcpy(padded + (c * hp + ih + g.pad_h) * wp + g.pad_w, x + (c * g.in_h + ih) * g.in_w,
                    static_cast<size_t>(g.in_w) * sizeof(T));
      }
    }
    xp = padded;
  }
  const int64_t outs = g.out_per_group();
  int64_t o0 = 0;
  for (; o0 + kTile <= outs; o0 += kTile) direct_tile<T, kTile>(g, xp, hp, wp, w, o0, y);
  if (o0 < outs) direct_tail<T, kTile - 1>(g, xp, hp, wp, w, o0, static_cast<int>(outs - o0), y);
}

template void conv_direct_forward<float>(const ConvGeometry&, const float*, const float*, float*, float*);
template void conv_direct_forward<double>(const ConvGeometry&, const double*, const double*, double*, double*);

}  // namespace ember::cpu
