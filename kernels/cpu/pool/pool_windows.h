// The window arithmetic shared by the 2-D pooling kernels (pooling.cpp) and
// the 3-D ones (pooling3d.cpp): output sizes and, per dim, the input range
// each output position reads. The rules are PyTorch 1.13's (Note [Pooling
// loops] in pooling.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ember::cpu {

inline int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

// floor((in + 2 pad - dilation (k - 1) - 1 [+ stride - 1 with ceil_mode]) / stride) + 1,
// minus one with ceil_mode when the last window would start in the right padding.
inline int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = floor_div(span, stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;  // the last window must start inside the input or left pad
  return out;
}

// One window dimension per output position: [begin, end) clipped to the input.
struct Span {
  int64_t begin, end;
};

// Max pooling: the first tap inside the input, the end of the dilated window.
inline std::vector<Span> max_spans(int64_t out, int64_t in, int64_t k, int64_t stride, int64_t pad,
                                   int64_t dilation) {
  std::vector<Span> s(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    int64_t b = o * stride - pad;
    const int64_t e = std::min(b + (k - 1) * dilation + 1, in);
    while (b < 0) b += dilation;
    s[o] = {b, e};
  }
  return s;
}

// Average pooling's window per output position: clipped to the input, and the
// size of its clip to the padded input.
struct AvgSpan {
  int64_t begin, end, padded;
};

inline std::vector<AvgSpan> avg_spans(int64_t out, int64_t in, int64_t k, int64_t stride, int64_t pad) {
  std::vector<AvgSpan> s(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const int64_t b = o * stride - pad, e = std::min(b + k, in + pad);
    s[o] = {std::max<int64_t>(b, 0), std::min(e, in), e - b};
  }
  return s;
}

// Adaptive pooling: output o of `out` reads input [floor(o in / out), ceil((o + 1) in / out)).
inline std::vector<Span> adaptive_spans(int64_t out, int64_t in) {
  std::vector<Span> s(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) s[o] = {(o * in) / out, ((o + 1) * in + out - 1) / out};
  return s;
}

}  // namespace ember::cpu
