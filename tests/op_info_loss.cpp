// Op-info rows of the loss family (Note [The op-info table] in tests/op_info.h):
// cross_entropy_loss, nll_loss and their backwards, embedding and its
// backward, dropout. References are plain double loops over the host values.
//
// Class weights of Float64 samples are passed as float32: gradcheck treats
// every Float64 tensor as an input, and class weights have no gradient (as
// in PyTorch); the kernels read weights of any floating dtype.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/philox.h"
#include "tests/op_info.h"

namespace ember::testing {

namespace {


// ---- inputs ----

Tensor values(const Shape& shape, DType t, double lo, double hi, uint64_t seed) {
  manual_seed(seed);
  return (rand(shape, kFloat64) * (hi - lo) + lo).to(t);
}

// int64 class indices in [0, classes); flat positions in `ignored` hold -100.
Tensor classes(const Shape& shape, int64_t count, uint64_t seed, const std::vector<int64_t>& ignored = {}) {
  manual_seed(seed);
  Tensor t = randint(0, count, shape);
  for (int64_t k : ignored) t.data_ptr<int64_t>()[k] = -100;
  return t;
}

Tensor weights(int64_t count, DType t, uint64_t seed) {
  return values({count}, t == DType::Float64 ? DType::Float32 : t, 0.25, 2.0, seed);
}

IValue arg(const Tensor& t) { return IValue::Payload(t); }
IValue none() { return IValue(); }
IValue str(const char* s) { return IValue::Payload(std::string(s)); }
IValue int_arg(int64_t v) { return IValue::Payload(v); }
IValue float_arg(double v) { return IValue::Payload(v); }

Sample sample(std::string name, Stack args, std::string error = "") {
  return Sample{std::move(name), std::move(args), std::nullopt, std::move(error)};
}

// ---- class-index geometry and the per-row reference ----

struct Rows {
  int64_t M = 0, C = 0, S = 1;
};

// self (N, C, d...) or (C), target (N, d...) or (); an error text when they do not fit.
std::string class_rows(const HostTensor& x, const HostTensor& t, const RefArgs& a, size_t weight_arg, Rows& g) {
  if (t.dtype != DType::Int64) return "expected int64 class indices";
  if (x.dim() == 1) {
    if (t.dim() != 0) return "expects a 0-d target";
    g = {1, x.shape[0], 1};
  } else {
    bool ok = t.dim() == x.dim() - 1 && t.shape[0] == x.shape[0];
    for (int64_t d = 2; ok && d < x.dim(); ++d) ok = t.shape[d - 1] == x.shape[d];
    if (!ok) return "expects a target of shape";
    g.C = x.shape[1];
    for (int64_t d = 2; d < x.dim(); ++d) g.S *= x.shape[d];
    g.M = x.shape[0] * g.S;
  }
  if (!a.is_none(weight_arg) && a.tensor(weight_arg).numel() != g.C) return "one per class";
  return "";
}

// Where class c of row m sits in a row-major (N, C, d...) tensor.
int64_t flat(const Rows& g, int64_t m, int64_t c) { return ((m / g.S) * g.C + c) * g.S + m % g.S; }
double at(const HostTensor& x, const Rows& g, int64_t m, int64_t c) { return x.at(flat(g, m, c)); }

std::vector<double> class_weights(const RefArgs& a, size_t arg, int64_t count) {
  if (a.is_none(arg)) return std::vector<double>(static_cast<size_t>(count), 1.0);
  return a.tensor(arg).f;
}

bool valid_reduction(const std::string& r) { return r == "none" || r == "mean" || r == "sum"; }

// Everything a class-index loss reference needs, or the error it must raise.
struct ClassCase {
  std::string error;
  HostTensor x, t;
  Rows g;
  std::vector<double> w;
  std::string reduction;
  int64_t ignore = -100;
  double kept_weight = 0;  // D: the summed weights of the kept targets
};

ClassCase class_case(const RefArgs& a, size_t self, size_t weight, size_t reduction, size_t ignore) {
  ClassCase k;
  k.x = a.tensor(self);
  k.t = a.tensor(self + 1);
  k.error = class_rows(k.x, k.t, a, weight, k.g);
  if (!k.error.empty()) return k;
  k.reduction = a.str(reduction);
  if (!valid_reduction(k.reduction)) {
    k.error = "unknown reduction";
    return k;
  }
  k.w = class_weights(a, weight, k.g.C);
  k.ignore = a.integer(ignore);
  for (int64_t m = 0; m < k.g.M; ++m) {
    const int64_t c = k.t.i[m];
    if (c == k.ignore) continue;
    if (c < 0 || c >= k.g.C) {
      k.error = "is out of bounds";
      return k;
    }
    k.kept_weight += k.w[c];
  }
  return k;
}

// A loss of one value per row, reduced as the case says.
HostTensor reduce_rows(const ClassCase& k, const std::vector<double>& per_row, DType out) {
  if (k.reduction == "none") {
    HostTensor r(k.t.shape, out);
    for (int64_t m = 0; m < k.g.M; ++m) r.set(m, per_row[m]);
    return r;
  }
  double sum = 0;
  for (double v : per_row) sum += v;
  HostTensor r({}, out);
  r.set(0, k.reduction == "mean" ? sum / k.kept_weight : sum);
  return r;
}

double logsumexp_row(const ClassCase& k, int64_t m) {
  double mx = -std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < k.g.C; ++c) mx = std::max(mx, at(k.x, k.g, m, c));
  double s = 0;
  for (int64_t c = 0; c < k.g.C; ++c) s += std::exp(at(k.x, k.g, m, c) - mx);
  return mx + std::log(s);
}

// ---- cross_entropy_loss(self, target, weight, reduction, ignore_index, label_smoothing) ----

Expected cross_entropy_reference(const RefArgs& a) {
  const ClassCase k = class_case(a, 0, 2, 3, 4);
  if (!k.error.empty()) return Expected::raises(k.error);
  const double ls = a.number(5);
  if (ls < 0 || ls > 1) return Expected::raises("label_smoothing");
  std::vector<double> per_row(static_cast<size_t>(k.g.M), 0.0);
  for (int64_t m = 0; m < k.g.M; ++m) {
    const int64_t t = k.t.i[m];
    if (t == k.ignore) continue;
    const double lse = logsumexp_row(k, m);
    double smooth = 0;
    for (int64_t c = 0; c < k.g.C; ++c) smooth += k.w[c] * (lse - at(k.x, k.g, m, c));
    per_row[m] = (1 - ls) * k.w[t] * (lse - at(k.x, k.g, m, t)) + ls / static_cast<double>(k.g.C) * smooth;
  }
  return {{reduce_rows(k, per_row, a.out)}};
}

// (grad_output, self, target, weight, reduction, ignore_index, label_smoothing)
Expected cross_entropy_backward_reference(const RefArgs& a) {
  const ClassCase k = class_case(a, 1, 3, 4, 5);
  if (!k.error.empty()) return Expected::raises(k.error);
  const double ls = a.number(6);
  const HostTensor go = a.tensor(0);
  const double scale = k.reduction == "mean" ? 1.0 / k.kept_weight : 1.0;
  double wsum = 0;
  for (double v : k.w) wsum += v;
  HostTensor r(k.x.shape, a.out);
  for (int64_t m = 0; m < k.g.M; ++m) {
    const int64_t t = k.t.i[m];
    if (t == k.ignore) continue;
    const double g = go.at(k.reduction == "none" ? m : 0) * scale;
    const double lse = logsumexp_row(k, m);
    const double na = g * (1 - ls) * k.w[t], nb = g * ls / static_cast<double>(k.g.C);
    for (int64_t c = 0; c < k.g.C; ++c) {
      const double p = std::exp(at(k.x, k.g, m, c) - lse);
      r.set(flat(k.g, m, c), p * (na + nb * wsum) - nb * k.w[c] - (c == t ? na : 0.0));
    }
  }
  return {{r}};
}

std::vector<Sample> cross_entropy_samples(DType t, SampleSize size, bool backward) {
  // Prepends grad_output (shaped like the loss) for the backward op.
  auto make = [&](std::string name, const Tensor& x, const Tensor& target, const IValue& weight, const char* red,
                  int64_t ignore, double ls, std::string error = "") {
    Stack args = {arg(x), arg(target), weight, str(red), int_arg(ignore), float_arg(ls)};
    if (backward) {
      const bool none = std::string(red) == "none";
      const Tensor g = values(none ? target.sizes().vec() : Shape{}, t, -1.0, 1.0, 901);
      args.insert(args.begin(), arg(g));
    }
    return sample(std::move(name), std::move(args), std::move(error));
  };
  std::vector<Sample> out;
  if (size == SampleSize::Large) {
    out.push_back(make("large", values({100, 1000}, t, -4, 4, 1), classes({100}, 1000, 2, {7}),
                       arg(weights(1000, t, 3)), "mean", -100, 0.1));
    out.push_back(make("large_none", values({50, 2000}, t, -4, 4, 4), classes({50}, 2000, 5), none(), "none", -100, 0));
    return out;
  }
  out.push_back(make("basic", values({4, 5}, t, -3, 3, 10), classes({4}, 5, 11), none(), "mean", -100, 0));
  out.push_back(make("transposed_weight_none", values({6, 3}, t, -3, 3, 12).t(), classes({3}, 6, 13),
                     arg(weights(6, t, 14)), "none", -100, 0));
  out.push_back(make("sum_ignore", values({5, 3}, t, -3, 3, 15), classes({5}, 3, 16, {1, 3}), none(), "sum", -100, 0));
  out.push_back(make("smooth_weight_ignore", values({6, 4}, t, -3, 3, 17), classes({6}, 4, 18, {2}),
                     arg(weights(4, t, 19)), "mean", -100, 0.2));
  out.push_back(make("smooth_none", values({3, 5}, t, -3, 3, 20), classes({3}, 5, 21), none(), "none", -100, 0.3));
  out.push_back(make("nd", values({2, 3, 2, 2}, t, -3, 3, 22), classes({2, 2, 2}, 3, 23, {5}), none(), "mean", -100,
                     0.1));
  out.push_back(make("unbatched", values({7}, t, -3, 3, 24), classes({}, 7, 25), none(), "sum", -100, 0));
  out.push_back(make("batch1_wide", values({1, 37}, t, -3, 3, 26), classes({1}, 37, 27), none(), "mean", -100, 0));
  out.push_back(make("sliced", values({3, 9}, t, -3, 3, 28).slice(1, 1, std::nullopt, 2), classes({3}, 4, 29), none(),
                     "mean", 2, 0));
  out.push_back(make("target_out_of_range", values({3, 4}, t, -3, 3, 30), tensor({1, 4, 0}), none(), "mean", -100, 0,
                     "is out of bounds"));
  out.push_back(make("negative_target", values({3, 4}, t, -3, 3, 31), tensor({1, -1, 0}), none(), "mean", -100, 0,
                     "is out of bounds"));
  out.push_back(make("bad_reduction", values({3, 4}, t, -3, 3, 32), classes({3}, 4, 33), none(), "avg", -100, 0,
                     "unknown reduction"));
  out.push_back(make("weight_size", values({3, 4}, t, -3, 3, 34), classes({3}, 4, 35), arg(weights(5, t, 36)), "mean",
                     -100, 0, "one per class"));
  out.push_back(make("target_shape", values({3, 4}, t, -3, 3, 37), classes({4}, 4, 38), none(), "mean", -100, 0,
                     "expects a target of shape"));
  out.push_back(make("float_target", values({3, 4}, t, -3, 3, 39), values({3}, DType::Float32, 0, 3, 40), none(),
                     "mean", -100, 0, "expected int64 class indices"));
  if (!backward) {
    out.push_back(make("smoothing_range", values({3, 4}, t, -3, 3, 41), classes({3}, 4, 42), none(), "mean", -100, 1.5,
                       "label_smoothing"));
  }
  return out;
}

// ---- nll_loss(self, target, weight, reduction, ignore_index) ----

Expected nll_reference(const RefArgs& a) {
  const ClassCase k = class_case(a, 0, 2, 3, 4);
  if (!k.error.empty()) return Expected::raises(k.error);
  std::vector<double> per_row(static_cast<size_t>(k.g.M), 0.0);
  for (int64_t m = 0; m < k.g.M; ++m) {
    const int64_t t = k.t.i[m];
    if (t != k.ignore) per_row[m] = -k.w[t] * at(k.x, k.g, m, t);
  }
  return {{reduce_rows(k, per_row, a.out)}};
}

// (grad_output, self, target, weight, reduction, ignore_index)
Expected nll_backward_reference(const RefArgs& a) {
  const ClassCase k = class_case(a, 1, 3, 4, 5);
  if (!k.error.empty()) return Expected::raises(k.error);
  const HostTensor go = a.tensor(0);
  const double scale = k.reduction == "mean" ? 1.0 / k.kept_weight : 1.0;
  HostTensor r(k.x.shape, a.out);
  for (int64_t m = 0; m < k.g.M; ++m) {
    const int64_t t = k.t.i[m];
    if (t != k.ignore) r.set(flat(k.g, m, t), -k.w[t] * go.at(k.reduction == "none" ? m : 0) * scale);
  }
  return {{r}};
}

std::vector<Sample> nll_samples(DType t, SampleSize size, bool backward) {
  auto make = [&](std::string name, const Tensor& x, const Tensor& target, const IValue& weight, const char* red,
                  int64_t ignore, std::string error = "") {
    Stack args = {arg(x), arg(target), weight, str(red), int_arg(ignore)};
    if (backward) {
      const bool none = std::string(red) == "none";
      args.insert(args.begin(), arg(values(none ? target.sizes().vec() : Shape{}, t, -1.0, 1.0, 902)));
    }
    return sample(std::move(name), std::move(args), std::move(error));
  };
  std::vector<Sample> out;
  if (size == SampleSize::Large) {
    out.push_back(make("large", values({1000, 100}, t, -4, 0, 50), classes({1000}, 100, 51, {3}),
                       arg(weights(100, t, 52)), "mean", -100));
    return out;
  }
  out.push_back(make("basic", values({4, 5}, t, -4, 0, 53), classes({4}, 5, 54), none(), "mean", -100));
  out.push_back(make("weight_none", values({5, 3}, t, -4, 0, 55), classes({5}, 3, 56, {0}), arg(weights(3, t, 57)),
                     "none", -100));
  out.push_back(make("weight_sum_ignore", values({6, 4}, t, -4, 0, 58), classes({6}, 4, 59), arg(weights(4, t, 60)),
                     "sum", 1));
  out.push_back(make("transposed", values({4, 3}, t, -4, 0, 61).t(), classes({3}, 4, 62), none(), "mean", -100));
  out.push_back(make("nd", values({2, 4, 3}, t, -4, 0, 63), classes({2, 3}, 4, 64, {4}), arg(weights(4, t, 65)),
                     "mean", -100));
  out.push_back(make("unbatched", values({6}, t, -4, 0, 66), classes({}, 6, 67), none(), "none", -100));
  out.push_back(make("target_out_of_range", values({3, 4}, t, -4, 0, 68), tensor({0, 2, 9}), none(), "mean", -100,
                     "is out of bounds"));
  out.push_back(make("bad_reduction", values({3, 4}, t, -4, 0, 69), classes({3}, 4, 70), none(), "all", -100,
                     "unknown reduction"));
  out.push_back(make("weight_size", values({3, 4}, t, -4, 0, 71), classes({3}, 4, 72), arg(weights(3, t, 73)), "mean",
                     -100, "one per class"));
  out.push_back(make("target_shape", values({3, 4}, t, -4, 0, 74), classes({3, 2}, 4, 75), none(), "mean", -100,
                     "expects a target of shape"));
  return out;
}

// ---- embedding(weight, indices, padding_idx) and embedding_backward(grad, indices, num_weights, padding_idx) ----

Expected embedding_reference(const RefArgs& a) {
  const HostTensor w = a.tensor(0), ids = a.tensor(1);
  if (w.dim() != 2) return Expected::raises("expected a 2-d weight");
  const int64_t V = w.shape[0], D = w.shape[1];
  Shape shape = ids.shape;
  shape.push_back(D);
  HostTensor r(shape, a.out);
  for (int64_t k = 0; k < ids.numel(); ++k) {
    const int64_t id = ids.i[k];
    if (id < 0 || id >= V) return Expected::raises("is out of range");
    for (int64_t d = 0; d < D; ++d) r.set(k * D + d, w.f[id * D + d]);
  }
  return {{r}};
}

Expected embedding_backward_reference(const RefArgs& a) {
  const HostTensor g = a.tensor(0), ids = a.tensor(1);
  const int64_t V = a.integer(2), D = g.shape.back();
  const int64_t pad = a.is_none(3) ? -1 : a.integer(3);
  std::vector<double> acc(static_cast<size_t>(V * D), 0.0);
  for (int64_t k = 0; k < ids.numel(); ++k) {
    const int64_t id = ids.i[k];
    if (id < 0 || id >= V) return Expected::raises("is out of range");
    if (id == pad) continue;
    for (int64_t d = 0; d < D; ++d) acc[id * D + d] += g.f[k * D + d];
  }
  HostTensor r({V, D}, a.out);
  for (int64_t k = 0; k < V * D; ++k) r.set(k, acc[k]);
  return {{r}};
}

IValue opt_int(std::optional<int64_t> v) { return v ? int_arg(*v) : none(); }

std::vector<Sample> embedding_samples(DType t, SampleSize size) {
  std::vector<Sample> out;
  if (size == SampleSize::Large) {
    out.push_back(sample("large", {arg(values({1000, 100}, t, -2, 2, 80)), arg(classes({1000}, 1000, 81)), none()}));
    return out;
  }
  const Tensor ids = tensor({2, 5, 2, 6, 0, 5, 5, 1});
  out.push_back(sample("basic", {arg(values({7, 3}, t, -2, 2, 82)), arg(ids.reshape({2, 4})), none()}));
  // The padding row gets no gradient by definition, not by derivative: in Float64 (gradcheck's dtype) the
  // padding id is one the sample does not use.
  out.push_back(sample("padding", {arg(values({7, 3}, t, -2, 2, 83)), arg(ids), opt_int(t == DType::Float64 ? 3 : 2)}));
  out.push_back(sample("transposed_weight", {arg(values({4, 7}, t, -2, 2, 84).t()), arg(ids), none()}));
  out.push_back(sample("int32_ids", {arg(values({7, 2}, t, -2, 2, 85)), arg(ids.to(DType::Int32)), none()}));
  out.push_back(sample("scalar_id", {arg(values({7, 2}, t, -2, 2, 86)), arg(tensor({3}).squeeze()), none()}));
  out.push_back(sample("id_out_of_range", {arg(values({7, 3}, t, -2, 2, 87)), arg(tensor({1, 7})), none()},
                       "is out of range"));
  out.push_back(sample("negative_id", {arg(values({7, 3}, t, -2, 2, 88)), arg(tensor({-1, 2})), none()},
                       "is out of range"));
  out.push_back(sample("weight_1d", {arg(values({7}, t, -2, 2, 89)), arg(tensor({1, 2})), none()},
                       "expected a 2-d weight"));
  return out;
}

std::vector<Sample> embedding_backward_samples(DType t, SampleSize size) {
  std::vector<Sample> out;
  if (size == SampleSize::Large) {
    out.push_back(sample("large", {arg(values({1000, 100}, t, -2, 2, 90)), arg(classes({1000}, 50, 91)), int_arg(50),
                                   opt_int(7)}));
    return out;
  }
  const Tensor ids = tensor({2, 5, 2, 6, 0, 5, 5, 1});
  out.push_back(sample("basic", {arg(values({2, 4, 3}, t, -2, 2, 92)), arg(ids.reshape({2, 4})), int_arg(7), none()}));
  out.push_back(sample("padding", {arg(values({8, 3}, t, -2, 2, 93)), arg(ids), int_arg(8), opt_int(5)}));
  out.push_back(sample("transposed_grad", {arg(values({3, 8}, t, -2, 2, 94).t()), arg(ids), int_arg(7), none()}));
  out.push_back(sample("id_out_of_range", {arg(values({2, 3}, t, -2, 2, 95)), arg(tensor({1, 7})), int_arg(7), none()},
                       "is out of range"));
  return out;
}

// ---- dropout(self, p, seed, offset) ----

Expected dropout_reference(const RefArgs& a) {
  const HostTensor x = a.tensor(0);
  const double p = a.number(1);
  if (p < 0 || p > 1) return Expected::raises("between 0 and 1");
  const uint64_t seed = static_cast<uint64_t>(a.integer(2)), offset = static_cast<uint64_t>(a.integer(3));
  HostTensor r(x.shape, a.out);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Philox4x32 block = philox_block(seed, offset + static_cast<uint64_t>(i / 4));
    const bool keep = p < 1 && uniform_float(block.c[i % 4]) >= static_cast<float>(p);
    r.set(i, keep ? x.f[i] / (1 - p) : 0.0);
  }
  return {{r}};
}

std::vector<Sample> dropout_samples(DType t, SampleSize size) {
  auto make = [&](std::string name, const Tensor& x, double p, int64_t seed, int64_t offset, std::string error = "") {
    return sample(std::move(name), {arg(x), float_arg(p), int_arg(seed), int_arg(offset)}, std::move(error));
  };
  std::vector<Sample> out;
  if (size == SampleSize::Large) {
    out.push_back(make("large", values({317, 331}, t, -2, 2, 100), 0.3, 5, 11));
    return out;
  }
  out.push_back(make("basic", values({4, 5}, t, -2, 2, 101), 0.3, 7, 3));
  out.push_back(make("transposed", values({5, 3}, t, -2, 2, 102).t(), 0.5, 8, 0));
  out.push_back(make("odd_length", values({13}, t, -2, 2, 103), 0.2, 9, 1));
  out.push_back(make("p0", values({2, 3}, t, -2, 2, 104), 0.0, 10, 0));
  out.push_back(make("p1", values({2, 3}, t, -2, 2, 105), 1.0, 11, 0));
  out.push_back(make("p_above_1", values({2, 3}, t, -2, 2, 106), 1.5, 12, 0, "between 0 and 1"));
  out.push_back(make("p_negative", values({2, 3}, t, -2, 2, 107), -0.1, 13, 0, "between 0 and 1"));
  return out;
}

// ---- mse_loss(self, target, reduction) and mse_loss_backward(grad, self, target, reduction) ----

// The error a (self, target, reduction) triple must raise, or "".
std::string mse_error(const HostTensor& x, const HostTensor& y, const std::string& reduction) {
  if (x.dtype != y.dtype) return "of the same dtype";
  if (x.shape != y.shape) return "target of the input's shape";
  if (!valid_reduction(reduction)) return "unknown reduction";
  return "";
}

Expected mse_reference(const RefArgs& a) {
  const HostTensor x = a.tensor(0), y = a.tensor(1);
  const std::string red = a.str(2);
  if (std::string e = mse_error(x, y, red); !e.empty()) return Expected::raises(e);
  if (red == "none") {
    HostTensor r(x.shape, a.out);
    for (int64_t i = 0; i < x.numel(); ++i) r.set(i, (x.f[i] - y.f[i]) * (x.f[i] - y.f[i]));
    return {{r}};
  }
  double sum = 0;
  for (int64_t i = 0; i < x.numel(); ++i) sum += (x.f[i] - y.f[i]) * (x.f[i] - y.f[i]);
  HostTensor r({}, a.out);
  r.set(0, red == "mean" ? sum / static_cast<double>(x.numel()) : sum);
  return {{r}};
}

Expected mse_backward_reference(const RefArgs& a) {
  const HostTensor g = a.tensor(0), x = a.tensor(1), y = a.tensor(2);
  const std::string red = a.str(3);
  if (std::string e = mse_error(x, y, red); !e.empty()) return Expected::raises(e);
  const double k = red == "mean" ? 2.0 / static_cast<double>(x.numel()) : 2.0;
  HostTensor r(x.shape, a.out);
  for (int64_t i = 0; i < x.numel(); ++i) r.set(i, k * g.f[red == "none" ? i : 0] * (x.f[i] - y.f[i]));
  return {{r}};
}

std::vector<Sample> mse_samples(DType t, SampleSize size, bool backward) {
  auto make = [&](std::string name, const Tensor& x, const Tensor& y, const char* red, std::string error = "") {
    Stack args = {arg(x), arg(y), str(red)};
    if (backward) {
      const bool none = std::string(red) == "none";
      args.insert(args.begin(), arg(values(none ? x.sizes().vec() : Shape{}, t, -1.0, 1.0, 903)));
    }
    return sample(std::move(name), std::move(args), std::move(error));
  };
  std::vector<Sample> out;
  if (size == SampleSize::Large) {
    out.push_back(make("large_mean", values({317, 331}, t, -2, 2, 120), values({317, 331}, t, -2, 2, 121), "mean"));
    out.push_back(make("large_none", values({317, 331}, t, -2, 2, 122), values({317, 331}, t, -2, 2, 123), "none"));
    return out;
  }
  out.push_back(make("mean", values({3, 4, 5}, t, -2, 2, 124), values({3, 4, 5}, t, -2, 2, 125), "mean"));
  out.push_back(make("sum", values({37}, t, -2, 2, 126), values({37}, t, -2, 2, 127), "sum"));
  out.push_back(make("none_transposed", values({4, 3}, t, -2, 2, 128).t(), values({3, 4}, t, -2, 2, 129), "none"));
  out.push_back(make("sliced", values({3, 9}, t, -2, 2, 130).slice(1, 0, std::nullopt, 2),
                     values({3, 5}, t, -2, 2, 131), "mean"));
  out.push_back(make("0d", values({}, t, -2, 2, 132), values({}, t, -2, 2, 133), "sum"));
  out.push_back(make("empty_sum", values({0, 3}, t, -2, 2, 134), values({0, 3}, t, -2, 2, 135), "sum"));
  out.push_back(make("shape_mismatch", values({3, 4}, t, -2, 2, 136), values({4, 3}, t, -2, 2, 137), "mean",
                     "target of the input's shape"));
  out.push_back(make("dtype_mismatch", values({3}, t, -2, 2, 138),
                     values({3}, t == DType::Float64 ? DType::Float32 : DType::Float64, -2, 2, 139), "mean",
                     "of the same dtype"));
  out.push_back(make("bad_reduction", values({3}, t, -2, 2, 140), values({3}, t, -2, 2, 141), "avg",
                     "unknown reduction"));
  return out;
}

const std::vector<DType> kFloats = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

}  // namespace

void add_loss_rows(std::vector<OpInfo>& rows) {
  rows.push_back(OpInfo{.name = "cross_entropy_loss",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = [](DType t, SampleSize s) { return cross_entropy_samples(t, s, false); },
                        .reference = cross_entropy_reference,
                        .accumulation = largest_arg_numel,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "cross_entropy_loss_backward",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = [](DType t, SampleSize s) { return cross_entropy_samples(t, s, true); },
                        .reference = cross_entropy_backward_reference,
                        .accumulation = largest_arg_numel,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "nll_loss",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = [](DType t, SampleSize s) { return nll_samples(t, s, false); },
                        .reference = nll_reference,
                        .accumulation = largest_arg_numel,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "nll_loss_backward",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = [](DType t, SampleSize s) { return nll_samples(t, s, true); },
                        .reference = nll_backward_reference,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "mse_loss",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = [](DType t, SampleSize s) { return mse_samples(t, s, false); },
                        .reference = mse_reference,
                        .accumulation = largest_arg_numel,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "mse_loss_backward",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = [](DType t, SampleSize s) { return mse_samples(t, s, true); },
                        .reference = mse_backward_reference,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "embedding",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = embedding_samples,
                        .reference = embedding_reference,
                        .exact = true,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "embedding_backward",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = embedding_backward_samples,
                        .reference = embedding_backward_reference,
                        .accumulation = largest_arg_numel,
                        .differentiable = true});
  rows.push_back(OpInfo{.name = "dropout",
                        .dtypes = kFloats,
                        .out_dtype = same_dtype,
                        .samples = dropout_samples,
                        .reference = dropout_reference,
                        .differentiable = true});
}

}  // namespace ember::testing
