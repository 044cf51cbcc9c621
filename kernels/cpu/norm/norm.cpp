// CPU kernels of the norm family: layer_norm, rms_norm, group_norm,
// batch_norm and their backward kernels (softmax lives in softmax.cpp).
//
// Note [Normalisation on CPU]
// Every normalisation is y = (x - mean) * rstd * w + b over some group of
// elements, rstd = 1 / sqrt(var + eps), var the biased variance. What
// differs is the group:
//   layer_norm  each row of the trailing `normalized_shape` dims (contiguous);
//   rms_norm    the same rows, with mean taken as 0 (var = mean(x^2)), no bias;
//   group_norm  each (sample, group): C/G channels x spatial, contiguous;
//   batch_norm  each channel: N runs of H*W elements, stride C*H*W apart.
// Statistics are two-pass (mean, then the mean squared deviation) in
// opmath (float for f32/f16/bf16, double for f64); sums are cut into fixed
// blocks (norm_lanes.h), so long groups stay accurate. One task owns a whole
// group, so no reduction is split by thread count: 1 and 2 threads give the
// same bits. A layer_norm row of 1024 floats stays in L1, so the two stats
// passes and the output pass read memory once.
//
// Backward, with xhat = (x - mean) * rstd and wg = w * g, over a group of M:
//   dx = rstd * (wg - mean(wg) - xhat * mean(wg * xhat))
// (batch_norm in eval mode: dx = wg * rstd; rms_norm drops the mean(wg)
// term). dw = sum(g * xhat) and db = sum(g) run across groups: layer_norm and
// rms_norm accumulate them per fixed block of rows and add the blocks in
// order; group_norm keeps one partial per (sample, channel) and adds over the
// samples in order; batch_norm's task owns its channel's sums.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/op_decls_norm.h"
#include "core/tensor_util.h"
#include "ember/parallel.h"
#include "kernels/cpu/norm/norm_lanes.h"

namespace ember {

namespace {

using namespace cpu::norm;

constexpr int64_t kGrain = 32768;       // elements per task
constexpr int64_t kBlockElems = 65536;  // elements per row block of the dw/db partials

// ---- argument checks (both the functional and the boxed path run them) ----

void check_param(const char* op, const char* what, const std::optional<Tensor>& t, IntArrayRef shape,
                 const Tensor& input) {
  if (!t || !t->defined()) return;
  EMBER_CHECK(t->sizes() == shape, op, ": expected ", what, " of shape ", shape, ", got ", t->sizes());
  EMBER_CHECK(t->dtype() == input.dtype(), op, ": expected ", what, " of dtype ", input.dtype(),
              " (the input's), got ", t->dtype());
}

// Rows and row length of a layer_norm/rms_norm input.
struct RowShape {
  int64_t rows = 1, len = 1;
  DimVector stat_sizes;  // the input's leading dims, then a 1 per normalized dim
};

RowShape check_rows(const char* op, const Tensor& input, IntArrayRef normalized_shape) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  EMBER_CHECK(k >= 1, op, ": expected normalized_shape to have at least one dim, got []");
  EMBER_CHECK(input.is_floating_point(), op, ": expected a floating-point input, got ", input.dtype());
  bool ok = input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(input.dim() - k + i) == normalized_shape[i];
  EMBER_CHECK(ok, op, ": given normalized_shape ", normalized_shape,
              ", expected an input whose trailing dims are that shape, got an input of shape ", input.sizes());
  RowShape r;
  for (int64_t i = 0; i < input.dim(); ++i) {
    if (i < input.dim() - k) {
      r.rows *= input.size(i);
      r.stat_sizes.push_back(input.size(i));
    } else {
      r.len *= input.size(i);
      r.stat_sizes.push_back(1);
    }
  }
  return r;
}

template <class T>
const T* ptr_or_null(const std::optional<Tensor>& t) {
  return t && t->defined() ? t->data_ptr<T>() : nullptr;
}

std::optional<Tensor> contiguous_opt(const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return std::nullopt;
  return t->contiguous();
}

// ---- layer_norm and rms_norm: rows of `len` contiguous elements ----

template <class T>
void rows_forward(const T* x, const T* w, const T* b, T* y, opmath_t<T>* mean, opmath_t<T>* rstd, int64_t rows,
                  int64_t len, double eps, bool centered) {
  using S = opmath_t<T>;
  parallel_for(0, rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, len)), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * len;
      T* yr = y + r * len;
      const S m = centered ? sum_lanes<T>(len, [&]<class W>(int64_t i) { return load<W>(xr + i); }) / S(len) : S(0);
      const S var = sum_lanes<T>(len, [&]<class W>(int64_t i) {
                      const W d = load<W>(xr + i) - W(m);
                      return d * d;
                    }) / S(len);
      const S rs = S(1) / std::sqrt(var + static_cast<S>(eps));
      if (mean) mean[r] = m;
      rstd[r] = rs;
      for_lanes<T>(len, [&]<class W>(int64_t i) {
        W v = (load<W>(xr + i) - W(m)) * W(rs);
        if (w) v = v * load<W>(w + i);
        if (b) v = v + load<W>(b + i);
        store(yr + i, v);
      });
    }
  });
}

// dx for every row; dw (and db when `db` is set) summed over the rows.
template <class T>
void rows_backward(const T* g, const T* x, const opmath_t<T>* mean, const opmath_t<T>* rstd, const T* w, T* dx,
                   T* dw, T* db, int64_t rows, int64_t len) {
  using S = opmath_t<T>;
  const int64_t block_rows = std::max<int64_t>(1, kBlockElems / std::max<int64_t>(1, len));
  const int64_t blocks = (rows + block_rows - 1) / block_rows;
  std::vector<S> partial(static_cast<size_t>(blocks * len * 2), S(0));
  parallel_for(0, blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t blk = begin; blk < end; ++blk) {
      S* pw = partial.data() + blk * len * 2;
      S* pb = pw + len;
      for (int64_t r = blk * block_rows; r < std::min(rows, (blk + 1) * block_rows); ++r) {
        const T* gr = g + r * len;
        const T* xr = x + r * len;
        T* dr = dx + r * len;
        const S m = mean ? mean[r] : S(0), rs = rstd[r];
        auto wg = [&]<class W>(int64_t i) { return w ? load<W>(gr + i) * load<W>(w + i) : load<W>(gr + i); };
        const S a = mean ? sum_lanes<T>(len, wg) : S(0);
        const S bsum = sum_lanes<T>(len, [&]<class W>(int64_t i) {
          return wg.template operator()<W>(i) * ((load<W>(xr + i) - W(m)) * W(rs));
        });
        const S ca = rs * a / S(len), cb = rs * bsum / S(len);
        for_lanes<T>(len, [&]<class W>(int64_t i) {
          const W gv = load<W>(gr + i);
          const W xh = (load<W>(xr + i) - W(m)) * W(rs);
          const W wgv = w ? gv * load<W>(w + i) : gv;
          store(dr + i, W(rs) * wgv - W(ca) - xh * W(cb));
          store(pw + i, load<W>(pw + i) + gv * xh);
          if (db) store(pb + i, load<W>(pb + i) + gv);
        });
      }
    }
  });
  parallel_for(0, len, kGrain, [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      S sw = 0, sb = 0;
      for (int64_t blk = 0; blk < blocks; ++blk) {
        sw += partial[blk * len * 2 + j];
        sb += partial[blk * len * 2 + len + j];
      }
      dw[j] = static_cast<T>(sw);
      if (db) db[j] = static_cast<T>(sb);
    }
  });
}

TensorTriple layer_norm_cpu(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& bias, double eps) {
  const char* op = "layer_norm";
  const RowShape rs = check_rows(op, input, normalized_shape);
  check_param(op, "weight", weight, normalized_shape, input);
  check_param(op, "bias", bias, normalized_shape, input);
  const Tensor x = input.contiguous();
  const std::optional<Tensor> w = contiguous_opt(weight), b = contiguous_opt(bias);
  Tensor y = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor mean = make_empty(rs.stat_sizes, stat_dtype(x.dtype()), x.device());
  Tensor rstd = make_empty(rs.stat_sizes, stat_dtype(x.dtype()), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    rows_forward<T>(x.data_ptr<T>(), ptr_or_null<T>(w), ptr_or_null<T>(b), y.data_ptr<T>(), mean.data_ptr<S>(),
                    rstd.data_ptr<S>(), rs.rows, rs.len, eps, true);
  });
  return {y, mean, rstd};
}

void check_grad(const char* op, const Tensor& grad, const Tensor& input) {
  EMBER_CHECK(grad.sizes() == input.sizes() && grad.dtype() == input.dtype(), op, ": expected grad_output of shape ",
              input.sizes(), " and dtype ", input.dtype(), " (the input's), got ", grad.sizes(), " ", grad.dtype());
}

Tensor stats_as(const char* op, const char* what, const Tensor& t, int64_t count, const Tensor& input) {
  EMBER_CHECK(t.numel() == count, op, ": expected ", what, " with ", count, " elements, got shape ", t.sizes());
  return t.to(stat_dtype(input.dtype())).contiguous();
}

TensorTriple layer_norm_backward_cpu(const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape,
                                     const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight) {
  const char* op = "layer_norm_backward";
  const RowShape rs = check_rows(op, input, normalized_shape);
  check_param(op, "weight", weight, normalized_shape, input);
  check_grad(op, grad, input);
  const Tensor g = grad.contiguous(), x = input.contiguous();
  const Tensor m = stats_as(op, "mean", mean, rs.rows, x), r = stats_as(op, "rstd", rstd, rs.rows, x);
  const std::optional<Tensor> w = contiguous_opt(weight);
  Tensor dx = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor dw = make_empty(normalized_shape, x.dtype(), x.device());
  Tensor db = make_empty(normalized_shape, x.dtype(), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    rows_backward<T>(g.data_ptr<T>(), x.data_ptr<T>(), m.data_ptr<S>(), r.data_ptr<S>(), ptr_or_null<T>(w),
                     dx.data_ptr<T>(), dw.data_ptr<T>(), db.data_ptr<T>(), rs.rows, rs.len);
  });
  return {dx, dw, db};
}

TensorPair rms_norm_cpu(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                        const std::optional<Scalar>& eps) {
  const char* op = "rms_norm";
  const RowShape rs = check_rows(op, input, normalized_shape);
  check_param(op, "weight", weight, normalized_shape, input);
  const Tensor x = input.contiguous();
  const std::optional<Tensor> w = contiguous_opt(weight);
  Tensor y = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor rstd = make_empty(rs.stat_sizes, stat_dtype(x.dtype()), x.device());
  const double e = rms_norm_eps(eps, x.dtype());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    rows_forward<T>(x.data_ptr<T>(), ptr_or_null<T>(w), nullptr, y.data_ptr<T>(), nullptr, rstd.data_ptr<S>(),
                    rs.rows, rs.len, e, false);
  });
  return {y, rstd};
}

TensorPair rms_norm_backward_cpu(const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape,
                                 const Tensor& rstd, const std::optional<Tensor>& weight) {
  const char* op = "rms_norm_backward";
  const RowShape rs = check_rows(op, input, normalized_shape);
  check_param(op, "weight", weight, normalized_shape, input);
  check_grad(op, grad, input);
  const Tensor g = grad.contiguous(), x = input.contiguous();
  const Tensor r = stats_as(op, "rstd", rstd, rs.rows, x);
  const std::optional<Tensor> w = contiguous_opt(weight);
  Tensor dx = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor dw = make_empty(normalized_shape, x.dtype(), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    rows_backward<T>(g.data_ptr<T>(), x.data_ptr<T>(), nullptr, r.data_ptr<S>(), ptr_or_null<T>(w),
                     dx.data_ptr<T>(), dw.data_ptr<T>(), nullptr, rs.rows, rs.len);
  });
  return {dx, dw};
}

// ---- group_norm: (sample, group) blocks of C/G channels x `hw` elements ----

struct ChannelShape {
  int64_t n = 1, c = 1, hw = 1;
};

ChannelShape channel_shape(const Tensor& input) {
  ChannelShape s;
  s.n = input.size(0);
  s.c = input.size(1);
  for (int64_t i = 2; i < input.dim(); ++i) s.hw *= input.size(i);
  return s;
}

ChannelShape check_group_norm(const char* op, const Tensor& input, int64_t groups) {
  EMBER_CHECK(input.dim() >= 2, op, ": expected an input of shape [N, C, *], got ", input.sizes());
  EMBER_CHECK(input.is_floating_point(), op, ": expected a floating-point input, got ", input.dtype());
  EMBER_CHECK(groups > 0, op, ": expected num_groups > 0, got ", groups);
  EMBER_CHECK(input.size(1) % groups == 0, op, ": expected the number of channels (", input.size(1),
              ") to be divisible by num_groups (", groups, "), input of shape ", input.sizes());
  return channel_shape(input);
}

template <class T>
void group_forward(const T* x, const T* w, const T* b, T* y, opmath_t<T>* mean, opmath_t<T>* rstd,
                   const ChannelShape& s, int64_t groups, double eps) {
  using S = opmath_t<T>;
  const int64_t cg = s.c / groups, m_count = cg * s.hw;
  parallel_for(0, s.n * groups, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, m_count)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t k = begin; k < end; ++k) {
                   const int64_t c0 = (k % groups) * cg;
                   const T* xg = x + k * m_count;
                   T* yg = y + k * m_count;
                   const S m = sum_lanes<T>(m_count, [&]<class W>(int64_t i) { return load<W>(xg + i); }) / S(m_count);
                   const S var = sum_lanes<T>(m_count, [&]<class W>(int64_t i) {
                                   const W d = load<W>(xg + i) - W(m);
                                   return d * d;
                                 }) / S(m_count);
                   const S rs = S(1) / std::sqrt(var + static_cast<S>(eps));
                   mean[k] = m;
                   rstd[k] = rs;
                   for (int64_t c = 0; c < cg; ++c) {
                     const S scale = w ? rs * static_cast<S>(w[c0 + c]) : rs;
                     const S shift = (b ? static_cast<S>(b[c0 + c]) : S(0)) - m * scale;
                     const T* xc = xg + c * s.hw;
                     T* yc = yg + c * s.hw;
                     for_lanes<T>(s.hw, [&]<class W>(int64_t i) { store(yc + i, load<W>(xc + i) * W(scale) + W(shift)); });
                   }
                 }
               });
}

template <class T>
void group_backward(const T* g, const T* x, const opmath_t<T>* mean, const opmath_t<T>* rstd, const T* w, T* dx,
                    T* dw, T* db, const ChannelShape& s, int64_t groups) {
  using S = opmath_t<T>;
  const int64_t cg = s.c / groups, m_count = cg * s.hw;
  std::vector<S> ds(static_cast<size_t>(s.n * s.c)), dbs(static_cast<size_t>(s.n * s.c));  // per (sample, channel)
  parallel_for(0, s.n * groups, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, m_count)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t k = begin; k < end; ++k) {
                   const int64_t n = k / groups, c0 = (k % groups) * cg;
                   const S m = mean[k], rs = rstd[k];
                   S a = 0, bsum = 0;
                   for (int64_t c = 0; c < cg; ++c) {
                     const T* gc = g + k * m_count + c * s.hw;
                     const T* xc = x + k * m_count + c * s.hw;
                     const S sg = sum_lanes<T>(s.hw, [&]<class W>(int64_t i) { return load<W>(gc + i); });
                     const S sgx = sum_lanes<T>(s.hw, [&]<class W>(int64_t i) {
                       return load<W>(gc + i) * (load<W>(xc + i) - W(m));
                     });
                     const S wc = w ? static_cast<S>(w[c0 + c]) : S(1);
                     ds[n * s.c + c0 + c] = sgx * rs;
                     dbs[n * s.c + c0 + c] = sg;
                     a += wc * sg;
                     bsum += wc * sgx * rs;
                   }
                   const S c2 = -rs * rs * bsum / S(m_count), c3 = -rs * a / S(m_count);
                   for (int64_t c = 0; c < cg; ++c) {
                     const T* gc = g + k * m_count + c * s.hw;
                     const T* xc = x + k * m_count + c * s.hw;
                     T* dc = dx + k * m_count + c * s.hw;
                     const S c1 = rs * (w ? static_cast<S>(w[c0 + c]) : S(1));
                     for_lanes<T>(s.hw, [&]<class W>(int64_t i) {
                       store(dc + i, load<W>(gc + i) * W(c1) + (load<W>(xc + i) - W(m)) * W(c2) + W(c3));
                     });
                   }
                 }
               });
  for (int64_t c = 0; c < s.c; ++c) {
    S sw = 0, sb = 0;
    for (int64_t n = 0; n < s.n; ++n) {
      sw += ds[n * s.c + c];
      sb += dbs[n * s.c + c];
    }
    dw[c] = static_cast<T>(sw);
    db[c] = static_cast<T>(sb);
  }
}

TensorTriple group_norm_cpu(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                            const std::optional<Tensor>& bias, double eps) {
  const char* op = "group_norm";
  const ChannelShape s = check_group_norm(op, input, num_groups);
  check_param(op, "weight", weight, {s.c}, input);
  check_param(op, "bias", bias, {s.c}, input);
  const Tensor x = input.contiguous();
  const std::optional<Tensor> w = contiguous_opt(weight), b = contiguous_opt(bias);
  Tensor y = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor mean = make_empty({s.n, num_groups}, stat_dtype(x.dtype()), x.device());
  Tensor rstd = make_empty({s.n, num_groups}, stat_dtype(x.dtype()), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    group_forward<T>(x.data_ptr<T>(), ptr_or_null<T>(w), ptr_or_null<T>(b), y.data_ptr<T>(), mean.data_ptr<S>(),
                     rstd.data_ptr<S>(), s, num_groups, eps);
  });
  return {y, mean, rstd};
}

TensorTriple group_norm_backward_cpu(const Tensor& grad, const Tensor& input, int64_t num_groups, const Tensor& mean,
                                     const Tensor& rstd, const std::optional<Tensor>& weight) {
  const char* op = "group_norm_backward";
  const ChannelShape s = check_group_norm(op, input, num_groups);
  check_param(op, "weight", weight, {s.c}, input);
  check_grad(op, grad, input);
  const Tensor g = grad.contiguous(), x = input.contiguous();
  const Tensor m = stats_as(op, "mean", mean, s.n * num_groups, x);
  const Tensor r = stats_as(op, "rstd", rstd, s.n * num_groups, x);
  const std::optional<Tensor> w = contiguous_opt(weight);
  Tensor dx = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor dw = make_empty({s.c}, x.dtype(), x.device());
  Tensor db = make_empty({s.c}, x.dtype(), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    group_backward<T>(g.data_ptr<T>(), x.data_ptr<T>(), m.data_ptr<S>(), r.data_ptr<S>(), ptr_or_null<T>(w),
                      dx.data_ptr<T>(), dw.data_ptr<T>(), db.data_ptr<T>(), s, num_groups);
  });
  return {dx, dw, db};
}

// ---- batch_norm: per channel, N runs of `hw` elements ----

ChannelShape check_batch_norm(const char* op, const Tensor& input) {
  EMBER_CHECK(input.dim() >= 2, op, ": expected an input of shape [N, C], [N, C, L] or [N, C, H, W], got ",
              input.sizes());
  EMBER_CHECK(input.is_floating_point(), op, ": expected a floating-point input, got ", input.dtype());
  return channel_shape(input);
}

// Sum over channel c of f(run pointer offset, i) for every run.
template <class T, class F>
double channel_sum(const ChannelShape& s, int64_t c, F f) {
  double total = 0;
  for (int64_t n = 0; n < s.n; ++n) total += sum_lanes<T>(s.hw, [&]<class W>(int64_t i) {
    return f.template operator()<W>((n * s.c + c) * s.hw + i);
  });
  return total;
}

template <class T>
void batch_forward(const T* x, const T* w, const T* b, T* rm, T* rv, T* y, opmath_t<T>* mean_out,
                   opmath_t<T>* rstd_out, const ChannelShape& s, bool training, double momentum, double eps) {
  using S = opmath_t<T>;
  const int64_t count = s.n * s.hw;
  parallel_for(0, s.c, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, count)), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      S m, var;
      if (training) {
        m = static_cast<S>(channel_sum<T>(s, c, [&]<class W>(int64_t i) { return load<W>(x + i); }) /
                           static_cast<double>(count));
        var = static_cast<S>(channel_sum<T>(s, c, [&]<class W>(int64_t i) {
                               const W d = load<W>(x + i) - W(m);
                               return d * d;
                             }) /
                             static_cast<double>(count));
        if (rm) rm[c] = static_cast<T>((1 - momentum) * static_cast<double>(static_cast<S>(rm[c])) + momentum * m);
        if (rv) {
          const double unbiased = static_cast<double>(var) * static_cast<double>(count) / static_cast<double>(count - 1);
          rv[c] = static_cast<T>((1 - momentum) * static_cast<double>(static_cast<S>(rv[c])) + momentum * unbiased);
        }
      } else {
        m = static_cast<S>(rm[c]);
        var = static_cast<S>(rv[c]);
      }
      const S rs = S(1) / std::sqrt(var + static_cast<S>(eps));
      mean_out[c] = m;
      rstd_out[c] = rs;
      const S scale = w ? rs * static_cast<S>(w[c]) : rs;
      const S shift = (b ? static_cast<S>(b[c]) : S(0)) - m * scale;
      for (int64_t n = 0; n < s.n; ++n) {
        const int64_t off = (n * s.c + c) * s.hw;
        for_lanes<T>(s.hw, [&]<class W>(int64_t i) { store(y + off + i, load<W>(x + off + i) * W(scale) + W(shift)); });
      }
    }
  });
}

template <class T>
void batch_backward(const T* g, const T* x, const opmath_t<T>* mean, const opmath_t<T>* rstd, const T* w, T* dx,
                    T* dw, T* db, const ChannelShape& s, bool training) {
  using S = opmath_t<T>;
  const int64_t count = s.n * s.hw;
  parallel_for(0, s.c, std::max<int64_t>(1, kGrain / std::max<int64_t>(1, count)), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const S m = mean[c], rs = rstd[c];
      const S sg = static_cast<S>(channel_sum<T>(s, c, [&]<class W>(int64_t i) { return load<W>(g + i); }));
      const S sgx = static_cast<S>(channel_sum<T>(s, c, [&]<class W>(int64_t i) {
        return load<W>(g + i) * (load<W>(x + i) - W(m));
      }));
      const S wc = w ? static_cast<S>(w[c]) : S(1);
      dw[c] = static_cast<T>(sgx * rs);
      db[c] = static_cast<T>(sg);
      const S c1 = wc * rs;
      const S c2 = training ? -wc * rs * rs * rs * sgx / S(count) : S(0);
      const S c3 = training ? -wc * rs * sg / S(count) : S(0);
      for (int64_t n = 0; n < s.n; ++n) {
        const int64_t off = (n * s.c + c) * s.hw;
        for_lanes<T>(s.hw, [&]<class W>(int64_t i) {
          store(dx + off + i, load<W>(g + off + i) * W(c1) + (load<W>(x + off + i) - W(m)) * W(c2) + W(c3));
        });
      }
    }
  });
}

TensorTriple batch_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                            const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                            bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  const ChannelShape s = check_batch_norm(op, input);
  check_param(op, "weight", weight, {s.c}, input);
  check_param(op, "bias", bias, {s.c}, input);
  check_param(op, "running_mean", running_mean, {s.c}, input);
  check_param(op, "running_var", running_var, {s.c}, input);
  const bool has_rm = running_mean && running_mean->defined(), has_rv = running_var && running_var->defined();
  EMBER_CHECK(training || (has_rm && has_rv), op,
              ": running_mean and running_var must be given in evaluation mode (training=false)");
  EMBER_CHECK(!training || s.n * s.hw > 1, op, ": Expected more than 1 value per channel when training, got input of shape ",
              input.sizes());
  for (const std::optional<Tensor>* t : {&running_mean, &running_var}) {
    if (*t && (*t)->defined())
      EMBER_CHECK((*t)->is_contiguous(), op, ": expected contiguous running statistics (they are updated in place)");
  }
  const Tensor x = input.contiguous();
  const std::optional<Tensor> w = contiguous_opt(weight), b = contiguous_opt(bias);
  Tensor y = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor mean = make_empty({s.c}, stat_dtype(x.dtype()), x.device());
  Tensor rstd = make_empty({s.c}, stat_dtype(x.dtype()), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    batch_forward<T>(x.data_ptr<T>(), ptr_or_null<T>(w), ptr_or_null<T>(b),
                     has_rm ? running_mean->data_ptr<T>() : nullptr, has_rv ? running_var->data_ptr<T>() : nullptr,
                     y.data_ptr<T>(), mean.data_ptr<S>(), rstd.data_ptr<S>(), s, training, momentum, eps);
  });
  if (training) {
    if (has_rm) bump_version(*running_mean);
    if (has_rv) bump_version(*running_var);
  }
  return {y, mean, rstd};
}

TensorTriple batch_norm_backward_cpu(const Tensor& grad, const Tensor& input, const std::optional<Tensor>& weight,
                                     const Tensor& mean, const Tensor& rstd, bool training) {
  const char* op = "batch_norm_backward";
  const ChannelShape s = check_batch_norm(op, input);
  check_param(op, "weight", weight, {s.c}, input);
  check_grad(op, grad, input);
  const Tensor g = grad.contiguous(), x = input.contiguous();
  const Tensor m = stats_as(op, "mean", mean, s.c, x), r = stats_as(op, "rstd", rstd, s.c, x);
  const std::optional<Tensor> w = contiguous_opt(weight);
  Tensor dx = make_empty(x.sizes(), x.dtype(), x.device());
  Tensor dw = make_empty({s.c}, x.dtype(), x.device());
  Tensor db = make_empty({s.c}, x.dtype(), x.device());
  dispatch_floating(x.dtype(), op, [&]<class T>() {
    using S = opmath_t<T>;
    batch_backward<T>(g.data_ptr<T>(), x.data_ptr<T>(), m.data_ptr<S>(), r.data_ptr<S>(), ptr_or_null<T>(w),
                      dx.data_ptr<T>(), dw.data_ptr<T>(), db.data_ptr<T>(), s, training);
  });
  return {dx, dw, db};
}

}  // namespace

void register_cpu_norm_kernels() {
  op::layer_norm.impl(DispatchKey::CPU, kFloatingDTypes, &layer_norm_cpu, "cpu::layer_norm");
  op::layer_norm_backward.impl(DispatchKey::CPU, kFloatingDTypes, &layer_norm_backward_cpu, "cpu::layer_norm_backward");
  op::rms_norm.impl(DispatchKey::CPU, kFloatingDTypes, &rms_norm_cpu, "cpu::rms_norm");
  op::rms_norm_backward.impl(DispatchKey::CPU, kFloatingDTypes, &rms_norm_backward_cpu, "cpu::rms_norm_backward");
  op::group_norm.impl(DispatchKey::CPU, kFloatingDTypes, &group_norm_cpu, "cpu::group_norm");
  op::group_norm_backward.impl(DispatchKey::CPU, kFloatingDTypes, &group_norm_backward_cpu, "cpu::group_norm_backward");
  op::batch_norm.impl(DispatchKey::CPU, kFloatingDTypes, &batch_norm_cpu, "cpu::batch_norm");
  op::batch_norm_backward.impl(DispatchKey::CPU, kFloatingDTypes, &batch_norm_backward_cpu, "cpu::batch_norm_backward");
}

}  // namespace ember
