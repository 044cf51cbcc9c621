// Op-info rows: other elementwise ops (gelu, softplus, predicates, clamp,
// masked_fill). Note [The op-info table] is in tests/op_info.h.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

#include "tests/op_info.h"
#include "tests/op_info_error_inputs.h"
#include "tests/op_info_inputs.h"

namespace ember::testing {
namespace {

// lerp(self, end, weight) and lerp_: self, end and a tensor weight of one
// dtype, broadcast (in place, to self's shape); a Scalar weight as a wrapped number.
std::vector<Sample> lerp_samples(DType t, SampleSize size, bool in_place) {
  std::vector<Sample> out;
  auto add = [&](std::string name, const Tensor& self, const Tensor& end, const Tensor& w, std::string err = "") {
    out.push_back({std::move(name), {arg(self), arg(end), arg(w)}, {}, std::move(err)});
  };
  if (size == SampleSize::Large) {
    add("large", make_input({256, 400}, t), make_input({256, 400}, t, kTransposed), make_input({400}, t));
    return out;
  }
  add("contiguous", make_input({3, 5}, t), make_input({3, 5}, t), make_input({3, 5}, t, Domain::Unit));
  add("extrapolate", make_input({3, 5}, t), make_input({3, 5}, t), make_input({3, 5}, t));
  add("broadcast", make_input(in_place ? Shape{2, 4, 5} : Shape{2, 1, 5}, t), make_input({4, 1}, t),
      make_input({5}, t, Domain::Unit));
  add("transposed", make_input({3, 5}, t, kTransposed), make_input({3, 5}, t, kSliced),
      make_input({3, 5}, t, Domain::Unit, kTransposed));
  add("scalar_weight_low", make_input({2, 3}, t), make_input({2, 3}, t), wrap_scalar(Scalar(0.25)));
  add("scalar_weight_high", make_input({2, 3}, t), make_input({2, 3}, t), wrap_scalar(Scalar(0.75)));
  add("weight_ends", make_input({2, 3}, t), make_input({2, 3}, t), from_values({2, 1}, t, {0, 1}));
  add("empty", make_input({0, 3}, t), make_input({0, 3}, t), make_input({3}, t));
  add("0d", make_input({}, t), make_input({}, t), make_input({}, t, Domain::Unit));
  if (in_place) add("self_grows", make_input({1, 3}, t), make_input({2, 3}, t), wrap_scalar(Scalar(0.5)), "lerp");
  add("special", from_values({kNumSpecials}, t, kSpecials), make_input({kNumSpecials}, t), wrap_scalar(Scalar(0.5)));
  const DType other = t == DType::Float64 ? DType::Float32 : DType::Float64;
  add("end_dtype", make_input({3}, t), make_input({3}, other), wrap_scalar(Scalar(0.5)), "dtype");
  add("weight_dtype", make_input({3}, t), make_input({3}, t), make_input({3}, other), "dtype");
  return out;
}

// isnan, isinf, logical_not: self alone.
std::vector<Sample> predicate_samples(DType t, SampleSize size) {
  std::vector<Sample> s = unary_samples(t, size, Domain::Any);
  return size == SampleSize::Large ? s : joined(s, unary_error_samples(t, Domain::Any, false));
}

Expected lerp_ref(const RefArgs& a, bool in_place) {
  const HostTensor x = a.tensor(0), y = a.tensor(1), w = a.tensor(2);
  const std::optional<Shape> s1 = broadcast(x.shape, y.shape);
  const std::optional<Shape> s = s1 ? broadcast(*s1, w.shape) : std::nullopt;
  if (!s || (in_place && *s != x.shape)) return Expected::raises("");
  HostTensor r(*s, a.out);
  for_each_index(*s, [&](const Shape& idx, int64_t k) {
    const double xv = x.f[source_index(idx, x.shape)], yv = y.f[source_index(idx, y.shape)];
    const double wv = round_to(a.out, w.f[source_index(idx, w.shape)]);  // a Scalar weight is cast to self's dtype
    r.set(k, std::fabs(wv) < 0.5 ? xv + wv * (yv - xv) : yv - (yv - xv) * (1 - wv));
  });
  return {{r}, false, ""};
}

}  // namespace

void add_elementwise_rows(std::vector<OpInfo>& rows) {
  rows.push_back({
      .name = "gelu",
      .dtypes = kFloating,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = unary_samples(t, size, Domain::Any, {str_arg("none")});
        if (size == SampleSize::Small) {
          s = joined(s, prefixed(unary_samples(t, size, Domain::Any, {str_arg("tanh")}), "tanh_"));
          s.push_back({"bad_approximate", {arg(make_input({3}, t)), str_arg("sigmoid")}, {}});
        }
        return s;
      },
      .reference = [](const RefArgs& a) -> Expected {
        const std::string mode = a.str(1);
        if (mode != "none" && mode != "tanh") return Expected::raises("approximate");
        return map1(a.tensor(0), a.out, [tanh = mode == "tanh"](double x) {
          if (tanh) return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
          return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
        });
      },
      .divergences = {{"special", {}, "gelu(-inf): torch 1.13 gives nan (-inf * 0); ember gives -0"},
                      {"tanh_special", {}, "gelu(-inf, 'tanh'): torch 1.13 gives nan; ember gives -0"}},
  });
  rows.push_back({
      .name = "softplus",
      .dtypes = kFloating,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = unary_samples(t, size, Domain::Any, {arg(Scalar(1)), arg(Scalar(20))});
        if (size == SampleSize::Small) {
          s = joined(s, prefixed(unary_samples(t, size, Domain::Any, {arg(Scalar(2)), arg(Scalar(1.5))}), "beta2_"));
          s = joined(s, unary_error_samples(t, Domain::Any, false, {arg(Scalar(1)), arg(Scalar(20))}));
        }
        return s;
      },
      .reference = [](const RefArgs& a) {
        const double beta = a.number(1), threshold = a.number(2);
        return map1(a.tensor(0), a.out, [=](double x) {
          return x * beta > threshold ? x : std::log1p(std::exp(beta * x)) / beta;
        });
      },
  });
  rows.push_back({.name = "isnan", .dtypes = kAll, .out_dtype = bool_dtype,
                  .samples = predicate_samples,
                  .reference = [](const RefArgs& a) {
                    return map1(a.tensor(0), a.out, [](auto x) { return x != x; });
                  }});
  rows.push_back({.name = "isinf", .dtypes = kAll, .out_dtype = bool_dtype,
                  .samples = predicate_samples,
                  .reference = [](const RefArgs& a) {
                    return map1(a.tensor(0), a.out, [](auto x) { return std::isinf(static_cast<double>(x)); });
                  }});
  rows.push_back({.name = "logical_not", .dtypes = kAll, .out_dtype = bool_dtype,
                  .samples = predicate_samples,
                  .reference = [](const RefArgs& a) {
                    return map1(a.tensor(0), a.out, [](auto x) { return x == 0; });
                  }});

  // clamp(self, min?, max?): NaN stays NaN; min is applied first, so min > max gives max.
  for (const bool ip : {false, true}) {
    rows.push_back({
        .name = ip ? "clamp_" : "clamp",
        .dtypes = kNumeric,
        .out_dtype = same_dtype,
        .kind = ip ? OpKind::InPlace : OpKind::Functional,
        .samples = [ip](DType t, SampleSize size) {
          const double lo_v = is_floating_point(t) ? -1.5 : t == DType::UInt8 ? 2 : -3;
          const double hi_v = is_floating_point(t) ? 2.0 : t == DType::UInt8 ? 11 : 4;
          const IValue lo = arg(scalar_of(t, lo_v)), hi = arg(scalar_of(t, hi_v));
          std::vector<Sample> s = unary_samples(t, size, Domain::Any, {lo, hi});
          if (size == SampleSize::Large) return s;
          s.push_back({"min_only", {arg(make_input({3, 5}, t)), lo, none_arg()}, {}});
          s.push_back({"max_only", {arg(make_input({3, 5}, t, kTransposed)), none_arg(), hi}, {}});
          s.push_back({"min_above_max", {arg(make_input({3, 5}, t)), hi, lo}, {}});
          s.push_back({"no_bounds", {arg(make_input({3, 5}, t)), none_arg(), none_arg()}, {}});
          if (!is_floating_point(t)) {  // float bounds promote an integer tensor to float32 (an error in place)
            Sample f{"float_bounds", {arg(make_input({3, 5}, t)), arg(Scalar(-1.5)), arg(Scalar(2.5))}};
            if (ip) f.error = "clamp";
            else f.out_dtype = DType::Float32;
            s.push_back(std::move(f));
          }
          return s;
        },
        .reference = [](const RefArgs& a) -> Expected {
          if (a.is_none(1) && a.is_none(2)) return Expected::raises("min");
          const bool has_lo = !a.is_none(1), has_hi = !a.is_none(2);
          const double lo = has_lo ? a.number(1) : 0, hi = has_hi ? a.number(2) : 0;
          return map1(a.tensor(0), a.out, [=](auto x) {
            using V = decltype(x);
            if (x != x) return x;
            if (has_lo && x < static_cast<V>(lo)) x = static_cast<V>(lo);
            if (has_hi && x > static_cast<V>(hi)) x = static_cast<V>(hi);
            return x;
          });
        },
        .exact = true,
    });
  }

  for (const bool ip : {false, true}) {
    rows.push_back({.name = ip ? "lerp_" : "lerp",
                    .dtypes = kFloating,
                    .out_dtype = same_dtype,
                    .kind = ip ? OpKind::InPlace : OpKind::Functional,
                    .samples = [ip](DType t, SampleSize size) { return lerp_samples(t, size, ip); },
                    .reference = [ip](const RefArgs& a) { return lerp_ref(a, ip); }});
  }

  // masked_fill(self, mask, value): value where the (broadcast) mask is true.
  for (const bool ip : {false, true}) {
    rows.push_back({
        .name = ip ? "masked_fill_" : "masked_fill",
        .dtypes = kAll,
        .out_dtype = same_dtype,
        .kind = ip ? OpKind::InPlace : OpKind::Functional,
        .samples = [](DType t, SampleSize size) {
          std::vector<Sample> out;
          const Scalar value = scalar_of(t, is_floating_point(t) ? -7.25 : t == DType::Bool ? 1 : 7);
          auto add = [&](std::string name, const Tensor& self, Shape mask, const Scalar& v) {
            out.push_back({std::move(name), {arg(self), arg(make_input(mask, DType::Bool)), arg(v)}});
          };
          if (size == SampleSize::Large) {
            add("large", make_input({256, 400}, t), {256, 400}, value);
            return out;
          }
          add("contiguous", make_input({3, 5}, t), {3, 5}, value);
          add("broadcast_mask", make_input({2, 3, 5}, t), {3, 1}, value);
          add("transposed", make_input({3, 5}, t, kTransposed), {5}, value);
          add("sliced", make_input({3, 5}, t, kSliced), {3, 5}, value);
          add("empty", make_input({0, 5}, t), {5}, value);
          add("0d", make_input({}, t), {}, value);
          add("0d_mask", make_input({2, 3}, t), {}, value);
          add("mask_grows_self", make_input({1, 5}, t), {3, 5}, value);  // the result grows; an error in place
          if (is_floating_point(t)) add("nan_value", make_input({3, 5}, t), {3, 5}, Scalar(kNaN));
          else add("float_value", make_input({3, 5}, t), {3, 5}, Scalar(2.5));  // truncates toward zero
          add("mask_no_broadcast", make_input({3, 5}, t), {4, 5}, value);
          out.back().error = "cannot be broadcast";
          add("mask_not_bool", make_input({3, 5}, t), {3, 5}, value);
          out.back().args[1] = arg(make_input({3, 5}, DType::UInt8));
          out.back().error = "bool";
          out.push_back(undefined_input(out.front(), 1));
          return out;
        },
        .reference = [ip](const RefArgs& a) -> Expected {
          const HostTensor self = a.tensor(0), mask = a.tensor(1);
          const double v = a.number(2);
          const std::optional<Shape> s = broadcast(self.shape, mask.shape);
          if (!s || (ip && *s != self.shape)) return Expected::raises("");
          HostTensor r(*s, a.out);
          // Only integer results read the value as an integer (a NaN has none).
          const int64_t vi = r.floating() ? 0 : a.integer(2);
          for_each_index(*s, [&](const Shape& idx, int64_t k) {
            const int64_t j = source_index(idx, self.shape);
            if (mask.i[source_index(idx, mask.shape)]) {
              if (r.floating()) r.set(k, v);
              else r.set_int(k, vi);
            } else if (r.floating()) {
              r.set(k, self.f[j]);
            } else {
              r.set_int(k, self.i[j]);
            }
          });
          return {{r}, false, ""};
        },
        .exact = true,
    });
  }
}

}  // namespace ember::testing
