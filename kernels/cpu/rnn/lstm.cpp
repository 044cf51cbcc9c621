// CPU kernels of lstm_layer and lstm_layer_backward (core/op_decls_rnn.h).
//
// Note [Fused LSTM layer]
// An LSTM step written with separate ops costs two GEMMs and about ten
// elementwise passes, each with its own allocation and autograd node, and
// its backward computes the weight gradient one step (one K = N GEMM) at a
// time. Here one layer direction is one op:
//   forward:  gates = X W_ih^T for all T steps in one GEMM (T*N rows); then per
//             step one GEMM gates[t] += h_{t-1} W_hh^T and one pass that adds the
//             biases, applies sigmoid/tanh, and writes the activated gates,
//             c_t = f c_{t-1} + i g and h_t = o tanh(c_t).
//   backward: per step (in reverse processing order) one pass that turns dh_t
//             and dc_t into the pre-activation gradient dG[t] and dc_{t-1}, and
//             one GEMM dh_{t-1} = dG[t] W_hh. After the loop everything else is
//             a GEMM over all steps at once: dX = dG W_ih, dW_ih = dG^T X,
//             dW_hh = dG^T [h_{t-1}]_t (the previous outputs, hx for the first
//             step), and db = the column sums of dG.
// The pointwise passes split the batch rows over the thread pool; each element
// is computed by one thread alone, so the bits do not depend on the thread
// count (the GEMMs promise the same, Note [GEMM blocking]). float32 runs the
// passes on SIMD lanes with vec_math's sigmoid and tanh; float64 uses the C library.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/op_decls_rnn.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "kernels/cpu/linalg/gemm.h"
#include "kernels/cpu/vec/vec_math.h"

namespace ember {

namespace {

using cpu::vec::VecF;

// ---- argument checks ----

struct Dims {
  int64_t T, N, I, H;
};

void check_dtype(const char* op, const char* what, const Tensor& t, DType dtype) {
  EMBER_CHECK(t.dtype() == dtype, op, ": expected ", what, " of dtype ", dtype, " (the input's), got ", t.dtype());
}

void check_shape(const char* op, const char* what, const Tensor& t, std::initializer_list<int64_t> want,
                 const char* meaning) {
  EMBER_CHECK(t.sizes() == IntArrayRef(want), op, ": expected ", what, " of shape ", IntArrayRef(want), " ",
              meaning, ", got ", t.sizes());
}

Dims check_layer(const char* op, const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                 const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  EMBER_CHECK(input.dim() == 3, op, ": expected an input of shape (seq_len, batch, input_size), got ", input.sizes());
  EMBER_CHECK(input.size(0) >= 1, op, ": expected a sequence of at least one step, got input shape ", input.sizes());
  EMBER_CHECK(w_ih.dim() == 2 && w_ih.size(0) % 4 == 0, op,
              ": expected w_ih of shape (4 * hidden_size, input_size), got ", w_ih.sizes());
  const Dims d{input.size(0), input.size(1), input.size(2), w_ih.size(0) / 4};
  check_shape(op, "w_ih", w_ih, {4 * d.H, d.I}, "(4 * hidden_size, input_size)");
  check_shape(op, "w_hh", w_hh, {4 * d.H, d.H}, "(4 * hidden_size, hidden_size)");
  check_shape(op, "hx", hx, {d.N, d.H}, "(batch, hidden_size)");
  check_shape(op, "cx", cx, {d.N, d.H}, "(batch, hidden_size)");
  const DType t = input.dtype();
  check_dtype(op, "hx", hx, t);
  check_dtype(op, "cx", cx, t);
  check_dtype(op, "w_ih", w_ih, t);
  check_dtype(op, "w_hh", w_hh, t);
  for (const Tensor* b : {&b_ih, &b_hh}) {
    if (!b->defined()) continue;
    const char* what = b == &b_ih ? "b_ih" : "b_hh";
    check_shape(op, what, *b, {4 * d.H}, "(4 * hidden_size)");
    check_dtype(op, what, *b, t);
  }
  return d;
}

// ---- the lanes: VecF for contiguous float32 runs, plain T otherwise ----

inline float sigmoid_of(float x) { return cpu::vec::sigmoid(x); }
inline VecF sigmoid_of(VecF x) { return cpu::vec::sigmoid(x); }
inline double sigmoid_of(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline float tanh_of(float x) { return cpu::vec::tanh(x); }
inline VecF tanh_of(VecF x) { return cpu::vec::tanh(x); }
inline double tanh_of(double x) { return std::tanh(x); }

template <class V, class T>
V ld(const T* p) {
  if constexpr (std::is_same_v<V, T>) return *p;
  else return V::load(p);
}
template <class V, class T>
void st(const V& v, T* p) {
  if constexpr (std::is_same_v<V, T>) *p = v;
  else v.store(p);
}

// Calls body.template operator()<V>(j) for j in [0, H): lanes of VecF first for float32.
template <class T, class Body>
void for_lanes(int64_t H, Body&& body) {
  int64_t j = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (; j + VecF::kLanes <= H; j += VecF::kLanes) body.template operator()<VecF>(j);
  }
  for (; j < H; ++j) body.template operator()<T>(j);
}

// Rows per chunk of a pointwise pass: about 16K elements.
int64_t row_grain(int64_t H) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, 4 * H)); }

// ---- forward ----

// One step's pointwise pass. g: (N, 4H) pre-activations without biases, overwritten
// by the activated gates; cp: c_{t-1}; c, h: c_t, h_t.
template <class T>
void cell_forward(int64_t N, int64_t H, T* g, const T* bias, const T* cp, T* c, T* h) {
  parallel_for(0, N, row_grain(H), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T* gr = g + r * 4 * H;
      const T* cpr = cp + r * H;
      T* cr = c + r * H;
      T* hr = h + r * H;
      for_lanes<T>(H, [&]<class V>(int64_t j) {
        V a[4];
        for (int k = 0; k < 4; ++k) {
          a[k] = ld<V>(gr + k * H + j);
          if (bias) a[k] = a[k] + ld<V>(bias + k * H + j);
        }
        const V i = sigmoid_of(a[0]), f = sigmoid_of(a[1]), gg = tanh_of(a[2]), o = sigmoid_of(a[3]);
        const V cn = f * ld<V>(cpr + j) + i * gg;
        st(i, gr + j);
        st(f, gr + H + j);
        st(gg, gr + 2 * H + j);
        st(o, gr + 3 * H + j);
        st(cn, cr + j);
        st(o * tanh_of(cn), hr + j);
      });
    }
  });
}

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t b_rs,
          int64_t b_cs, T beta, T* c) {
  // C is always a contiguous (m, n) block here.
  if constexpr (std::is_same_v<T, float>) cpu::gemm_f32(m, n, k, 1.0f, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, n, 1);
  else cpu::gemm_f64(m, n, k, 1.0, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, n, 1);
}

TensorTriple lstm_layer_cpu(const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                            const Tensor& w_hh, const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh,
                            bool reverse) {
  const Tensor bi = b_ih ? *b_ih : Tensor(), bh = b_hh ? *b_hh : Tensor();
  const Dims d = check_layer("lstm_layer", input, hx, cx, w_ih, w_hh, bi, bh);
  const int64_t T = d.T, N = d.N, H = d.H, G = 4 * d.H;
  const Tensor x = input.contiguous(), h0 = hx.contiguous(), c0 = cx.contiguous(), wi = w_ih.contiguous(),
               wh = w_hh.contiguous();
  Tensor bias;  // b_ih + b_hh, added in the pointwise pass
  if (bi.defined() && bh.defined()) bias = (bi + bh).contiguous();
  else if (bi.defined() || bh.defined()) bias = (bi.defined() ? bi : bh).contiguous();
  Tensor output = empty({T, N, H}, input.options()), cells = empty({T, N, H}, input.options()),
         gates = empty({T, N, G}, input.options());
  dispatch_floating(input.dtype(), "lstm_layer", [&]<class S>() {
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
      const S* b = bias.defined() ? bias.data_ptr<S>() : nullptr;
      S* out = output.data_ptr<S>();
      S* cel = cells.data_ptr<S>();
      S* gat = gates.data_ptr<S>();
      gemm<S>(T * N, G, d.I, x.data_ptr<S>(), d.I, 1, wi.data_ptr<S>(), 1, d.I, S(0), gat);
      for (int64_t s = 0; s < T; ++s) {
        const int64_t t = reverse ? T - 1 - s : s, tp = reverse ? t + 1 : t - 1;
        const S* hp = s == 0 ? h0.data_ptr<S>() : out + tp * N * H;
        const S* cp = s == 0 ? c0.data_ptr<S>() : cel + tp * N * H;
        S* g = gat + t * N * G;
        gemm<S>(N, G, H, hp, H, 1, wh.data_ptr<S>(), 1, H, S(1), g);
        cell_forward(N, H, g, b, cp, cel + t * N * H, out + t * N * H);
      }
    }
  });
  return {output, cells, gates};
}

// ---- backward ----

// One step's pointwise pass, in place on dh (on entry the recurrent part of dL/dh_t)
// and dc (on entry dL/dc_t from the later step, on exit dL/dc_{t-1}).
template <class T>
void cell_backward(int64_t N, int64_t H, const T* gout, const T* gcell, const T* ggate, const T* gate, const T* c,
                   const T* cp, const T* dh, T* dc, T* dg) {
  parallel_for(0, N, row_grain(H), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t o1 = r * H, o4 = r * 4 * H;
      for_lanes<T>(H, [&]<class V>(int64_t j) {
        const V one(T(1));
        const V i = ld<V>(gate + o4 + j), f = ld<V>(gate + o4 + H + j), gg = ld<V>(gate + o4 + 2 * H + j),
                o = ld<V>(gate + o4 + 3 * H + j);
        const V tc = tanh_of(ld<V>(c + o1 + j));
        const V h_grad = ld<V>(dh + o1 + j) + ld<V>(gout + o1 + j);
        const V c_grad = ld<V>(dc + o1 + j) + ld<V>(gcell + o1 + j) + h_grad * o * (one - tc * tc);
        const V di = c_grad * gg + ld<V>(ggate + o4 + j);
        const V df = c_grad * ld<V>(cp + o1 + j) + ld<V>(ggate + o4 + H + j);
        const V dgg = c_grad * i + ld<V>(ggate + o4 + 2 * H + j);
        const V dout = h_grad * tc + ld<V>(ggate + o4 + 3 * H + j);
        st(c_grad * f, dc + o1 + j);
        st(di * i * (one - i), dg + o4 + j);
        st(df * f * (one - f), dg + o4 + H + j);
        st(dgg * (one - gg * gg), dg + o4 + 2 * H + j);
        st(dout * o * (one - o), dg + o4 + 3 * H + j);
      });
    }
  });
}

// Column sums of a (rows, cols) matrix, each column summed in row order.
template <class T>
void column_sums(int64_t rows, int64_t cols, const T* m, T* out) {
  parallel_for(0, cols, 256, [&](int64_t c0, int64_t c1) {
    std::vector<T> acc(static_cast<size_t>(c1 - c0), T(0));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = c0; c < c1; ++c) acc[static_cast<size_t>(c - c0)] += m[r * cols + c];
    for (int64_t c = c0; c < c1; ++c) out[c] = acc[static_cast<size_t>(c - c0)];
  });
}

TensorList lstm_layer_backward_cpu(const Tensor& grad_output, const Tensor& grad_cells, const Tensor& grad_gates,
                                   const Tensor& input, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                                   const Tensor& w_hh, const Tensor& output, const Tensor& cells,
                                   const Tensor& gates, bool reverse) {
  const char* op = "lstm_layer_backward";
  const Dims d = check_layer(op, input, hx, cx, w_ih, w_hh, Tensor(), Tensor());
  const int64_t T = d.T, N = d.N, H = d.H, I = d.I, G = 4 * d.H;
  const std::initializer_list<std::pair<const Tensor*, const char*>> per_step = {
      {&grad_output, "grad_output"}, {&grad_cells, "grad_cells"}, {&output, "output"}, {&cells, "cells"}};
  for (const auto& [t, what] : per_step) {
    check_shape(op, what, *t, {T, N, H}, "(seq_len, batch, hidden_size)");
    check_dtype(op, what, *t, input.dtype());
  }
  for (const auto& [t, what] : {std::pair{&grad_gates, "grad_gates"}, std::pair{&gates, "gates"}}) {
    check_shape(op, what, *t, {T, N, G}, "(seq_len, batch, 4 * hidden_size)");
    check_dtype(op, what, *t, input.dtype());
  }
  const Tensor x = input.contiguous(), h0 = hx.contiguous(), c0 = cx.contiguous(), wi = w_ih.contiguous(),
               wh = w_hh.contiguous(), go = grad_output.contiguous(), gc = grad_cells.contiguous(),
               gg = grad_gates.contiguous(), out = output.contiguous(), cel = cells.contiguous(),
               gat = gates.contiguous();
  const TensorOptions opts = input.options();
  Tensor dgates = empty({T, N, G}, opts), dh = zeros({N, H}, opts), dc = zeros({N, H}, opts);
  Tensor grad_input = empty({T, N, I}, opts), grad_w_ih = empty({G, I}, opts), grad_w_hh = empty({G, H}, opts),
         grad_bias = empty({G}, opts);
  dispatch_floating(input.dtype(), op, [&]<class S>() {
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
      S* dG = dgates.data_ptr<S>();
      S* dhp = dh.data_ptr<S>();
      const S* whp = wh.data_ptr<S>();
      const S* outp = out.data_ptr<S>();
      const S* celp = cel.data_ptr<S>();
      for (int64_t s = T - 1; s >= 0; --s) {
        const int64_t t = reverse ? T - 1 - s : s, tp = reverse ? t + 1 : t - 1;
        const S* cp = s == 0 ? c0.data_ptr<S>() : celp + tp * N * H;
        const int64_t o1 = t * N * H, o4 = t * N * G;
        cell_backward(N, H, go.data_ptr<S>() + o1, gc.data_ptr<S>() + o1, gg.data_ptr<S>() + o4,
                      gat.data_ptr<S>() + o4, celp + o1, cp, dhp, dc.data_ptr<S>(), dG + o4);
        gemm<S>(N, H, G, dG + o4, G, 1, whp, H, 1, S(0), dhp);  // dh_{t-1} = dG[t] W_hh
      }
      const S* xp = x.data_ptr<S>();
      gemm<S>(T * N, I, G, dG, G, 1, wi.data_ptr<S>(), I, 1, S(0), grad_input.data_ptr<S>());
      gemm<S>(G, I, T * N, dG, 1, G, xp, I, 1, S(0), grad_w_ih.data_ptr<S>());
      // dW_hh = sum_t dG[t]^T h_{t-1}: the steps after the first against the outputs
      // before them, then the first step against hx.
      const int64_t first = reverse ? T - 1 : 0;
      const S* later_dG = reverse ? dG : dG + N * G;
      const S* earlier_out = reverse ? outp + N * H : outp;
      S* gwh = grad_w_hh.data_ptr<S>();
      gemm<S>(G, H, (T - 1) * N, later_dG, 1, G, earlier_out, H, 1, S(0), gwh);
      gemm<S>(G, H, N, dG + first * N * G, 1, G, h0.data_ptr<S>(), H, 1, S(1), gwh);
      column_sums(T * N, G, dG, grad_bias.data_ptr<S>());
    }
  });
  return {grad_input, dh, dc, grad_w_ih, grad_w_hh, grad_bias};
}

}  // namespace

void register_cpu_lstm_kernels() {
  op::lstm_layer.impl(DispatchKey::CPU, {DType::Float32, DType::Float64}, &lstm_layer_cpu, "cpu::lstm_layer");
  op::lstm_layer_backward.impl(DispatchKey::CPU, {DType::Float32, DType::Float64}, &lstm_layer_backward_cpu,
                               "cpu::lstm_layer_backward");
}

}  // namespace ember
