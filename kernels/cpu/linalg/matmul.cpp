// Matrix products on CPU: mm, bmm, addmm (the GEMM family) and dot, mv.
//
// Note [One routine behind mm, addmm and bmm]
// All three are "C[b] = alpha * A[b] B[b] + beta * C[b] for each matrix b of a
// batch" (mm: one matrix, beta 0; addmm: C starts as self broadcast to the
// result; bmm: many matrices). gemm_batch runs that over strided matrices:
//  - float32/float64 call cpu::gemm_f32/gemm_f64 with the operands' own
//    strides, so transposed and sliced inputs are never copied;
//  - bfloat16 calls cpu::gemm_bf16 (AMX or AVX-512 BF16, float32
//    accumulator) with the operands' own strides where the CPU has bf16
//    instructions; float16, and bfloat16 elsewhere, are widened to float32
//    copies and multiplied by gemm_f32. Either way the float32 result is
//    rounded once on store, as PyTorch's CPU kernels do;
//  - integers use gemm_integer, a plain loop in wrapping unsigned arithmetic
//    (overflow wraps as in PyTorch, without signed-overflow UB).
// A batch of small matrices is split over threads by matrix (each product
// then runs on one thread); a batch of large ones runs matrix after matrix,
// each GEMM using every thread. Either way every element of C is computed by
// the same sequence of operations, so results do not depend on the thread count.
//
// dot and mv read each input once and are memory-bound: they use dot_lanes, a
// loop with kLanes independent accumulators (vectorisable, and combined in a
// fixed order), instead of the GEMM.
#include <algorithm>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/linalg/gemm_bf16.h"
#include "kernels/matmul_checks.h"

namespace ember {
namespace {

// ---- strided batches of matrices ----

// Element (i, j) of matrix b is at data[b * bs + i * rs + j * cs].
struct Layout {
  int64_t bs, rs, cs;
};

// The layout of a 2-D (one matrix) or 3-D (a batch) tensor.
Layout layout_of(const Tensor& t) {
  if (t.dim() == 3) return {t.stride(0), t.stride(1), t.stride(2)};
  return {0, t.stride(0), t.stride(1)};
}

Layout contiguous_layout(int64_t rows, int64_t cols) { return {rows * cols, cols, 1}; }

// The unsigned type integer products wrap in (uint32 also for uint8: the
// low 8 bits of a sum mod 2^32 are the sum mod 2^8).
template <class T>
using wrap_t = std::conditional_t<sizeof(T) <= 4, uint32_t, uint64_t>;

// The type a product of T accumulates in.
template <class T>
using acc_t = std::conditional_t<std::is_integral_v<T>, wrap_t<T>, opmath_t<T>>;

// Work (multiply-adds) below which one thread does a whole GEMM or loop:
// waking the pool costs more than it saves (the same bound gemm.cpp uses).
constexpr double kSerialWork = 64.0 * 64 * 64;

// Rows per parallel chunk so that a chunk holds about kSerialWork
// multiply-adds of `work_per_row`; fixed by the shape, never by the thread count.
int64_t rows_per_chunk(int64_t work_per_row) {
  return std::max<int64_t>(1, static_cast<int64_t>(kSerialWork) / std::max<int64_t>(1, work_per_row));
}

// C = alpha * A B + beta * C for integer T, with gemm_f32's contract
// (A: (m, k), B: (k, n), C: (m, n); beta == 0 means C is not read).
template <class T>
void gemm_integer(int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t a_rs, int64_t a_cs, const T* b,
                  int64_t b_rs, int64_t b_cs, T beta, T* c, int64_t c_rs, int64_t c_cs) {
  using U = wrap_t<T>;
  if (m <= 0 || n <= 0) return;
  parallel_for(0, m, rows_per_chunk(n * std::max<int64_t>(k, 1)), [&](int64_t i0, int64_t i1) {
    std::vector<U> acc(static_cast<size_t>(n));
    for (int64_t i = i0; i < i1; ++i) {
      std::fill(acc.begin(), acc.end(), U(0));
      for (int64_t p = 0; p < k; ++p) {
        const U av = static_cast<U>(a[i * a_rs + p * a_cs]);
        const T* brow = b + p * b_rs;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * static_cast<U>(brow[j * b_cs]);
      }
      for (int64_t j = 0; j < n; ++j) {
        T& out = c[i * c_rs + j * c_cs];
        U r = static_cast<U>(alpha) * acc[j];
        if (beta != 0) r += static_cast<U>(beta) * static_cast<U>(out);
        out = static_cast<T>(r);
      }
    }
  });
}

// One matrix: C (m, n) = alpha * A (m, k) B (k, n) + beta * C, with C and the
// scalars in Acc: T itself, or float for BFloat16 operands.
template <class T, class Acc>
void gemm_one(int64_t m, int64_t n, int64_t k, Acc alpha, const T* a, Layout la, const T* b, Layout lb, Acc beta,
              Acc* c, Layout lc) {
  if constexpr (std::is_same_v<T, float>) {
    cpu::gemm_f32(m, n, k, alpha, a, la.rs, la.cs, b, lb.rs, lb.cs, beta, c, lc.rs, lc.cs);
  } else if constexpr (std::is_same_v<T, double>) {
    cpu::gemm_f64(m, n, k, alpha, a, la.rs, la.cs, b, lb.rs, lb.cs, beta, c, lc.rs, lc.cs);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    cpu::gemm_bf16(m, n, k, alpha, a, la.rs, la.cs, b, lb.rs, lb.cs, beta, c, lc.rs, lc.cs);
  } else {
    gemm_integer<T>(m, n, k, alpha, a, la.rs, la.cs, b, lb.rs, lb.cs, beta, c, lc.rs, lc.cs);
  }
}

// Every matrix of a batch: C[b] (m, n) = alpha * A[b] (m, k) B[b] (k, n) + beta * C[b].
// T is float, double, an integer type (Acc = T) or BFloat16 (Acc = float).
template <class T, class Acc = T>
void gemm_batch(int64_t batch, int64_t m, int64_t n, int64_t k, Acc alpha, const T* a, Layout la, const T* b,
                Layout lb, Acc beta, Acc* c, Layout lc) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) {
      gemm_one<T, Acc>(m, n, k, alpha, a + i * la.bs, la, b + i * lb.bs, lb, beta, c + i * lc.bs, lc);
    }
  };
  const int64_t work = m * n * std::max<int64_t>(k, 1);
  if (batch == 1 || static_cast<double>(work) >= kSerialWork) {
    run(0, batch);  // each GEMM uses the threads itself
  } else {
    parallel_for(0, batch, rows_per_chunk(work), run);  // nested GEMMs run inline
  }
}

// A contiguous float32 copy of a batch of (rows, cols) matrices of T.
template <class T>
std::unique_ptr<float[]> widen(const T* src, Layout l, int64_t batch, int64_t rows, int64_t cols) {
  auto out = std::make_unique_for_overwrite<float[]>(static_cast<size_t>(std::max<int64_t>(1, batch * rows * cols)));
  float* dst = out.get();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < rows; ++i) {
      const T* row = src + b * l.bs + i * l.rs;
      for (int64_t j = 0; j < cols; ++j) *dst++ = static_cast<float>(row[j * l.cs]);
    }
  }
  return out;
}

// Elements per parallel chunk of the final rounding to float16/bfloat16 (each
// element on its own, so any split gives the same bits).
constexpr int64_t kRoundChunk = 1 << 16;

// Float32 C (contiguous) = alpha * A B + beta * C for Half or BFloat16 operands:
// bf16 ones go to the bf16 GEMM where the CPU has one, the rest are widened to
// float32 copies first.
template <class T>
void low_precision_gemm_batch(int64_t batch, int64_t m, int64_t n, int64_t k, float alpha, const T* a, Layout la,
                              const T* b, Layout lb, float beta, float* c) {
  const Layout lc = contiguous_layout(m, n);
  if constexpr (std::is_same_v<T, BFloat16>) {
    if (cpu::gemm_bf16_available()) {
      gemm_batch<T, float>(batch, m, n, k, alpha, a, la, b, lb, beta, c, lc);
      return;
    }
  }
  const auto fa = widen(a, la, batch, m, k), fb = widen(b, lb, batch, k, n);
  gemm_batch<float>(batch, m, n, k, alpha, fa.get(), contiguous_layout(m, k), fb.get(), contiguous_layout(k, n),
                    beta, c, lc);
}

// The GEMM family for any numeric T; C is contiguous (batch, m, n).
template <class T>
void matmul_into(int64_t batch, int64_t m, int64_t n, int64_t k, const Scalar& alpha, const T* a, Layout la,
                 const T* b, Layout lb, const Scalar& beta, T* c) {
  const Layout lc = contiguous_layout(m, n);
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    // Multiply into a float32 accumulator, round once.
    if (batch * m * n == 0) return;
    const float fbeta = beta.to<float>();
    const auto fc = fbeta == 0 ? std::make_unique_for_overwrite<float[]>(static_cast<size_t>(batch * m * n))
                               : widen(c, lc, batch, m, n);
    low_precision_gemm_batch(batch, m, n, k, alpha.to<float>(), a, la, b, lb, fbeta, fc.get());
    parallel_for(0, batch * m * n, kRoundChunk, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) c[i] = T(fc[i]);
    });
  } else {
    gemm_batch<T>(batch, m, n, k, alpha.to<T>(), a, la, b, lb, beta.to<T>(), c, lc);
  }
}

// ---- mm, addmm, bmm ----

// mm: (n, k) (k, m) -> (n, m)
Tensor mm_cpu(const Tensor& a, const Tensor& b) {
  check_mm_shapes("mm", a, b);
  check_product_operands("mm", "m1", a, "m2", b);
  Tensor out = make_empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  dispatch_dtype(a.dtype(), "mm", [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      matmul_into<T>(1, a.size(0), b.size(1), a.size(1), 1, a.data_ptr<T>(), layout_of(a), b.data_ptr<T>(),
                     layout_of(b), 0, out.data_ptr<T>());
    }
  });
  return out;
}

// addmm: beta * self + alpha * (n, k) (k, m) -> (n, m); self broadcasts to (n, m).
Tensor addmm_cpu(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta, const Scalar& alpha) {
  check_mm_shapes("addmm", m1, m2);
  check_product_operands("addmm", "mat1", m1, "mat2", m2);
  check_product_operands("addmm", "self", self, "mat1", m1);
  const int64_t n = m1.size(0), m = m2.size(1);
  const BroadcastMatrix s_view = addmm_self_as_result(self, m1, m2);
  Tensor out = make_empty({n, m}, m1.dtype(), m1.device());
  const bool use_self = beta.to<double>() != 0;
  dispatch_dtype(m1.dtype(), "addmm", [&]<class T>() {
    if constexpr (std::is_integral_v<T>) {
      EMBER_CHECK(!beta.is_floating_point() && !alpha.is_floating_point(), "addmm: for ", m1.dtype(),
                  " tensors beta and alpha must be integers, but got beta ", beta, " and alpha ", alpha);
    }
    if constexpr (!std::is_same_v<T, bool>) {
      T* c = out.data_ptr<T>();
      if (use_self) {  // beta == 0 ignores self, NaN included
        const T* s = self.data_ptr<T>();
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t j = 0; j < m; ++j) c[i * m + j] = s[i * s_view.row_stride + j * s_view.col_stride];
        }
      }
      matmul_into<T>(1, n, m, m1.size(1), alpha, m1.data_ptr<T>(), layout_of(m1), m2.data_ptr<T>(),
                     layout_of(m2), use_self ? beta : Scalar(0), c);
    }
  });
  return out;
}

// bmm: (B, n, k) (B, k, m) -> (B, n, m)
Tensor bmm_cpu(const Tensor& a, const Tensor& b) {
  check_bmm_shapes(a, b);
  check_product_operands("bmm", "batch1", a, "batch2", b);
  Tensor out = make_empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  dispatch_dtype(a.dtype(), "bmm", [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      matmul_into<T>(a.size(0), a.size(1), b.size(2), a.size(2), 1, a.data_ptr<T>(), layout_of(a),
                     b.data_ptr<T>(), layout_of(b), 0, out.data_ptr<T>());
    }
  });
  return out;
}

// ---- dot, mv ----

// sum_i a[i * sa] * b[i * sb] in Acc, with kLanes partial sums (lane l takes
// i = l mod kLanes) folded pairwise: the order is fixed by n alone.
constexpr int kLanes = 32;

template <class T, class Acc>
Acc dot_lanes(const T* a, int64_t sa, const T* b, int64_t sb, int64_t n) {
  Acc acc[kLanes] = {};
  int64_t i = 0;
  if (sa == 1 && sb == 1) {
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) acc[l] += static_cast<Acc>(a[i + l]) * static_cast<Acc>(b[i + l]);
    }
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        acc[l] += static_cast<Acc>(a[(i + l) * sa]) * static_cast<Acc>(b[(i + l) * sb]);
      }
    }
  }
  for (int l = 0; i < n; ++i, ++l) acc[l] += static_cast<Acc>(a[i * sa]) * static_cast<Acc>(b[i * sb]);
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
  }
  return acc[0];
}

// Elements per dot chunk: chunks run in parallel, their sums are added in order.
constexpr int64_t kDotChunk = 1 << 15;

// dot: (n) (n) -> ()
Tensor dot_cpu(const Tensor& a, const Tensor& b) {
  check_dot_shapes(a, b);
  check_product_operands("dot", "self", a, "other", b);
  Tensor out = make_empty(IntArrayRef(), a.dtype(), a.device());
  dispatch_dtype(a.dtype(), "dot", [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      using Acc = acc_t<T>;
      const T* pa = a.data_ptr<T>();
      const T* pb = b.data_ptr<T>();
      const int64_t n = a.size(0), sa = a.stride(0), sb = b.stride(0);
      const int64_t chunks = (n + kDotChunk - 1) / kDotChunk;
      std::vector<Acc> partial(static_cast<size_t>(std::max<int64_t>(chunks, 1)), Acc(0));
      parallel_for(0, chunks, 1, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          const int64_t begin = c * kDotChunk, len = std::min(kDotChunk, n - begin);
          partial[c] = dot_lanes<T, Acc>(pa + begin * sa, sa, pb + begin * sb, sb, len);
        }
      });
      Acc sum = partial[0];
      for (int64_t c = 1; c < chunks; ++c) sum += partial[c];
      *out.data_ptr<T>() = static_cast<T>(sum);
    }
  });
  return out;
}

// Rows per block of the column-order mv loop (their sums stay in L1).
constexpr int64_t kMvRowBlock = 512;

// mv: (n, k) (k) -> (n)
Tensor mv_cpu(const Tensor& mat, const Tensor& vec) {
  check_mv_shapes(mat, vec);
  check_product_operands("mv", "self", mat, "vec", vec);
  const int64_t n = mat.size(0), k = mat.size(1);
  Tensor out = make_empty({n}, mat.dtype(), mat.device());
  dispatch_dtype(mat.dtype(), "mv", [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      using Acc = acc_t<T>;
      const T* m = mat.data_ptr<T>();
      const T* v = vec.data_ptr<T>();
      T* y = out.data_ptr<T>();
      const int64_t rs = mat.stride(0), cs = mat.stride(1), vs = vec.stride(0);
      if (rs == 1 && cs != 1 && k > 1) {
        // Columns are contiguous: y += m[:, p] * v[p] for p in order, a block of rows at a time.
        const int64_t block_rows = std::max(kMvRowBlock, rows_per_chunk(k));
        parallel_for(0, n, block_rows, [&](int64_t i0, int64_t i1) {
          for (int64_t r0 = i0; r0 < i1; r0 += kMvRowBlock) {
            const int64_t r1 = std::min(i1, r0 + kMvRowBlock);
            Acc acc[kMvRowBlock] = {};
            for (int64_t p = 0; p < k; ++p) {
              const Acc vp = static_cast<Acc>(v[p * vs]);
              const T* col = m + p * cs + r0;
              for (int64_t i = 0; i < r1 - r0; ++i) acc[i] += static_cast<Acc>(col[i]) * vp;
            }
            for (int64_t i = r0; i < r1; ++i) y[i] = static_cast<T>(acc[i - r0]);
          }
        });
      } else {
        parallel_for(0, n, rows_per_chunk(k), [&](int64_t i0, int64_t i1) {
          for (int64_t i = i0; i < i1; ++i) y[i] = static_cast<T>(dot_lanes<T, Acc>(m + i * rs, cs, v, vs, k));
        });
      }
    }
  });
  return out;
}

}  // namespace

void register_cpu_matmul_kernels() {
  op::mm.impl(DispatchKey::CPU, kNumericDTypes, &mm_cpu, "cpu::mm");
  op::addmm.impl(DispatchKey::CPU, kNumericDTypes, &addmm_cpu, "cpu::addmm");
  op::bmm.impl(DispatchKey::CPU, kNumericDTypes, &bmm_cpu, "cpu::bmm");
  op::dot.impl(DispatchKey::CPU, kNumericDTypes, &dot_cpu, "cpu::dot");
  op::mv.impl(DispatchKey::CPU, kNumericDTypes, &mv_cpu, "cpu::mv");
}

}  // namespace ember
