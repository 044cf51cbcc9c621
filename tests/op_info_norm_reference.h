// The plain double references of the norm family's op-info rows
// (tests/op_info_norm.cpp): a normalisation written once over "groups" of
// element indices (a row, a (sample, group) block, a channel), its
// statistics, and its backward. Included by that file only.
#pragma once

#include <cmath>
#include <optional>
#include <vector>

#include "tests/op_info.h"

namespace ember::testing::norm_reference {

inline DType stat_of(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

// A softmax-like geometry: the shape seen as [outer, len, inner] around `dim`.
struct Geometry {
  int64_t outer = 1, len = 1, inner = 1;
};
inline Geometry geometry(const Shape& s, int64_t dim) {
  Geometry g;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
    if (i < dim) g.outer *= s[i];
    if (i == dim) g.len = s[i];
    if (i > dim) g.inner *= s[i];
  }
  return g;
}

// Element indices of one normalisation group, and the parameter index of each.
struct Group {
  std::vector<int64_t> elems, params;
};

// The groups of layer_norm/rms_norm: rows of `len` elements, parameter = position in the row.
inline std::vector<Group> row_groups(int64_t numel, int64_t len) {
  std::vector<Group> gs;
  for (int64_t r = 0; len > 0 && r < numel / len; ++r) {
    Group g;
    for (int64_t j = 0; j < len; ++j) {
      g.elems.push_back(r * len + j);
      g.params.push_back(j);
    }
    gs.push_back(std::move(g));
  }
  return gs;
}

// [N, C, *]: group_norm's (sample, group) blocks, or batch_norm's channels (groups == 0).
inline std::vector<Group> channel_groups(const Shape& s, int64_t groups) {
  const int64_t n = s[0], c = s[1], hw = numel_of(s) / std::max<int64_t>(1, n * c);
  std::vector<Group> gs;
  if (groups == 0) {
    for (int64_t ch = 0; ch < c; ++ch) {
      Group g;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < hw; ++k) {
          g.elems.push_back((i * c + ch) * hw + k);
          g.params.push_back(ch);
        }
      gs.push_back(std::move(g));
    }
    return gs;
  }
  const int64_t cg = c / groups;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t gi = 0; gi < groups; ++gi) {
      Group g;
      for (int64_t ch = gi * cg; ch < (gi + 1) * cg; ++ch)
        for (int64_t k = 0; k < hw; ++k) {
          g.elems.push_back((i * c + ch) * hw + k);
          g.params.push_back(ch);
        }
      gs.push_back(std::move(g));
    }
  return gs;
}

struct Stats {
  double mean = 0, rstd = 0;
};

inline Stats stats_of(const HostTensor& x, const Group& g, double eps, bool centered) {
  Stats s;
  const double m = static_cast<double>(g.elems.size());
  if (centered) {
    for (int64_t e : g.elems) s.mean += x.f[e];
    s.mean /= m;
  }
  double var = 0;
  for (int64_t e : g.elems) var += (x.f[e] - s.mean) * (x.f[e] - s.mean);
  s.rstd = 1 / std::sqrt(var / m + eps);
  return s;
}

inline double param(const std::optional<HostTensor>& p, int64_t i, double fallback) { return p ? p->f[i] : fallback; }

inline std::optional<HostTensor> opt_tensor(const RefArgs& a, size_t i) {
  if (a.is_none(i)) return std::nullopt;
  return a.tensor(i);
}

// y = (x - mean) * rstd * w + b over every group, given each group's statistics.
inline HostTensor normalise(const HostTensor& x, const std::vector<Group>& groups, const std::vector<Stats>& stats,
                     const std::optional<HostTensor>& w, const std::optional<HostTensor>& b, DType out) {
  HostTensor y(x.shape, out);
  for (size_t k = 0; k < groups.size(); ++k) {
    const Group& g = groups[k];
    for (size_t j = 0; j < g.elems.size(); ++j) {
      const int64_t e = g.elems[j], p = g.params[j];
      y.f[e] = (x.f[e] - stats[k].mean) * stats[k].rstd * param(w, p, 1) + param(b, p, 0);
    }
  }
  return y;
}

inline HostTensor stat_tensor(const std::vector<Stats>& stats, Shape shape, DType t, bool rstd) {
  HostTensor h(std::move(shape), stat_of(t));
  for (size_t k = 0; k < stats.size(); ++k) h.f[k] = rstd ? stats[k].rstd : stats[k].mean;
  return h;
}

// The backward of a normalisation with given statistics: dx (training-style:
// through the statistics, unless `through_stats` is false), dw, db.
inline std::vector<HostTensor> normalise_backward(const HostTensor& g, const HostTensor& x, const std::vector<Group>& groups,
                                           const std::vector<Stats>& stats, const std::optional<HostTensor>& w,
                                           const Shape& param_shape, bool centered, bool through_stats) {
  HostTensor dx(x.shape, x.dtype), dw(param_shape, x.dtype), db(param_shape, x.dtype);
  for (size_t k = 0; k < groups.size(); ++k) {
    const Group& gr = groups[k];
    const double m = static_cast<double>(gr.elems.size()), mean = stats[k].mean, rs = stats[k].rstd;
    double a = 0, bsum = 0;
    for (size_t j = 0; j < gr.elems.size(); ++j) {
      const int64_t e = gr.elems[j];
      const double wg = g.f[e] * param(w, gr.params[j], 1), xh = (x.f[e] - mean) * rs;
      a += wg;
      bsum += wg * xh;
      dw.f[gr.params[j]] += g.f[e] * xh;
      db.f[gr.params[j]] += g.f[e];
    }
    for (size_t j = 0; j < gr.elems.size(); ++j) {
      const int64_t e = gr.elems[j];
      const double wg = g.f[e] * param(w, gr.params[j], 1), xh = (x.f[e] - mean) * rs;
      dx.f[e] = through_stats ? rs * (wg - (centered ? a / m : 0) - xh * bsum / m) : rs * wg;
    }
  }
  return {dx, dw, db};
}

}  // namespace ember::testing::norm_reference
