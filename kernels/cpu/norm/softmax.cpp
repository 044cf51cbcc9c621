// softmax, log_softmax and their backward kernels on CPU.
//
// Note [Softmax on CPU]
// The input is viewed as [outer, len, inner], len the softmax dim.
//   rows     (inner == 1, the usual dim=-1): one task owns whole rows. A row
//            of a few thousand floats stays in L1, so it is read from memory
//            once: pass 1 takes the max, pass 2 writes e = exp(x - max) and
//            sums it, pass 3 scales by 1/sum (log_softmax: pass 2 only sums,
//            pass 3 writes (x - max) - log(sum)). exp runs on SIMD lanes
//            (vec_math.h) for float32.
//   tiles    (inner > 1, dim not innermost): the [len, inner] slab of each
//            outer index is cut into tiles of up to kColumns columns x a
//            segment of rows that stays in cache (kTileBytes); with inner <=
//            kColumns a tile is one contiguous piece of memory, so it streams.
//            Phase 1 gives each tile's per-column max m_k and sum s_k of
//            exp(x - m_k) (vectorised across columns); phase 2 combines the
//            segments of a column in order, M = max m_k and
//            S = sum s_k exp(m_k - M); phase 3 writes the output. The input is
//            read from memory twice, every access is row-contiguous, and the
//            tiles run in parallel even when there is one outer index.
// Rows, tiles and the order segments combine in are fixed by the shape, never
// by the thread count, so the bits do not depend on it. Shifting by the max
// keeps exp in range; a row that is all -inf gives NaN (-inf - -inf), as in
// PyTorch.
// float64 uses std::exp one element at a time; f16/bf16 compute in float and
// round once (in rows they recompute exp in pass 3 instead of re-reading a
// rounded e).
//
// Backward (y the forward's output, g the gradient):
//   softmax:     dx = y * (g - sum(g * y))
//   log_softmax: dx = g - exp(y) * sum(g)
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/op_decls_norm.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/norm/norm_lanes.h"
#include "kernels/cpu/vec/vec_math.h"

namespace ember {

namespace {

using namespace cpu::norm;

constexpr int64_t kGrain = 32768;         // elements per task
constexpr int64_t kColumns = 1024;        // columns of a tile (strided case)
constexpr int64_t kTileBytes = 64 << 10;  // a tile's rows stay in cache between its passes

// exp has SIMD lanes for float only (double: std::exp, one element at a time).
template <class T> constexpr bool kVecExp = std::is_same_v<T, float>;

template <class W>
inline W exp_of(W x) {
  if constexpr (std::is_same_v<W, double>) return std::exp(x);
  else return cpu::vec::exp(x);
}

struct Geometry {
  int64_t outer = 1, len = 1, inner = 1;
};

Geometry geometry(const Tensor& t, int64_t dim) {
  Geometry g;
  if (t.dim() == 0) return g;
  g.len = t.size(dim);
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i < dim) g.outer *= t.size(i);
    if (i > dim) g.inner *= t.size(i);
  }
  return g;
}

// ---- forward ----

// One row of length n: y = softmax(x) or log_softmax(x).
template <class T>
void softmax_row(const T* x, T* y, int64_t n, bool log) {
  using S = opmath_t<T>;
  constexpr bool kV = kVecExp<T>;
  const S m = max_lanes(x, n);
  if (log) {
    const S s = sum_lanes<T, kV>(n, [&]<class W>(int64_t i) { return exp_of(load<W>(x + i) - W(m)); });
    const S log_s = std::log(s);
    for_lanes<T>(n, [&]<class W>(int64_t i) { store(y + i, (load<W>(x + i) - W(m)) - W(log_s)); });
    return;
  }
  if constexpr (std::is_same_v<T, S>) {  // e is exact in y: write it, then scale
    const S s = sum_lanes<T, kV>(n, [&]<class W>(int64_t i) {
      const W e = exp_of(load<W>(x + i) - W(m));
      store(y + i, e);
      return e;
    });
    const S inv = S(1) / s;
    for_lanes<T>(n, [&]<class W>(int64_t i) { store(y + i, load<W>(y + i) * W(inv)); });
  } else {
    const S s = sum_lanes<T, kV>(n, [&]<class W>(int64_t i) { return exp_of(load<W>(x + i) - W(m)); });
    const S inv = S(1) / s;
    for_lanes<T>(n, [&]<class W>(int64_t i) { store(y + i, exp_of(load<W>(x + i) - W(m)) * W(inv)); });
  }
}

// `mask ? a : b`, lane by lane.
template <class W, class M>
inline W pick(M mask, W a, W b) {
  if constexpr (std::is_arithmetic_v<W>) return mask ? a : b;
  else return cpu::vec::blend(mask, a, b);
}

// ---- the strided case: tiles of columns x segments of rows ----

struct Tiles {
  int64_t width = 1, blocks = 1, seg_rows = 1, segs = 1;
};

Tiles tiles_of(const Geometry& g, size_t elem) {
  Tiles t;
  t.width = std::min(g.inner, kColumns);
  t.blocks = (g.inner + t.width - 1) / t.width;
  t.seg_rows = std::max<int64_t>(1, kTileBytes / (t.width * static_cast<int64_t>(elem)));
  t.segs = (g.len + t.seg_rows - 1) / t.seg_rows;
  return t;
}

// One tile: outer index o, columns [c0, c0 + w), rows [r0, r1); `k` numbers
// its (o, block) column block, `seg` its segment.
struct Tile {
  int64_t o, k, seg, c0, w, r0, r1;
};

// Calls f(tile) for every tile, one tile per task.
template <class F>
void for_each_tile(const Geometry& g, const Tiles& t, F f) {
  parallel_for(0, g.outer * t.blocks * t.segs, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t k = i / t.segs, seg = i % t.segs, o = k / t.blocks, c0 = (k % t.blocks) * t.width;
      f(Tile{o, k, seg, c0, std::min(t.width, g.inner - c0), seg * t.seg_rows, std::min(g.len, (seg + 1) * t.seg_rows)});
    }
  });
}

// Calls f(k, w) for every (outer, column block) k of w columns, in tasks of ~kGrain partials.
template <class F>
void for_each_column_block(const Geometry& g, const Tiles& t, F f) {
  parallel_for(0, g.outer * t.blocks, std::max<int64_t>(1, kGrain / (t.segs * t.width)), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      f(k, std::min(t.width, g.inner - (k % t.blocks) * t.width));
    }
  });
}

template <class T>
void softmax_tiles(const T* x, T* y, const Geometry& g, bool log) {
  using S = opmath_t<T>;
  constexpr bool kV = kVecExp<T>;
  constexpr S kMinusInf = -std::numeric_limits<S>::infinity();
  const Tiles t = tiles_of(g, sizeof(T));
  // Per (column block, segment, column): the segment's max and sum of exp(x - max).
  std::vector<S> seg_max(static_cast<size_t>(g.outer * t.blocks * t.segs * t.width));
  std::vector<S> seg_sum(seg_max.size());
  auto row = [&](const Tile& tl, int64_t r) { return (tl.o * g.len + r) * g.inner + tl.c0; };
  for_each_tile(g, t, [&](const Tile& tl) {
    S* m = seg_max.data() + (tl.k * t.segs + tl.seg) * t.width;
    S* sum = seg_sum.data() + (tl.k * t.segs + tl.seg) * t.width;
    std::fill(m, m + tl.w, kMinusInf);
    std::fill(sum, sum + tl.w, S(0));
    for (int64_t r = tl.r0; r < tl.r1; ++r) {
      const T* xr = x + row(tl, r);
      for_lanes<T>(tl.w, [&]<class W>(int64_t c) { store(m + c, cpu::vec::max(load<W>(xr + c), load<W>(m + c))); });
    }
    // A column that is all -inf so far adds 0 here (not exp(-inf - -inf)).
    for (int64_t r = tl.r0; r < tl.r1; ++r) {
      const T* xr = x + row(tl, r);
      for_lanes<T, kV>(tl.w, [&]<class W>(int64_t c) {
        const W mc = load<W>(m + c);
        store(sum + c, load<W>(sum + c) + pick(mc == W(kMinusInf), W(S(0)), exp_of(load<W>(xr + c) - mc)));
      });
    }
  });
  // Per (column block, column): the max M over the segments, and 1/S or log(S).
  std::vector<S> col_max(static_cast<size_t>(g.outer * t.blocks * t.width)), col_scale(col_max.size());
  for_each_column_block(g, t, [&](int64_t k, int64_t w) {
    S* mx = col_max.data() + k * t.width;
    S* scale = col_scale.data() + k * t.width;
    std::fill(mx, mx + w, kMinusInf);
    for (int64_t seg = 0; seg < t.segs; ++seg) {
      const S* m = seg_max.data() + (k * t.segs + seg) * t.width;
      for_lanes<T>(w, [&]<class W>(int64_t c) { store(mx + c, cpu::vec::max(load<W>(m + c), load<W>(mx + c))); });
    }
    std::fill(scale, scale + w, S(0));
    for (int64_t seg = 0; seg < t.segs; ++seg) {
      const S* m = seg_max.data() + (k * t.segs + seg) * t.width;
      const S* sum = seg_sum.data() + (k * t.segs + seg) * t.width;
      for_lanes<T, kV>(w, [&]<class W>(int64_t c) {
        const W mc = load<W>(m + c);
        const W term = load<W>(sum + c) * exp_of(mc - load<W>(mx + c));
        store(scale + c, load<W>(scale + c) + pick(mc == W(kMinusInf), W(S(0)), term));
      });
    }
    for (int64_t c = 0; c < w; ++c) scale[c] = log ? std::log(scale[c]) : S(1) / scale[c];
  });
  for_each_tile(g, t, [&](const Tile& tl) {
    const S* mx = col_max.data() + tl.k * t.width;
    const S* scale = col_scale.data() + tl.k * t.width;
    for (int64_t r = tl.r0; r < tl.r1; ++r) {
      const T* xr = x + row(tl, r);
      T* yr = y + row(tl, r);
      for_lanes<T, kV>(tl.w, [&]<class W>(int64_t c) {
        const W shifted = load<W>(xr + c) - load<W>(mx + c);
        store(yr + c, log ? shifted - load<W>(scale + c) : exp_of(shifted) * load<W>(scale + c));
      });
    }
  });
}

// Calls row(offset) for every row, in tasks of ~kGrain elements (inner == 1).
template <class RowFn>
void for_each_row(const Geometry& g, RowFn row) {
  parallel_for(0, g.outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, g.len)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) row(o * g.len);
  });
}

Tensor softmax_impl(const char* name, const Tensor& self, int64_t dim, std::optional<DType> dtype, bool log) {
  const int64_t d = wrap_dim(dim, self.dim(), name);
  const Tensor in = (dtype && *dtype != self.dtype() ? self.to(*dtype) : self).contiguous();
  EMBER_CHECK(in.is_floating_point(), name, ": expected a floating-point input (or dtype), got ", in.dtype());
  Tensor out = make_empty(in.sizes(), in.dtype(), in.device());
  if (out.numel() == 0) return out;
  const Geometry g = geometry(in, d);
  dispatch_floating(in.dtype(), name, [&]<class T>() {
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    if (g.inner == 1) for_each_row(g, [&](int64_t off) { softmax_row(x + off, y + off, g.len, log); });
    else softmax_tiles(x, y, g, log);
  });
  return out;
}

Tensor softmax_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl("softmax", self, dim, dtype, false);
}
Tensor log_softmax_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return softmax_impl("log_softmax", self, dim, dtype, true);
}

// ---- backward ----

template <class T>
void backward_row(const T* g, const T* y, T* dx, int64_t n, bool log) {
  using S = opmath_t<T>;
  if (log) {
    const S s = sum_lanes<T>(n, [&]<class W>(int64_t i) { return load<W>(g + i); });
    for_lanes<T, kVecExp<T>>(n, [&]<class W>(int64_t i) {
      store(dx + i, load<W>(g + i) - exp_of(load<W>(y + i)) * W(s));
    });
    return;
  }
  const S s = sum_lanes<T>(n, [&]<class W>(int64_t i) { return load<W>(g + i) * load<W>(y + i); });
  for_lanes<T>(n, [&]<class W>(int64_t i) { store(dx + i, load<W>(y + i) * (load<W>(g + i) - W(s))); });
}

// The strided backward: each tile's per-column partial sums of g * y (log: g),
// the segments added in order, then dx written tile by tile.
template <class T>
void backward_tiles(const T* g, const T* y, T* dx, const Geometry& geo, bool log) {
  using S = opmath_t<T>;
  const Tiles t = tiles_of(geo, sizeof(T));
  std::vector<S> seg_sum(static_cast<size_t>(geo.outer * t.blocks * t.segs * t.width));
  auto row = [&](const Tile& tl, int64_t r) { return (tl.o * geo.len + r) * geo.inner + tl.c0; };
  for_each_tile(geo, t, [&](const Tile& tl) {
    S* sum = seg_sum.data() + (tl.k * t.segs + tl.seg) * t.width;
    std::fill(sum, sum + tl.w, S(0));
    for (int64_t r = tl.r0; r < tl.r1; ++r) {
      const T* gr = g + row(tl, r);
      const T* yr = y + row(tl, r);
      for_lanes<T>(tl.w, [&]<class W>(int64_t c) {
        const W term = log ? load<W>(gr + c) : load<W>(gr + c) * load<W>(yr + c);
        store(sum + c, load<W>(sum + c) + term);
      });
    }
  });
  std::vector<S> col_sum(static_cast<size_t>(geo.outer * t.blocks * t.width));
  for_each_column_block(geo, t, [&](int64_t k, int64_t w) {
    S* total = col_sum.data() + k * t.width;
    std::fill(total, total + w, S(0));
    for (int64_t seg = 0; seg < t.segs; ++seg) {
      const S* sum = seg_sum.data() + (k * t.segs + seg) * t.width;
      for_lanes<T>(w, [&]<class W>(int64_t c) { store(total + c, load<W>(total + c) + load<W>(sum + c)); });
    }
  });
  for_each_tile(geo, t, [&](const Tile& tl) {
    const S* total = col_sum.data() + tl.k * t.width;
    for (int64_t r = tl.r0; r < tl.r1; ++r) {
      const T* gr = g + row(tl, r);
      const T* yr = y + row(tl, r);
      T* dr = dx + row(tl, r);
      for_lanes<T, kVecExp<T>>(tl.w, [&]<class W>(int64_t c) {
        if (log) store(dr + c, load<W>(gr + c) - exp_of(load<W>(yr + c)) * load<W>(total + c));
        else store(dr + c, load<W>(yr + c) * (load<W>(gr + c) - load<W>(total + c)));
      });
    }
  });
}

Tensor backward_impl(const char* name, const Tensor& grad, const Tensor& output, int64_t dim, bool log) {
  EMBER_CHECK(grad.sizes() == output.sizes(), name, ": grad_output of shape ", grad.sizes(),
              " does not match output of shape ", output.sizes());
  EMBER_CHECK(grad.dtype() == output.dtype(), name, ": grad_output is ", grad.dtype(), " but output is ",
              output.dtype(), " (expected the same dtype)");
  const int64_t d = wrap_dim(dim, output.dim(), name);
  const Tensor gc = grad.contiguous(), yc = output.contiguous();
  Tensor out = make_empty(yc.sizes(), yc.dtype(), yc.device());
  if (out.numel() == 0) return out;
  const Geometry geo = geometry(yc, d);
  dispatch_floating(yc.dtype(), name, [&]<class T>() {
    const T* g = gc.data_ptr<T>();
    const T* y = yc.data_ptr<T>();
    T* dx = out.data_ptr<T>();
    if (geo.inner == 1) for_each_row(geo, [&](int64_t off) { backward_row(g + off, y + off, dx + off, geo.len, log); });
    else backward_tiles(g, y, dx, geo, log);
  });
  return out;
}

Tensor softmax_backward_cpu(const Tensor& grad, const Tensor& output, int64_t dim) {
  return backward_impl("softmax_backward", grad, output, dim, false);
}
Tensor log_softmax_backward_cpu(const Tensor& grad, const Tensor& output, int64_t dim) {
  return backward_impl("log_softmax_backward", grad, output, dim, true);
}

}  // namespace

void register_cpu_softmax_kernels() {
  op::softmax.impl(DispatchKey::CPU, kFloatingDTypes, &softmax_cpu, "cpu::softmax");
  op::log_softmax.impl(DispatchKey::CPU, kFloatingDTypes, &log_softmax_cpu, "cpu::log_softmax");
  op::softmax_backward.impl(DispatchKey::CPU, kFloatingDTypes, &softmax_backward_cpu, "cpu::softmax_backward");
  op::log_softmax_backward.impl(DispatchKey::CPU, kFloatingDTypes, &log_softmax_backward_cpu,
                                "cpu::log_softmax_backward");
}

}  // namespace ember
