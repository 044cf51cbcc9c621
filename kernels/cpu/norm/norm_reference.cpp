// The normalisation references (norm_reference.h). Every norm normalises
// groups of elements, y = (x - mean) * rstd * w + b; `Group` lists a group's
// elements and `normalize` does the rest, so each op only says what its
// groups are and which weight an element takes.
#include "kernels/cpu/norm/norm_reference.h"

#include <cmath>
#include <optional>

#include "kernels/reference_values.h"

namespace ember::cpu {
namespace {

using reference::Values;

struct Group {
  std::vector<int64_t> elems;  // positions in x
};

// Normalises each group of x in place (centered: subtract the mean; else the
// rms_norm form, mean 0). param(k) is the weight/bias index of element k.
// fixed_stats, when given, are the (mean, var) of each group (batch_norm in
// eval mode). Returns each group's (mean, rstd).
struct Stats {
  std::vector<double> mean, rstd;
};
template <class ParamIndex>
Stats normalize(Values& x, const std::vector<Group>& groups, bool centered, double eps, const std::optional<Values>& w,
                const std::optional<Values>& b, ParamIndex param,
                const std::optional<std::pair<Values, Values>>& fixed_stats = std::nullopt) {
  Stats s{std::vector<double>(groups.size()), std::vector<double>(groups.size())};
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<int64_t>& e = groups[g].elems;
    long double mean = 0, var = 0;
    if (fixed_stats) {
      mean = fixed_stats->first.v[g];
      var = fixed_stats->second.v[g];
    } else {
      if (centered) {
        for (int64_t k : e) mean += x.v[k];
        mean /= static_cast<long double>(e.size());
      }
      for (int64_t k : e) var += (x.v[k] - mean) * (x.v[k] - mean);
      var /= static_cast<long double>(e.size());
    }
    const long double rstd = 1 / std::sqrt(var + eps);
    for (int64_t k : e) {
      long double y = (x.v[k] - mean) * rstd;
      if (w) y *= w->v[param(k)];
      if (b) y += b->v[param(k)];
      x.v[k] = static_cast<double>(y);
    }
    s.mean[g] = static_cast<double>(mean);
    s.rstd[g] = static_cast<double>(rstd);
  }
  return s;
}

// An optional per-element or per-channel parameter (weight, bias, running
// statistics) of the given shape and of the input's dtype.
std::optional<Values> read_param(const Tensor& t, const std::vector<int64_t>& shape, DType dtype, std::string_view op,
                                 const char* what) {
  if (!t.defined()) return std::nullopt;
  EMBER_CHECK(t.sizes() == IntArrayRef(shape) && t.dtype() == dtype, op, ": expected ", what, " of shape ",
              IntArrayRef(shape), " and dtype ", dtype, ", got ", t.sizes(), " ", t.dtype());
  return reference::read(t, op);
}

// layer_norm, rms_norm: groups are rows of `len` consecutive elements.
struct Rows {
  std::vector<Group> groups;
  std::vector<int64_t> stat_sizes;
  int64_t len = 1;
};
Rows rows_of(const Values& x, const std::vector<int64_t>& normalized_shape, std::string_view op) {
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = k >= 1 && x.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = x.size(x.dim() - k + i) == normalized_shape[i];
  EMBER_CHECK(ok, op, ": given normalized_shape ", IntArrayRef(normalized_shape),
              ", expected an input whose trailing dims are that shape, got ", IntArrayRef(x.sizes));
  Rows r;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i >= x.dim() - k) r.len *= x.size(i);
    r.stat_sizes.push_back(i < x.dim() - k ? x.size(i) : 1);
  }
  const int64_t rows = r.len == 0 ? reference::numel_of(r.stat_sizes) : x.numel() / r.len;
  r.groups.resize(rows);
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t j = 0; j < r.len; ++j) r.groups[row].elems.push_back(row * r.len + j);
  }
  return r;
}

// group_norm, batch_norm: x is (N, C, *); channel c of sample n holds hw consecutive elements.
struct Channels {
  int64_t n, c, hw = 1;
};
Channels channels_of(const Values& x, std::string_view op) {
  EMBER_CHECK(x.dim() >= 2, op, ": expected an input of shape [N, C, *], got ", IntArrayRef(x.sizes));
  Channels s{x.size(0), x.size(1)};
  for (int64_t d = 2; d < x.dim(); ++d) s.hw *= x.size(d);
  return s;
}

}  // namespace

std::vector<Tensor> layer_norm_reference(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                                         const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "layer_norm";
  reference::check_dtype(x, op);
  Values v = reference::read(x, op);
  const Rows r = rows_of(v, normalized_shape, op);
  const int64_t len = r.len;
  const Stats s =
      normalize(v, r.groups, true, eps, read_param(weight, normalized_shape, x.dtype(), op, "weight"),
                read_param(bias, normalized_shape, x.dtype(), op, "bias"), [len](int64_t k) { return k % len; });
  return {reference::write(v, x.dtype()), reference::write(r.stat_sizes, s.mean, x.dtype()),
          reference::write(r.stat_sizes, s.rstd, x.dtype())};
}

std::vector<Tensor> rms_norm_reference(const Tensor& x, const std::vector<int64_t>& normalized_shape,
                                       const Tensor& weight, double eps) {
  const char* op = "rms_norm";
  reference::check_dtype(x, op);
  Values v = reference::read(x, op);
  const Rows r = rows_of(v, normalized_shape, op);
  const int64_t len = r.len;
  const Stats s = normalize(v, r.groups, false, eps, read_param(weight, normalized_shape, x.dtype(), op, "weight"),
                            std::nullopt, [len](int64_t k) { return k % len; });
  return {reference::write(v, x.dtype()), reference::write(r.stat_sizes, s.rstd, x.dtype())};
}

std::vector<Tensor> group_norm_reference(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias,
                                         double eps) {
  const char* op = "group_norm";
  reference::check_dtype(x, op);
  Values v = reference::read(x, op);
  const Channels s = channels_of(v, op);
  EMBER_CHECK(groups > 0 && s.c % groups == 0, op, ": expected num_groups > 0 dividing the ", s.c, " channels, got ",
              groups);
  const int64_t per_group = s.c / groups * s.hw;  // a group's elements are consecutive
  std::vector<Group> g(s.n * groups);
  for (int64_t i = 0; i < s.n * groups; ++i) {
    for (int64_t j = 0; j < per_group; ++j) g[i].elems.push_back(i * per_group + j);
  }
  const int64_t hw = s.hw, c = s.c;
  const Stats st = normalize(v, g, true, eps, read_param(weight, {c}, x.dtype(), op, "weight"),
                             read_param(bias, {c}, x.dtype(), op, "bias"), [=](int64_t k) { return k / hw % c; });
  return {reference::write(v, x.dtype()), reference::write({s.n, groups}, st.mean, x.dtype()),
          reference::write({s.n, groups}, st.rstd, x.dtype())};
}

std::vector<Tensor> batch_norm_reference(const Tensor& x, const Tensor& weight, const Tensor& bias,
                                         const Tensor& running_mean, const Tensor& running_var, bool training,
                                         double eps) {
  const char* op = "batch_norm";
  reference::check_dtype(x, op);
  Values v = reference::read(x, op);
  const Channels s = channels_of(v, op);
  std::optional<std::pair<Values, Values>> fixed;
  if (!training) {
    EMBER_CHECK(running_mean.defined() && running_var.defined(), op,
                ": running_mean and running_var must be given in evaluation mode (training=false)");
    fixed.emplace(*read_param(running_mean, {s.c}, x.dtype(), op, "running_mean"),
                  *read_param(running_var, {s.c}, x.dtype(), op, "running_var"));
  } else {
    EMBER_CHECK(s.n * s.hw > 1, op, ": expected more than 1 value per channel when training, got an input of shape ",
                IntArrayRef(v.sizes));
    read_param(running_mean, {s.c}, x.dtype(), op, "running_mean");  // checked, not used
    read_param(running_var, {s.c}, x.dtype(), op, "running_var");
  }
  std::vector<Group> g(s.c);  // channel c: hw elements of each of the N samples
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t j = 0; j < s.hw; ++j) g[c].elems.push_back((n * s.c + c) * s.hw + j);
    }
  }
  const int64_t hw = s.hw, c = s.c;
  const Stats st = normalize(
      v, g, true, eps, read_param(weight, {c}, x.dtype(), op, "weight"), read_param(bias, {c}, x.dtype(), op, "bias"),
      [=](int64_t k) { return k / hw % c; }, fixed);
  return {reference::write(v, x.dtype()), reference::write({s.c}, st.mean, x.dtype()),
          reference::write({s.c}, st.rstd, x.dtype())};
}

}  // namespace ember::cpu
