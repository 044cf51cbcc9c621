// Reductions on CPU, part 3: the ops, each a fold (identity, step, combine)
// and a projection to the output value. The interface is described at the
// top of reduce_driver.h.
//
// Accumulator types follow PyTorch's CPU kernels: integer and bool sums and
// products in int64; float sums, products and norms in float (f16 and bf16
// are read as float); var/std in double (Welford); logsumexp in the value
// type as a running (max, sum of exp(x - max)) pair.
//
// Note [NaN in reductions]
// max/min/amax/amin and the inf-norms propagate NaN: once a NaN is folded
// in, the result is NaN. max(dim)/argmax return the index of the first NaN.
// Index ops break ties by the lower index; their combine() is symmetric in
// that sense, so interleaved accumulators may fold in any order.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec/vec_math.h"

namespace ember::cpu::reduce {

template <class V>
inline constexpr bool is_float_v = std::is_floating_point_v<V>;

// The accumulator of sums and products: int64 for integers and bool.
template <class V>
using sum_acc_t = std::conditional_t<is_float_v<V>, V, int64_t>;

// a + b and a * b, wrapping around on integer overflow as PyTorch's kernels
// do in practice (computed in unsigned arithmetic, where wrapping is defined).
template <class A>
inline A wrap_add(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  else return a + b;
}
template <class A>
inline A wrap_mul(A a, A b) {
  if constexpr (std::is_integral_v<A>) return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  else return a * b;
}

// NaN-propagating max/min on one value (a NaN in either operand wins).
template <class V>
inline V max_nan(V a, V b) {
  if constexpr (is_float_v<V>) return a != a ? a : (a > b ? a : b);
  else return a > b ? a : b;
}
template <class V>
inline V min_nan(V a, V b) {
  if constexpr (is_float_v<V>) return a != a ? a : (a < b ? a : b);
  else return a < b ? a : b;
}

// Default contiguous() and columns(), written with the derived op's step().
template <class Derived, class V, class Acc>
struct FoldOp {
  using value_t = V;
  using acc_t = Acc;
  static constexpr int kUnroll = 8;  // independent accumulators in contiguous()

  Acc contiguous(const V* x, int64_t n, int64_t idx) const {
    const Derived& d = static_cast<const Derived&>(*this);
    Acc a[kUnroll];
    for (Acc& v : a) v = d.identity();
    int64_t i = 0;
    for (; i + kUnroll <= n; i += kUnroll) {
      for (int u = 0; u < kUnroll; ++u) a[u] = d.step(a[u], x[i + u], idx + i + u);
    }
    for (; i < n; ++i) a[0] = d.step(a[0], x[i], idx + i);
    for (int w = kUnroll / 2; w > 0; w /= 2) {
      for (int u = 0; u < w; ++u) a[u] = d.combine(a[u], a[u + w]);
    }
    return a[0];
  }
  void columns(Acc* acc, const V* x, int64_t n, int64_t idx) const {
    const Derived& d = static_cast<const Derived&>(*this);
    for (int64_t j = 0; j < n; ++j) acc[j] = d.step(acc[j], x[j], idx);
  }
  // Four rows at x, x + stride, x + 2 stride, x + 3 stride (reduced elements idx .. idx + 3).
  void columns4(Acc* acc, const V* x, int64_t stride, int64_t n, int64_t idx) const {
    const Derived& d = static_cast<const Derived&>(*this);
    for (int k = 0; k < 4; ++k) d.columns(acc, x + k * stride, n, idx + k);
  }
};

// Sum of f(x) over a contiguous float run, with 8 vector accumulators; f(0)
// must be 0 (the tail's masked lanes load 0). Lanes are added as a tree.
template <class F>
inline float vec_sum_map(const float* x, int64_t n, F f) {
  using vec::VecF;
  constexpr int64_t L = VecF::kLanes;
  VecF a[8];
  for (VecF& v : a) v = VecF(0.0f);
  int64_t i = 0;
  for (; i + 8 * L <= n; i += 8 * L) {
    for (int u = 0; u < 8; ++u) a[u] = a[u] + f(VecF::load(x + i + u * L));
  }
  for (; i + L <= n; i += L) a[0] = a[0] + f(VecF::load(x + i));
  if (i < n) a[1] = a[1] + f(VecF::load_partial(x + i, static_cast<int>(n - i)));
  for (int w = 4; w > 0; w /= 2) {
    for (int u = 0; u < w; ++u) a[u] = a[u] + a[u + w];
  }
  float lanes[L];
  a[0].store(lanes);
  for (int64_t w = L / 2; w > 0; w /= 2) {
    for (int64_t u = 0; u < w; ++u) lanes[u] += lanes[u + w];
  }
  return lanes[0];
}

// ---- sum, mean, prod ----

template <class V>
struct SumOp : FoldOp<SumOp<V>, V, sum_acc_t<V>> {
  using Acc = sum_acc_t<V>;
  bool is_mean = false;  // mean: the sum divided by `count`
  int64_t count = 0;

  Acc identity() const { return Acc(0); }
  Acc step(Acc a, V x, int64_t) const { return wrap_add(a, static_cast<Acc>(x)); }
  Acc combine(Acc a, Acc b) const { return wrap_add(a, b); }
  Acc contiguous(const V* x, int64_t n, int64_t idx) const {
    if constexpr (std::is_same_v<V, float>) return vec_sum_map(x, n, [](vec::VecF v) { return v; });
    else return FoldOp<SumOp<V>, V, Acc>::contiguous(x, n, idx);
  }
  // One accumulator load and store per four rows: the rows are added in pairs first.
  void columns4(Acc* acc, const V* x, int64_t stride, int64_t n, int64_t) const {
    const V* __restrict x0 = x;
    const V* __restrict x1 = x + stride;
    const V* __restrict x2 = x + 2 * stride;
    const V* __restrict x3 = x + 3 * stride;
    Acc* __restrict a = acc;
    for (int64_t j = 0; j < n; ++j) {
      const Acc lo = wrap_add(static_cast<Acc>(x0[j]), static_cast<Acc>(x1[j]));
      const Acc hi = wrap_add(static_cast<Acc>(x2[j]), static_cast<Acc>(x3[j]));
      a[j] = wrap_add(a[j], wrap_add(lo, hi));
    }
  }
  Acc project(Acc a) const {
    if constexpr (is_float_v<Acc>) {
      if (is_mean) return a / static_cast<Acc>(count);  // 0/0 = NaN for an empty mean, as in PyTorch
    }
    return a;
  }
};

template <class V>
struct ProdOp : FoldOp<ProdOp<V>, V, sum_acc_t<V>> {
  using Acc = sum_acc_t<V>;
  Acc identity() const { return Acc(1); }
  Acc step(Acc a, V x, int64_t) const { return wrap_mul(a, static_cast<Acc>(x)); }
  Acc combine(Acc a, Acc b) const { return wrap_mul(a, b); }
  Acc project(Acc a) const { return a; }
};

// ---- amax, amin ----

template <class V, bool kMax>
struct ExtremumOp : FoldOp<ExtremumOp<V, kMax>, V, V> {
  V identity() const {
    if constexpr (std::is_same_v<V, bool>) return !kMax;
    else if constexpr (is_float_v<V>)
      return kMax ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::infinity();
    else return kMax ? std::numeric_limits<V>::lowest() : std::numeric_limits<V>::max();
  }
  V step(V a, V x, int64_t) const { return kMax ? max_nan(a, x) : min_nan(a, x); }
  V combine(V a, V b) const { return step(a, b, 0); }
  V contiguous(const V* x, int64_t n, int64_t idx) const {
    if constexpr (std::is_same_v<V, float>) {
      using vec::VecF;
      constexpr int64_t L = VecF::kLanes;
      if (n < 4 * L) return FoldOp<ExtremumOp, V, V>::contiguous(x, n, idx);
      auto pick = [](VecF a, VecF b) { return kMax ? vec::max(a, b) : vec::min(a, b); };
      VecF a[4] = {VecF::load(x), VecF::load(x + L), VecF::load(x + 2 * L), VecF::load(x + 3 * L)};
      int64_t i = 4 * L;
      for (; i + 4 * L <= n; i += 4 * L) {
        for (int u = 0; u < 4; ++u) a[u] = pick(a[u], VecF::load(x + i + u * L));
      }
      for (; i + L <= n; i += L) a[0] = pick(a[0], VecF::load(x + i));
      float lanes[4 * L];
      for (int u = 0; u < 4; ++u) a[u].store(lanes + u * L);
      float r = lanes[0];
      for (int64_t k = 1; k < 4 * L; ++k) r = step(r, lanes[k], 0);
      for (; i < n; ++i) r = step(r, x[i], 0);
      return r;
    } else {
      return FoldOp<ExtremumOp, V, V>::contiguous(x, n, idx);
    }
  }
  V project(V a) const { return a; }
};

// ---- all, any (values read as bool) ----

template <bool kAll>
struct LogicalOp : FoldOp<LogicalOp<kAll>, bool, bool> {
  bool identity() const { return kAll; }
  bool step(bool a, bool x, int64_t) const { return kAll ? (a && x) : (a || x); }
  bool combine(bool a, bool b) const { return step(a, b, 0); }
  bool contiguous(const bool* x, int64_t n, int64_t) const {
    for (int64_t i = 0; i < n; ++i) {
      if (x[i] != kAll) return !kAll;
    }
    return kAll;
  }
  bool project(bool a) const { return a; }
};

// ---- norm (torch.linalg.vector_norm) ----

enum class NormKind : uint8_t { Two, One, Inf, NegInf, Zero, General };

template <class V, NormKind kKind>
struct NormOp : FoldOp<NormOp<V, kKind>, V, V> {
  V p = 2;  // the order, for General

  V identity() const { return kKind == NormKind::NegInf ? std::numeric_limits<V>::infinity() : V(0); }
  V step(V a, V x, int64_t) const {
    const V ax = std::fabs(x);
    switch (kKind) {
      case NormKind::Two: return a + x * x;
      case NormKind::One: return a + ax;
      case NormKind::Inf: return max_nan(a, ax);
      case NormKind::NegInf: return min_nan(a, ax);
      case NormKind::Zero: return a + (x != V(0) ? V(1) : V(0));
      case NormKind::General: return a + std::pow(ax, p);
    }
    return a;
  }
  V combine(V a, V b) const {
    if constexpr (kKind == NormKind::Inf) return max_nan(a, b);
    else if constexpr (kKind == NormKind::NegInf) return min_nan(a, b);
    else return a + b;
  }
  V contiguous(const V* x, int64_t n, int64_t idx) const {
    if constexpr (std::is_same_v<V, float> && kKind == NormKind::Two) {
      return vec_sum_map(x, n, [](vec::VecF v) { return v * v; });
    } else if constexpr (std::is_same_v<V, float> && kKind == NormKind::One) {
      return vec_sum_map(x, n, [](vec::VecF v) { return vec::abs(v); });
    } else {
      return FoldOp<NormOp, V, V>::contiguous(x, n, idx);
    }
  }
  V project(V a) const {
    if constexpr (kKind == NormKind::Two) return std::sqrt(a);
    else if constexpr (kKind == NormKind::General) return std::pow(a, V(1) / p);
    else return a;
  }
};

// ---- var, std (Welford, in double) ----

struct Welford {
  double mean = 0, m2 = 0;
  int64_t n = 0;
};

template <class V>
struct VarOp : FoldOp<VarOp<V>, V, Welford> {
  int64_t correction = 1;
  bool take_sqrt = false;

  Welford identity() const { return {}; }
  Welford step(Welford a, V x, int64_t) const {
    const double v = static_cast<double>(x);
    a.n += 1;
    const double d = v - a.mean;
    a.mean += d / static_cast<double>(a.n);
    a.m2 += d * (v - a.mean);
    return a;
  }
  Welford combine(Welford a, Welford b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double na = static_cast<double>(a.n), nb = static_cast<double>(b.n), n = na + nb;
    const double d = b.mean - a.mean;
    return {a.mean + d * (nb / n), a.m2 + b.m2 + d * d * (na * nb / n), a.n + b.n};
  }
  // A run in cache: the mean first, then the squared deviations from it.
  Welford contiguous(const V* x, int64_t n, int64_t) const {
    if (n == 0) return {};
    double s[4] = {0, 0, 0, 0};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      for (int u = 0; u < 4; ++u) s[u] += static_cast<double>(x[i + u]);
    }
    for (; i < n; ++i) s[0] += static_cast<double>(x[i]);
    const double mean = ((s[0] + s[1]) + (s[2] + s[3])) / static_cast<double>(n);
    double q[4] = {0, 0, 0, 0};
    for (i = 0; i + 4 <= n; i += 4) {
      for (int u = 0; u < 4; ++u) {
        const double d = static_cast<double>(x[i + u]) - mean;
        q[u] += d * d;
      }
    }
    for (; i < n; ++i) {
      const double d = static_cast<double>(x[i]) - mean;
      q[0] += d * d;
    }
    return {mean, (q[0] + q[1]) + (q[2] + q[3]), n};
  }
  // m2 / max(0, n - correction): 0/0 is NaN and m2/0 is inf, as in PyTorch.
  double project(Welford a) const {
    const double dof = std::max(0.0, static_cast<double>(a.n) - static_cast<double>(correction));
    const double v = a.m2 / dof;
    return take_sqrt ? std::sqrt(v) : v;
  }
};

// ---- logsumexp ----

template <class V>
struct LseAcc {
  V m;  // the running max
  V s;  // sum of exp(x - m)
};

// exp on one value: the vec_math algorithm for float (same bits as the vector path).
template <class V>
inline V exp_one(V x) {
  if constexpr (std::is_same_v<V, float>) return vec::exp(x);
  else return std::exp(x);
}

template <class V>
struct LogSumExpOp : FoldOp<LogSumExpOp<V>, V, LseAcc<V>> {
  using Acc = LseAcc<V>;
  static constexpr V kNegInf = -std::numeric_limits<V>::infinity();

  Acc identity() const { return {kNegInf, V(0)}; }
  // One exp per element: the smaller of (m, x) is scaled against the larger.
  // Equal values (also both inf) count 1 each; a NaN makes the max NaN.
  Acc step(Acc a, V x, int64_t) const {
    const V m = max_nan(a.m, x);
    const V e = a.m == x ? V(1) : exp_one((a.m < x ? a.m : x) - m);
    return {m, x > a.m ? a.s * e + V(1) : a.s + e};
  }
  Acc combine(Acc a, Acc b) const {
    const V m = max_nan(a.m, b.m);
    const V ea = a.m == m ? V(1) : exp_one(a.m - m);
    const V eb = b.m == m ? V(1) : exp_one(b.m - m);
    return {m, a.s * ea + b.s * eb};
  }
  // Two passes over a run in cache: its max, then the sum of exp(x - max).
  Acc contiguous(const V* x, int64_t n, int64_t) const {
    if (n == 0) return identity();
    const V m = ExtremumOp<V, true>{}.contiguous(x, n, 0);
    if (!std::isfinite(m)) {  // NaN, or a max of ±inf: count the elements equal to it
      Acc a = identity();
      for (int64_t i = 0; i < n; ++i) a = step(a, x[i], 0);
      return a;
    }
    V s = 0;
    if constexpr (std::is_same_v<V, float>) {
      using vec::VecF;
      constexpr int64_t L = VecF::kLanes;
      const VecF vm(m);
      VecF a[4] = {VecF(0.0f), VecF(0.0f), VecF(0.0f), VecF(0.0f)};
      int64_t i = 0;
      for (; i + 4 * L <= n; i += 4 * L) {
        for (int u = 0; u < 4; ++u) a[u] = a[u] + vec::exp(VecF::load(x + i + u * L) - vm);
      }
      for (; i + L <= n; i += L) a[0] = a[0] + vec::exp(VecF::load(x + i) - vm);
      a[0] = (a[0] + a[1]) + (a[2] + a[3]);
      float lanes[L];
      a[0].store(lanes);
      for (int64_t w = L / 2; w > 0; w /= 2) {
        for (int64_t u = 0; u < w; ++u) lanes[u] += lanes[u + w];
      }
      s = lanes[0];
      for (; i < n; ++i) s += vec::exp(x[i] - m);
    } else {
      V a[4] = {0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 4 <= n; i += 4) {
        for (int u = 0; u < 4; ++u) a[u] += std::exp(x[i + u] - m);
      }
      for (; i < n; ++i) a[0] += std::exp(x[i] - m);
      s = (a[0] + a[1]) + (a[2] + a[3]);
    }
    return {m, s};
  }
  // The column fold of step(), on vector lanes for float.
  void columns(Acc* acc, const V* x, int64_t n, int64_t idx) const {
    int64_t j = 0;
    if constexpr (std::is_same_v<V, float>) {
      using vec::VecF;
      constexpr int64_t L = VecF::kLanes;
      float ms[L], ss[L];
      for (; j + L <= n; j += L) {
        for (int64_t l = 0; l < L; ++l) {
          ms[l] = acc[j + l].m;
          ss[l] = acc[j + l].s;
        }
        const VecF am = VecF::load(ms), as = VecF::load(ss), vx = VecF::load(x + j);
        const VecF m = vec::max(am, vx);
        const VecF e = vec::blend(am == vx, VecF(1.0f), vec::exp(vec::blend(am < vx, am, vx) - m));
        const VecF s = vec::blend(vx > am, vec::fma(as, e, VecF(1.0f)), as + e);
        m.store(ms);
        s.store(ss);
        for (int64_t l = 0; l < L; ++l) acc[j + l] = {ms[l], ss[l]};
      }
    }
    for (; j < n; ++j) acc[j] = step(acc[j], x[j], idx);
  }
  V project(Acc a) const { return a.m + std::log(a.s); }
};

// ---- max(dim), min(dim), argmax, argmin ----

template <class V>
struct ArgAcc {
  V v;
  int64_t i;  // -1: nothing folded yet
};

template <class V, bool kMax>
struct ArgOp : FoldOp<ArgOp<V, kMax>, V, ArgAcc<V>> {
  using Acc = ArgAcc<V>;

  // Is b preferred over a? The larger (smaller) value, the first NaN, ties to the lower index.
  static bool better(const Acc& b, const Acc& a) {
    if (a.i < 0) return b.i >= 0;
    if (b.i < 0) return false;
    if constexpr (is_float_v<V>) {
      const bool an = a.v != a.v, bn = b.v != b.v;
      if (an || bn) return an && bn ? b.i < a.i : bn;
    }
    if (b.v != a.v) return kMax ? b.v > a.v : b.v < a.v;
    return b.i < a.i;
  }
  Acc identity() const { return {V(), -1}; }
  Acc step(Acc a, V x, int64_t idx) const {
    const Acc b{x, idx};
    return better(b, a) ? b : a;
  }
  Acc combine(Acc a, Acc b) const { return better(b, a) ? b : a; }
  // In index order: a strictly better value replaces the best; the first NaN ends the scan.
  Acc contiguous(const V* x, int64_t n, int64_t idx) const {
    if (n == 0) return identity();
    Acc best{x[0], idx};
    if constexpr (is_float_v<V>) {
      if (x[0] != x[0]) return best;
    }
    for (int64_t i = 1; i < n; ++i) {
      const V v = x[i];
      if constexpr (is_float_v<V>) {
        if (v != v) return {v, idx + i};
      }
      if (kMax ? v > best.v : v < best.v) best = {v, idx + i};
    }
    return best;
  }
  Acc project(Acc a) const { return a; }
};

}  // namespace ember::cpu::reduce
