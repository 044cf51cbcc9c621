// The backward of scaled_dot_product_attention on CPU (flash_attention_backward).
//
// Note [Flash attention backward]
// With P = softmax(S), S = scale * Q K^T + mask, O = P V and upstream dO
// (and dlse, the gradient of the saved logsumexp, usually zero):
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - D)  with D_i = sum_c dO_ic O_ic - dlse_i,
//   dQ = scale * dS K,  dK = scale * dS^T Q.
// P is never stored: each (key block, query block) tile is recomputed as
// exp(scale * Q_blk K_blk^T + mask - logsumexp), from the logsumexp the
// forward saved (FlashAttention-2). Per tile that is five small GEMMs; dV and
// dK of the key block and dQ of the query block are accumulated in place.
// A task owns one whole (batch, head) problem, so it owns its dQ, dK and dV
// rows and adds the tiles in one fixed order: the bits do not depend on the
// thread count. The price is parallelism limited to the number of problems
// (batch x heads), which is large in training.
// Rows whose keys were all masked (logsumexp = -inf) have P = 0, so they add
// nothing: their gradients are 0, as PyTorch's (>= 2.5).
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_attention.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/attention/attention_gemm.h"
#include "kernels/cpu/attention/attention_geometry.h"
#include "kernels/cpu/attention/attention_rows.h"

namespace ember::cpu {
namespace {

constexpr const char* kOp = "flash_attention_backward";

template <class T>
struct BackwardInputs {
  MatrixView<T> q, k, v, dout, out;
  std::optional<MatrixView<T>> float_mask;
  std::optional<MatrixView<uint8_t>> bool_mask;
  const T* lse;   // [n, L]
  const T* dlse;  // [n, L] or nullptr
};

// One (batch, head) problem b.
template <class T>
void backward_problem(const AttentionShape& g, const BackwardInputs<T>& in, int64_t b, T* dq, T* dk, T* dv,
                      std::vector<T>& p, std::vector<T>& dp, std::vector<T>& d) {
  constexpr int64_t BQ = kBackwardBlockQ, BK = kBackwardBlockK;
  const T scale = static_cast<T>(g.scale);
  const T* q = in.q.matrix(b);
  const T* k = in.k.matrix(b);
  const T* v = in.v.matrix(b);
  const T* go = in.dout.matrix(b);
  const T* o = in.out.matrix(b);
  const T* lse = in.lse + b * g.l;
  for (int64_t i = 0; i < g.l; ++i) {  // D_i = dO_i . O_i - dlse_i
    T acc = 0;
    const T* gr = go + i * in.dout.row_stride;
    const T* orow = o + i * in.out.row_stride;
    for (int64_t c = 0; c < g.ev; ++c) acc += gr[c * in.dout.col_stride] * orow[c * in.out.col_stride];
    d[static_cast<size_t>(i)] = in.dlse ? acc - in.dlse[b * g.l + i] : acc;
  }
  std::fill(dq, dq + g.l * g.e, T(0));
  std::fill(dk, dk + g.s * g.e, T(0));
  std::fill(dv, dv + g.s * g.ev, T(0));
  for (int64_t j0 = 0; j0 < g.s; j0 += BK) {
    const int64_t cols = std::min(BK, g.s - j0);
    const T* kj = k + j0 * in.k.row_stride;
    const T* vj = v + j0 * in.v.row_stride;
    // Causal: query i sees key j only when j <= i, so query blocks before j0 see nothing here.
    const int64_t i_begin = g.causal ? (j0 / BQ) * BQ : 0;
    for (int64_t i0 = i_begin; i0 < g.l; i0 += BQ) {
      const int64_t rows = std::min(BQ, g.l - i0);
      const T* qi = q + i0 * in.q.row_stride;
      const T* goi = go + i0 * in.dout.row_stride;
      T* ps = p.data();
      T* dps = dp.data();
      // P (rows, cols) = exp(scale * q_i k_j^T + mask - lse)
      attention_gemm<T>(rows, cols, g.e, scale, qi, in.q.row_stride, in.q.col_stride, kj, in.k.col_stride,
                        in.k.row_stride, T(0), ps, BK);
      apply_masks<T>(ps, BK, i0, rows, j0, cols, g.causal, in.float_mask ? &*in.float_mask : nullptr,
                     in.bool_mask ? &*in.bool_mask : nullptr, b);
      for (int64_t r = 0; r < rows; ++r) {
        if (std::isinf(lse[i0 + r]) && lse[i0 + r] < 0) std::fill(ps + r * BK, ps + r * BK + cols, T(0));
        else attention_rows::exp_shifted_sum(ps + r * BK, cols, lse[i0 + r]);
      }
      // dV_j (cols, Ev) += P^T (cols, rows) @ dO_i (rows, Ev)
      attention_gemm<T>(cols, g.ev, rows, T(1), ps, 1, BK, goi, in.dout.row_stride, in.dout.col_stride, T(1),
                        dv + j0 * g.ev, g.ev);
      // dP (rows, cols) = dO_i (rows, Ev) @ v_j^T (Ev, cols)
      attention_gemm<T>(rows, cols, g.ev, T(1), goi, in.dout.row_stride, in.dout.col_stride, vj, in.v.col_stride,
                        in.v.row_stride, T(0), dps, BK);
      for (int64_t r = 0; r < rows; ++r)
        attention_rows::softmax_grad_row(ps + r * BK, dps + r * BK, cols, d[static_cast<size_t>(i0 + r)]);
      // dK_j (cols, E) += scale * dS^T (cols, rows) @ q_i (rows, E)
      attention_gemm<T>(cols, g.e, rows, scale, dps, 1, BK, qi, in.q.row_stride, in.q.col_stride, T(1),
                        dk + j0 * g.e, g.e);
      // dQ_i (rows, E) += scale * dS (rows, cols) @ k_j (cols, E)
      attention_gemm<T>(rows, g.e, cols, scale, dps, BK, 1, kj, in.k.row_stride, in.k.col_stride, T(1),
                        dq + i0 * g.e, g.e);
    }
  }
}

// The sizes batch + tail.
DimVector with_tail(const DimVector& batch, std::initializer_list<int64_t> tail) {
  DimVector out = batch;
  for (int64_t t : tail) out.push_back(t);
  return out;
}

void check_same_sizes(const char* what, const Tensor& t, const DimVector& want, DType dtype) {
  EMBER_CHECK(t.sizes() == IntArrayRef(want), kOp, ": ", what, " must have shape ", IntArrayRef(want), ", got ",
              t.sizes());
  EMBER_CHECK(t.dtype() == dtype, kOp, ": ", what, " must have dtype ", dtype, ", got ", t.dtype());
}

}  // namespace

TensorTriple flash_attention_backward_cpu(const Tensor& grad_output, const std::optional<Tensor>& grad_logsumexp,
                                          const Tensor& query, const Tensor& key, const Tensor& value,
                                          const Tensor& output, const Tensor& logsumexp,
                                          const std::optional<Tensor>& attn_mask, bool is_causal,
                                          const std::optional<Scalar>& scale) {
  const AttentionShape g = check_attention(kOp, query, key, value, attn_mask, is_causal, scale);
  const DType ct = compute_dtype(query.dtype());
  const DimVector out_sizes = with_tail(g.batch, {g.l, g.ev}), lse_sizes = with_tail(g.batch, {g.l});
  check_same_sizes("grad_output", grad_output, out_sizes, query.dtype());
  check_same_sizes("output", output, out_sizes, query.dtype());
  check_same_sizes("logsumexp", logsumexp, lse_sizes, ct);
  if (grad_logsumexp) check_same_sizes("grad_logsumexp", *grad_logsumexp, lse_sizes, ct);

  Tensor dq = make_empty(with_tail(g.batch, {g.l, g.e}), ct, query.device());
  Tensor dk = make_empty(with_tail(g.batch, {g.s, g.e}), ct, query.device());
  Tensor dv = make_empty(with_tail(g.batch, {g.s, g.ev}), ct, query.device());
  const Tensor q = compute_operand(query, ct), k = compute_operand(key, ct), v = compute_operand(value, ct);
  const Tensor go = compute_operand(grad_output, ct), o = compute_operand(output, ct);
  const Tensor lse = logsumexp.contiguous();
  const Tensor dlse = grad_logsumexp ? grad_logsumexp->contiguous() : Tensor();
  Tensor mask;
  if (attn_mask) mask = attn_mask->dtype() == DType::Bool ? *attn_mask : compute_operand(*attn_mask, ct);
  auto run = [&]<class T>() {
    BackwardInputs<T> in{matrix_view<T>(q, g.batch, g.n),  matrix_view<T>(k, g.batch, g.n),
                         matrix_view<T>(v, g.batch, g.n),  matrix_view<T>(go, g.batch, g.n),
                         matrix_view<T>(o, g.batch, g.n),  std::nullopt, std::nullopt, lse.data_ptr<T>(),
                         dlse.defined() ? dlse.data_ptr<T>() : nullptr};
    if (mask.defined() && mask.dtype() == DType::Bool) in.bool_mask = matrix_view<uint8_t>(mask, g.batch, g.n);
    else if (mask.defined()) in.float_mask = matrix_view<T>(mask, g.batch, g.n);
    T* dq_p = dq.data_ptr<T>();
    T* dk_p = dk.data_ptr<T>();
    T* dv_p = dv.data_ptr<T>();
    parallel_for(0, g.n, 1, [&](int64_t begin, int64_t end) {
      std::vector<T> p(static_cast<size_t>(kBackwardBlockQ * kBackwardBlockK));
      std::vector<T> dp(p.size());
      std::vector<T> d(static_cast<size_t>(std::max<int64_t>(g.l, 1)));
      for (int64_t b = begin; b < end; ++b) {
        backward_problem<T>(g, in, b, dq_p + b * g.l * g.e, dk_p + b * g.s * g.e, dv_p + b * g.s * g.ev, p, dp, d);
      }
    });
  };
  if (ct == DType::Float64) run.template operator()<double>();
  else run.template operator()<float>();
  if (ct != query.dtype()) {
    dq = dq.to(query.dtype());
    dk = dk.to(query.dtype());
    dv = dv.to(query.dtype());
  }
  return {dq, dk, dv};
}

}  // namespace ember::cpu
