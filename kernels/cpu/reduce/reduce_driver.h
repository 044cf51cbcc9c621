// Reductions on CPU, part 2: the loops that run a reduction op over a plan
// (Note [Reduction geometry] in reduce_plan.h).
//
// An op (reduce_ops.h) folds values of its value_t into an acc_t:
//   acc_t identity()                           the fold of nothing
//   acc_t step(acc_t a, value_t x, int64 i)    a with x (the i-th reduced element) folded in
//   acc_t combine(acc_t a, acc_t b)            two partial folds; a covers earlier elements
//   acc_t contiguous(const value_t* x, n, i0)  a contiguous run (vectorised where it pays)
//   void columns(acc_t* acc, const value_t* x, n, i)   acc[j] = step(acc[j], x[j], i)
// Inputs stored as f16/bf16 (or any dtype an op reads as another, e.g. all()
// reads bool) are converted in blocks before contiguous() and columns().
//
// Note [Deterministic reduction order]
// Which elements are folded together, and in which order partials are
// combined, depends only on the shapes, never on the thread count:
//  - Rows: an output whose reduction has at most kChunk elements is folded
//    by one task; a longer one is cut into chunks of kChunk elements whose
//    partials are combined as a balanced binary tree in chunk order (this
//    also keeps float sums accurate: 16M floats are 1024 chunk partials,
//    each the sum of 8 vector accumulators).
//  - Columns: a task folds input rows into up to kColumnBlock accumulators
//    (one per output), a group of kRowGroup rows at a time (each group
//    folded on its own, then combined into the total). With fewer than
//    kMinColumnTasks tasks, the rows are cut into fixed chunks (a whole
//    number of groups, sized from the shape) whose partial rows are combined
//    as a tree, elementwise.
// Tasks are handed to parallel_for in fixed units, so 1 and 2 threads give
// the same bits.
#pragma once

#include <algorithm>
#include <memory>
#include <type_traits>

#include "core/dtype_dispatch.h"
#include "ember/allocator.h"
#include "ember/parallel.h"
#include "kernels/cpu/reduce/reduce_plan.h"
#include "kernels/cpu/vec/vec.h"  // before <immintrin.h>: vec.h includes it with GCC 12 AVX-512 warnings silenced

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ember::cpu::reduce {

inline constexpr int64_t kChunk = 16384;       // elements of one output's reduction per task
inline constexpr int64_t kColumnBlock = 4096;  // outputs per Columns task
inline constexpr int64_t kRowGroup = 64;       // rows folded apart before joining the total
inline constexpr int64_t kMinColumnTasks = 8;  // fewer Columns tasks than this: split the rows
inline constexpr int64_t kConvertBlock = 512;  // elements converted at a time (f16, bf16, ...)

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The type an op computes in for a stored type: float for f16/bf16.
template <class T>
using value_t = opmath_t<T>;

template <class V, class T>
inline V load_value(T x) {
  if constexpr (std::is_same_v<V, T>) return x;
  else if constexpr (std::is_same_v<V, bool>) return static_cast<opmath_t<T>>(x) != opmath_t<T>(0);
  else return static_cast<V>(static_cast<opmath_t<T>>(x));
}

// out[i] = load_value<V>(p[i]) for n elements.
template <class T, class V>
inline void load_block(const T* p, V* out, int64_t n) {
#if defined(__F16C__)
  if constexpr (std::is_same_v<T, Half> && std::is_same_v<V, float>) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    for (; i < n; ++i) out[i] = _cvtsh_ss(p[i].bits);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = load_value<V>(p[i]);
}

// Scratch for n partial results, from the CPU caching allocator: a fresh
// block would cost a page fault per 4 KiB on every call.
template <class A>
class PartialBuffer {
 public:
  static_assert(std::is_trivially_copyable_v<A> && std::is_trivially_destructible_v<A>);
  explicit PartialBuffer(int64_t n)
      : data_(get_allocator(Device::cpu())->allocate(static_cast<size_t>(n) * sizeof(A))) {}
  A* get() const { return static_cast<A*>(data_.get()); }
  A& operator[](int64_t i) const { return get()[i]; }

 private:
  DataPtr data_;
};

// Combines p[0..n) as a balanced binary tree, left to right.
template <class Op>
typename Op::acc_t combine_tree(const Op& op, const typename Op::acc_t* p, int64_t n) {
  if (n == 1) return p[0];
  const int64_t h = n / 2;
  return op.combine(combine_tree(op, p, h), combine_tree(op, p + h, n - h));
}

// Walks the kept dims [first, nk) of a plan from a starting output.
class KeptCounter {
 public:
  KeptCounter(const ReducePlan& p, int64_t start, int first) : p_(p), first_(first) {
    int64_t o = start;
    for (int d = first; d < p.nk; ++d) {
      idx_[d] = o % p.ksize[d];
      o /= p.ksize[d];
      in += idx_[d] * p.kin[d];
      out += idx_[d] * p.kout[d];
    }
  }
  void next() {
    for (int d = first_; d < p_.nk; ++d) {
      in += p_.kin[d];
      out += p_.kout[d];
      if (++idx_[d] < p_.ksize[d]) return;
      in -= idx_[d] * p_.kin[d];
      out -= idx_[d] * p_.kout[d];
      idx_[d] = 0;
    }
  }
  int64_t in = 0, out = 0;  // element offsets of the current output

 private:
  const ReducePlan& p_;
  int first_;
  int64_t idx_[kMaxDims];
};

// Walks the reduced dims from a linear reduced index: `off` is its input offset.
class ReducedCounter {
 public:
  ReducedCounter(const ReducePlan& p, int64_t start) : p_(p) {
    int64_t r = start;
    for (int d = 0; d < p.nr; ++d) {
      idx_[d] = r % p.rsize[d];
      r /= p.rsize[d];
      off += idx_[d] * p.rin[d];
    }
  }
  int64_t inner() const { return idx_[0]; }
  // Moves n elements on along the innermost dim (n <= what is left of it).
  void advance(int64_t n) {
    idx_[0] += n;
    off += n * p_.rin[0];
    for (int d = 0; d + 1 < p_.nr && idx_[d] == p_.rsize[d]; ++d) {
      off -= idx_[d] * p_.rin[d];
      idx_[d] = 0;
      ++idx_[d + 1];
      off += p_.rin[d + 1];
    }
  }
  int64_t off = 0;

 private:
  const ReducePlan& p_;
  int64_t idx_[kMaxDims];
};

template <class T, class Op, class Write>
class ReduceRun {
 public:
  using V = typename Op::value_t;
  using acc_t = typename Op::acc_t;

  ReduceRun(const ReducePlan& p, const T* in, const Op& op, const Write& write)
      : p_(p), in_(in), op_(op), write_(write) {}

  void run() const {
    if (p_.num_outputs == 0) return;
    if (p_.num_reduced == 0) {
      parallel_for(0, p_.num_outputs, 32768, [&](int64_t b, int64_t e) {
        KeptCounter kc(p_, b, 0);
        for (int64_t o = b; o < e; ++o, kc.next()) write_(kc.out, op_.identity());
      });
      return;
    }
    if (p_.path == ReducePath::Columns) columns();
    else rows();
  }

 private:
  // ---- Rows ----

  acc_t fold_contiguous(const T* x, int64_t n, int64_t idx) const {
    if constexpr (std::is_same_v<T, V>) {
      return op_.contiguous(x, n, idx);
    } else {
      V buf[kConvertBlock];
      acc_t acc = op_.identity();
      for (int64_t off = 0; off < n; off += kConvertBlock) {
        const int64_t m = std::min(kConvertBlock, n - off);
        load_block(x + off, buf, m);
        acc = op_.combine(acc, op_.contiguous(buf, m, idx + off));
      }
      return acc;
    }
  }

  acc_t fold_strided(const T* x, int64_t stride, int64_t n, int64_t idx) const {
    acc_t a0 = op_.identity(), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      a0 = op_.step(a0, load_value<V>(x[i * stride]), idx + i);
      a1 = op_.step(a1, load_value<V>(x[(i + 1) * stride]), idx + i + 1);
      a2 = op_.step(a2, load_value<V>(x[(i + 2) * stride]), idx + i + 2);
      a3 = op_.step(a3, load_value<V>(x[(i + 3) * stride]), idx + i + 3);
    }
    for (; i < n; ++i) a0 = op_.step(a0, load_value<V>(x[i * stride]), idx + i);
    return op_.combine(op_.combine(a0, a1), op_.combine(a2, a3));
  }

  acc_t fold_run(const T* x, int64_t n, int64_t idx) const {
    return p_.rin[0] == 1 ? fold_contiguous(x, n, idx) : fold_strided(x, p_.rin[0], n, idx);
  }

  // Folds the reduced elements [r0, r1) of the output whose input starts at base.
  acc_t fold_range(const T* base, int64_t r0, int64_t r1) const {
    if (p_.nr == 1) return fold_run(base + r0 * p_.rin[0], r1 - r0, r0);
    ReducedCounter rc(p_, r0);
    acc_t acc = op_.identity();
    for (int64_t r = r0; r < r1;) {
      const int64_t n = std::min(p_.rsize[0] - rc.inner(), r1 - r);
      acc = op_.combine(acc, fold_run(base + rc.off, n, r));
      rc.advance(n);
      r += n;
    }
    return acc;
  }

  void rows() const {
    const int64_t K = p_.num_outputs, R = p_.num_reduced;
    if (R <= kChunk) {
      parallel_for(0, K, std::max<int64_t>(1, kChunk / R), [&](int64_t b, int64_t e) {
        KeptCounter kc(p_, b, 0);
        for (int64_t o = b; o < e; ++o, kc.next()) write_(kc.out, fold_range(in_ + kc.in, 0, R));
      });
      return;
    }
    const int64_t nch = ceil_div(R, kChunk);
    PartialBuffer<acc_t> part(K * nch);
    parallel_for(0, K * nch, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / nch, c = t % nch;
        int64_t in_off, out_off;
        p_.kept_offsets(o, 0, in_off, out_off);
        part[t] = fold_range(in_ + in_off, c * kChunk, std::min(R, (c + 1) * kChunk));
      }
    });
    parallel_for(0, K, std::max<int64_t>(1, kChunk / nch), [&](int64_t b, int64_t e) {
      KeptCounter kc(p_, b, 0);
      for (int64_t o = b; o < e; ++o, kc.next()) write_(kc.out, combine_tree(op_, part.get() + o * nch, nch));
    });
  }

  // ---- Columns ----

  struct Block {
    int64_t j0, width, out_off;
  };

  // Folds reduced rows [r0, r1) of Columns task `task` into acc[0, width);
  // `group` and `buf` are scratch of at least that width.
  Block fold_columns(int64_t task, int64_t nblocks, int64_t r0, int64_t r1, acc_t* acc, acc_t* group, V* buf) const {
    const int64_t o = task / nblocks, j0 = (task % nblocks) * kColumnBlock;
    const int64_t w = std::min(kColumnBlock, p_.ksize[0] - j0);
    int64_t in_off, out_off;
    p_.kept_offsets(o, 1, in_off, out_off);
    const T* base = in_ + in_off + j0;
    const acc_t id = op_.identity();
    std::fill(acc, acc + w, id);
    // A range of one group folds straight into acc.
    acc_t* g = r1 - r0 <= kRowGroup ? acc : group;
    if (g != acc) std::fill(g, g + w, id);
    ReducedCounter rc(p_, r0);
    for (int64_t r = r0; r < r1;) {
      // Groups start at multiples of kRowGroup from r0.
      const int64_t group_end = std::min(r1, r + kRowGroup - (r - r0) % kRowGroup);
      int64_t step = 1;
      if constexpr (std::is_same_v<T, V>) {
        // Four rows of the same reduced dim at once, when they lie in this group.
        if (r + 4 <= group_end && rc.inner() + 4 <= p_.rsize[0]) {
          op_.columns4(g, base + rc.off, p_.rin[0], w, r);
          step = 4;
        } else {
          op_.columns(g, base + rc.off, w, r);
        }
      } else {
        load_block(base + rc.off, buf, w);
        op_.columns(g, buf, w, r);
      }
      rc.advance(step);
      r += step;
      if (g != acc && r == group_end) {
        for (int64_t j = 0; j < w; ++j) {
          acc[j] = op_.combine(acc[j], g[j]);
          g[j] = id;
        }
      }
    }
    return {j0, w, out_off + j0 * p_.kout[0]};
  }

  // Scratch for Columns tasks of up to `width` columns: accumulators, a group, converted values.
  struct Scratch {
    explicit Scratch(int64_t width)
        : acc(new acc_t[width]), group(new acc_t[width]), buf(std::is_same_v<T, V> ? nullptr : new V[width]) {}
    std::unique_ptr<acc_t[]> acc, group;
    std::unique_ptr<V[]> buf;
  };

  // rows[first] = the tree combine of rows[first .. first + n), each row w accumulators `stride` apart.
  void combine_rows(acc_t* rows, int64_t stride, int64_t first, int64_t n, int64_t w) const {
    if (n == 1) return;
    const int64_t h = n / 2;
    combine_rows(rows, stride, first, h, w);
    combine_rows(rows, stride, first + h, n - h, w);
    acc_t* a = rows + first * stride;
    const acc_t* b = rows + (first + h) * stride;
    for (int64_t j = 0; j < w; ++j) a[j] = op_.combine(a[j], b[j]);
  }

  void columns() const {
    const int64_t R = p_.num_reduced;
    const int64_t nblocks = ceil_div(p_.ksize[0], kColumnBlock);
    const int64_t tasks = (p_.num_outputs / p_.ksize[0]) * nblocks;
    const int64_t width = std::min(p_.ksize[0], kColumnBlock);
    const int64_t rows_per_chunk = ceil_div(std::max(kRowGroup, kChunk / width), kRowGroup) * kRowGroup;
    const int64_t kout0 = p_.kout[0];
    if (tasks >= kMinColumnTasks || R <= rows_per_chunk) {
      parallel_for(0, tasks, std::max<int64_t>(1, kChunk / (R * width)), [&](int64_t b, int64_t e) {
        Scratch s(width);
        for (int64_t t = b; t < e; ++t) {
          const Block blk = fold_columns(t, nblocks, 0, R, s.acc.get(), s.group.get(), s.buf.get());
          for (int64_t j = 0; j < blk.width; ++j) write_(blk.out_off + j * kout0, s.acc[j]);
        }
      });
      return;
    }
    // Few tasks, many rows: fold chunks of rows apart, then combine the chunks' rows as a tree.
    const int64_t nch = ceil_div(R, rows_per_chunk);
    PartialBuffer<acc_t> part(tasks * nch * width);  // [tasks][nch][width]
    parallel_for(0, tasks * nch, 1, [&](int64_t b, int64_t e) {
      Scratch s(width);
      for (int64_t i = b; i < e; ++i) {
        const int64_t c = i % nch;
        fold_columns(i / nch, nblocks, c * rows_per_chunk, std::min(R, (c + 1) * rows_per_chunk),
                     part.get() + i * width, s.group.get(), s.buf.get());
      }
    });
    parallel_for(0, tasks, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t o = t / nblocks, j0 = (t % nblocks) * kColumnBlock;
        const int64_t w = std::min(kColumnBlock, p_.ksize[0] - j0);
        acc_t* rows = part.get() + t * nch * width;
        combine_rows(rows, width, 0, nch, w);
        int64_t in_off, out_off;
        p_.kept_offsets(o, 1, in_off, out_off);
        for (int64_t j = 0; j < w; ++j) write_(out_off + (j0 + j) * kout0, rows[j]);
      }
    });
  }

  const ReducePlan& p_;
  const T* in_;
  const Op& op_;
  const Write& write_;
};

// Runs `op` over the plan: write(out_offset, acc) receives each output's fold.
template <class T, class Op, class Write>
void run_reduce(const ReducePlan& plan, const T* in, const Op& op, const Write& write) {
  ReduceRun<T, Op, Write>(plan, in, op, write).run();
}

// v converted to an output element type (f16/bf16 through float, bool as v != 0).
template <class O, class X>
inline O cast_to(X v) {
  if constexpr (std::is_same_v<O, Half> || std::is_same_v<O, BFloat16>) return O(static_cast<float>(v));
  else if constexpr (std::is_same_v<O, bool>) return v != X(0);
  else return static_cast<O>(v);
}

}  // namespace ember::cpu::reduce
