// scaled_dot_product_attention on CPU: the fused forward kernel (flash_attention).
// The backward is in attention_backward.cpp; checks and layouts in attention_geometry.cpp.
//
// Note [Flash attention on the CPU]
// softmax(Q K^T * scale + mask) V for one (batch, head) problem: Q [L, E], K [S, E], V [S, Ev].
// The composite writes the L x S score matrix to memory, reads it for the
// softmax, writes P, reads P for the second product: for L = S = 1024 that
// is 4 MiB per head, 256 MiB for 16 x 4 heads, several passes over memory.
// Here a task owns a block of kForwardBlockQ query rows of one problem and
// walks the keys in blocks of kForwardBlockK:
//   S_tile = scale * Q_blk K_blk^T           (GEMM, tile stays in L2)
//   S_tile += mask (bool: false -> -inf; causal: key j > query i -> -inf)
//   per row: m' = max(m, max S_row); P_row = exp(S_row - m');
//            l = l * exp(m - m') + sum P_row; acc_row *= exp(m - m')
//   acc += P_tile V_blk                      (GEMM)
// (the online softmax: running max m and sum l). At the end out = acc / l and
// logsumexp = m + log l, saved for the backward, which recomputes each tile's
// probabilities as exp(S - logsumexp) instead of storing them.
// Causal blocks above the diagonal are skipped, which halves the work.
// Memory: one S tile and one accumulator per task, never L x S.
// A row whose keys are all masked has l = 0: its output is 0, as PyTorch's
// (>= 2.5) for bool and -inf masks, and its logsumexp -inf; with S = 0 the
// output is 0 too (an empty product).
// Tasks are (problem, query block) pairs, each computing its rows in a fixed
// order, so the bits do not depend on the thread count. float16/bfloat16
// compute in float32 and round the output once; their logsumexp stays float32.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_attention.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/attention/attention_gemm.h"
#include "kernels/cpu/attention/attention_geometry.h"
#include "kernels/cpu/attention/attention_rows.h"

namespace ember {
namespace {

using cpu::AttentionShape;
using cpu::MatrixView;

template <class T>
struct ForwardInputs {
  MatrixView<T> q, k, v;
  std::optional<MatrixView<T>> float_mask;
  std::optional<MatrixView<uint8_t>> bool_mask;
};

// Per-task scratch: one score tile, the output accumulator, running max and
// sum. Sized by the problem, not the block: a short sequence (a batch-1
// inference) would otherwise zero a whole 128 x 128 tile on every call.
template <class T>
struct ForwardScratch {
  int64_t rows, ld;  // the most query rows of a block; the score tile's row stride
  std::vector<T> scores, acc, max, sum;
  explicit ForwardScratch(const AttentionShape& g)
      : rows(std::clamp<int64_t>(g.l, 1, cpu::kForwardBlockQ)),
        ld(std::clamp<int64_t>(g.s, 1, cpu::kForwardBlockK)),
        scores(static_cast<size_t>(rows * ld)),
        acc(static_cast<size_t>(rows * std::max<int64_t>(g.ev, 1))),
        max(static_cast<size_t>(rows)),
        sum(static_cast<size_t>(rows)) {}
};

// Rows [i0, i0 + rows) of problem b: out [L, Ev] and lse [L] of that problem.
template <class T>
void forward_block(const AttentionShape& g, const ForwardInputs<T>& in, int64_t b, int64_t i0, int64_t rows,
                   T* out, T* lse, ForwardScratch<T>& w) {
  namespace rows_ops = cpu::attention_rows;
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  constexpr int64_t BK = cpu::kForwardBlockK;
  const T scale = static_cast<T>(g.scale);
  T* s = w.scores.data();
  T* acc = w.acc.data();
  std::fill(acc, acc + rows * g.ev, T(0));
  std::fill(w.max.begin(), w.max.end(), kNegInf);
  std::fill(w.sum.begin(), w.sum.end(), T(0));
  const T* q = in.q.matrix(b) + i0 * in.q.row_stride;
  const T* k = in.k.matrix(b);
  const T* v = in.v.matrix(b);
  const int64_t s_end = g.causal ? std::min(g.s, i0 + rows) : g.s;  // causal: later keys are all masked
  for (int64_t j0 = 0; j0 < s_end; j0 += BK) {
    const int64_t cols = std::min(BK, s_end - j0);
    // s (rows, cols) = scale * q (rows, E) @ k_blk^T (E, cols)
    cpu::attention_gemm<T>(rows, cols, g.e, scale, q, in.q.row_stride, in.q.col_stride, k + j0 * in.k.row_stride,
                           in.k.col_stride, in.k.row_stride, T(0), s, w.ld);
    cpu::apply_masks<T>(s, w.ld, i0, rows, j0, cols, g.causal, in.float_mask ? &*in.float_mask : nullptr,
                        in.bool_mask ? &*in.bool_mask : nullptr, b);
    for (int64_t r = 0; r < rows; ++r) {
      T* srow = s + r * w.ld;
      T& m = w.max[static_cast<size_t>(r)];
      const T m_new = rows_ops::row_max(srow, cols, m);
      if (m_new == kNegInf) {  // nothing attended yet: the row's probabilities are 0
        std::fill(srow, srow + cols, T(0));
        continue;
      }
      const T corr = m == m_new ? T(1) : std::exp(m - m_new);
      const T row_sum = rows_ops::exp_shifted_sum(srow, cols, m_new);
      T& l = w.sum[static_cast<size_t>(r)];
      l = l * corr + row_sum;
      if (corr != T(1)) {
        T* arow = acc + r * g.ev;
        for (int64_t c = 0; c < g.ev; ++c) arow[c] *= corr;
      }
      m = m_new;
    }
    // acc (rows, Ev) += p (rows, cols) @ v_blk (cols, Ev)
    cpu::attention_gemm<T>(rows, g.ev, cols, T(1), s, w.ld, 1, v + j0 * in.v.row_stride, in.v.row_stride,
                           in.v.col_stride, T(1), acc, g.ev);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const T l = w.sum[static_cast<size_t>(r)];
    T* orow = out + (i0 + r) * g.ev;
    const T* arow = acc + r * g.ev;
    if (l == T(0)) {  // no key (S = 0) or every key masked
      std::fill(orow, orow + g.ev, T(0));
    } else {
      const T inv = T(1) / l;
      for (int64_t c = 0; c < g.ev; ++c) orow[c] = arow[c] * inv;
    }
    lse[i0 + r] = w.max[static_cast<size_t>(r)] + std::log(l);
  }
}

template <class T>
void flash_attention_forward(const AttentionShape& g, const ForwardInputs<T>& in, T* out, T* lse) {
  const int64_t q_blocks = (g.l + cpu::kForwardBlockQ - 1) / cpu::kForwardBlockQ;
  parallel_for(0, g.n * q_blocks, 1, [&](int64_t begin, int64_t end) {
    ForwardScratch<T> w(g);
    for (int64_t task = begin; task < end; ++task) {
      const int64_t b = task / q_blocks, i0 = (task % q_blocks) * cpu::kForwardBlockQ;
      forward_block<T>(g, in, b, i0, std::min(cpu::kForwardBlockQ, g.l - i0), out + b * g.l * g.ev, lse + b * g.l,
                       w);
    }
  });
}

TensorPair flash_attention_cpu(const Tensor& query, const Tensor& key, const Tensor& value,
                               const std::optional<Tensor>& attn_mask, bool is_causal,
                               const std::optional<Scalar>& scale) {
  const AttentionShape g =
      cpu::check_attention("flash_attention (scaled_dot_product_attention)", query, key, value, attn_mask,
                           is_causal, scale);
  const DType ct = cpu::compute_dtype(query.dtype());
  DimVector out_sizes = g.batch, lse_sizes = g.batch;
  out_sizes.push_back(g.l);
  out_sizes.push_back(g.ev);
  lse_sizes.push_back(g.l);
  Tensor out = make_empty(out_sizes, ct, query.device());
  Tensor lse = make_empty(lse_sizes, ct, query.device());
  const Tensor q = cpu::compute_operand(query, ct), k = cpu::compute_operand(key, ct),
               v = cpu::compute_operand(value, ct);
  Tensor mask;
  if (attn_mask) mask = attn_mask->dtype() == DType::Bool ? *attn_mask : cpu::compute_operand(*attn_mask, ct);
  auto run = [&]<class T>() {
    ForwardInputs<T> in{cpu::matrix_view<T>(q, g.batch, g.n), cpu::matrix_view<T>(k, g.batch, g.n),
                        cpu::matrix_view<T>(v, g.batch, g.n), std::nullopt, std::nullopt};
    if (mask.defined() && mask.dtype() == DType::Bool) in.bool_mask = cpu::matrix_view<uint8_t>(mask, g.batch, g.n);
    else if (mask.defined()) in.float_mask = cpu::matrix_view<T>(mask, g.batch, g.n);
    if (g.n * g.l > 0) flash_attention_forward<T>(g, in, out.data_ptr<T>(), lse.data_ptr<T>());
  };
  if (ct == DType::Float64) run.template operator()<double>();
  else run.template operator()<float>();
  if (ct != query.dtype()) out = out.to(query.dtype());
  return {out, lse};
}

}  // namespace

void register_cpu_attention_kernels() {
  op::flash_attention.impl(DispatchKey::CPU, kFloatingDTypes, &flash_attention_cpu, "cpu::flash_attention");
  op::flash_attention_backward.impl(DispatchKey::CPU, kFloatingDTypes, &cpu::flash_attention_backward_cpu,
                                    "cpu::flash_attention_backward");
}

}  // namespace ember
