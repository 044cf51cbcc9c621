// Op-info rows: binary elementwise ops (Note [The op-info table] in tests/op_info.h).
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

using BinaryFn = std::function<Expected(const RefArgs&, bool in_place)>;

// A binary op, and its in-place form `name_` when in_place is set.
struct BinarySpec {
  std::string name{};
  std::vector<DType> dtypes{};
  DType (*out)(DType) = same_dtype;
  Domain da = Domain::Any, db = Domain::Any;
  bool alpha = false;     // takes `Scalar alpha` after other
  bool in_place = false;  // has a `name_` form
  std::vector<DType> in_place_rejects{};
  BinaryFn ref{};
  std::vector<Divergence> divergences{};
};

void add_binary(std::vector<OpInfo>& rows, const BinarySpec& b) {
  for (const bool ip : {false, true}) {
    if (ip && !b.in_place) break;
    OpInfo r;
    r.name = ip ? b.name + "_" : b.name;
    r.dtypes = b.dtypes;
    r.rejects = ip ? b.in_place_rejects : std::vector<DType>{};
    r.out_dtype = ip ? same_dtype : b.out;
    r.kind = ip ? OpKind::InPlace : OpKind::Functional;
    r.samples = [b, ip](DType t, SampleSize size) {
      const Stack extra = b.alpha ? Stack{arg(Scalar(1))} : Stack{};
      std::vector<Sample> s = binary_samples(t, size, b.da, b.db, ip, extra);
      if (size == SampleSize::Large) return s;
      s = joined(s, broadcast_error_samples(t, b.da, b.db, ip, extra));
      if (b.alpha) {
        const Scalar alpha = is_floating_point(t) ? Scalar(0.5) : t == DType::Bool ? Scalar(true) : Scalar(2);
        s.push_back({"alpha", {arg(make_input({3, 5}, t, b.da)), arg(make_input({3, 5}, t, b.db)), arg(alpha)}});
      }
      if (!is_floating_point(t)) {
        // An integer or bool tensor with a float Scalar computes in float32, which self cannot hold in place.
        Sample f{"scalar_float", concat({arg(make_input({2, 3}, t, b.da)), arg(wrap_scalar(Scalar(2.5)))}, extra)};
        if (ip) f.error = b.name;
        else f.out_dtype = b.out(DType::Float32);
        s.push_back(std::move(f));
      }
      return s;
    };
    r.reference = [ref = b.ref, ip](const RefArgs& a) { return ref(a, ip); };
    r.exact = b.name == "maximum" || b.name == "minimum";  // selects an input value (Note [Tolerances])
    r.divergences = b.divergences;
    rows.push_back(std::move(r));
  }
}

// A reference for out = f(self, other).
template <class F>
BinaryFn binary_ref(F f) {
  return [f](const RefArgs& a, bool ip) { return map2(a.tensor(0), a.tensor(1), a.out, f, ip); };
}

// Python's %: the result takes the divisor's sign.
template <class V>
V floor_mod(V x, V y) {
  V r;
  if constexpr (std::is_floating_point_v<V>) r = std::fmod(x, y);
  else r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}

// floor(x / y) as PyTorch defines it for floats: x / y for a zero divisor,
// NaN for an infinite x, 0 or -1 for an infinite y, and a zero keeps the
// quotient's sign.
double floor_divide(double x, double y) {
  if (y == 0) return x / y;
  if (std::isnan(x) || std::isnan(y) || std::isinf(x)) return kNaN;
  if (std::isinf(y)) return x == 0 || (x < 0) == (y < 0) ? std::copysign(0.0, x / y) : -1.0;
  const double q = std::floor(x / y);
  return q == 0 ? std::copysign(0.0, x / y) : q;
}

// Integer power; negative exponents give 0 except for bases 1 and -1 (PyTorch's tensor-tensor rule).
int64_t int_pow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? (e % 2 == 0 ? 1 : -1) : 0;
  int64_t r = 1;
  for (int64_t k = 0; k < e; ++k) r *= base;
  return r;
}

}  // namespace

void add_binary_rows(std::vector<OpInfo>& rows) {
  // alpha is exact in double for the samples' values.
  auto add_sub = [](double sign) {
    return [sign](const RefArgs& a, bool ip) {
      const double al = sign * a.number(2);
      const int64_t ai = static_cast<int64_t>(sign) * a.integer(2);
      return map2(a.tensor(0), a.tensor(1), a.out, [al, ai](auto x, auto y) {
        if constexpr (std::is_floating_point_v<decltype(x)>) return x + al * y;
        else return x + ai * y;
      }, ip);
    };
  };
  add_binary(rows, {.name = "add", .dtypes = kAll, .alpha = true, .in_place = true, .ref = add_sub(1)});
  add_binary(rows, {.name = "sub", .dtypes = kNumeric, .alpha = true, .in_place = true, .ref = add_sub(-1)});
  add_binary(rows, {.name = "mul", .dtypes = kAll, .in_place = true,
                    .ref = binary_ref([](auto x, auto y) { return x * y; })});
  add_binary(rows, {.name = "div", .dtypes = kAll, .out = float_of_int, .db = Domain::NonZero, .in_place = true,
                    .in_place_rejects = kIntegral,
                    .ref = binary_ref([](auto x, auto y) { return static_cast<double>(x) / static_cast<double>(y); })});
  // div(rounding_mode="floor" | "trunc"): integers stay integers, and an integer zero divisor is an error.
  rows.push_back({
      .name = "div_mode",
      .dtypes = kNumeric,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> s = binary_samples(t, size, Domain::Any, Domain::NonZero, false, {str_arg("floor")});
        if (size == SampleSize::Large) return s;
        s = joined(s, prefixed(binary_samples(t, size, Domain::Any, Domain::NonZero, false, {str_arg("trunc")}),
                               "trunc_"));
        s.push_back({"bad_mode", {arg(make_input({3}, t)), arg(make_input({3}, t, Domain::NonZero)), str_arg("round")},
                     {}, "rounding_mode"});
        if (!is_floating_point(t)) {
          s.push_back({"zero_divisor", {arg(make_input({3}, t)), arg(from_values({3}, t, {1, 0, 2})), str_arg("floor")},
                       {}, "zero"});
        }
        return s;
      },
      .reference = [](const RefArgs& a) {
        const bool floor_mode = a.str(2) == "floor";
        return map2(a.tensor(0), a.tensor(1), a.out, [floor_mode](auto x, auto y) {
          const double q = static_cast<double>(x) / static_cast<double>(y);
          if constexpr (std::is_floating_point_v<decltype(x)>) return floor_mode ? floor_divide(x, y) : std::trunc(q);
          else return static_cast<int64_t>(floor_mode ? std::floor(q) : std::trunc(q));  // exact for small integers
        });
      },
  });
  add_binary(rows, {.name = "pow", .dtypes = kAll, .db = Domain::Exponent, .in_place = true,
                    .ref = binary_ref([](auto x, auto y) {
                      if constexpr (std::is_floating_point_v<decltype(x)>) return std::pow(x, y);
                      else return int_pow(x, y);
                    })});
  add_binary(rows, {.name = "maximum", .dtypes = kAll, .ref = binary_ref([](auto x, auto y) -> decltype(x) {
                      if (x != x || y != y) return x + y;  // NaN propagates
                      return x > y ? x : y;
                    })});
  add_binary(rows, {.name = "minimum", .dtypes = kAll, .ref = binary_ref([](auto x, auto y) -> decltype(x) {
                      if (x != x || y != y) return x + y;
                      return x < y ? x : y;
                    })});
  add_binary(rows, {.name = "remainder", .dtypes = kNumeric, .db = Domain::NonZero,
                    .ref = binary_ref([](auto x, auto y) { return floor_mod(x, y); })});
  // Comparisons in double (exact for every dtype's values here) or int64.
  auto compare = [&](std::string name, auto f) {
    add_binary(rows, {.name = std::move(name), .dtypes = kAll, .out = bool_dtype, .ref = binary_ref(f)});
  };
  compare("eq", [](auto x, auto y) { return x == y; });
  compare("ne", [](auto x, auto y) { return x != y; });
  compare("lt", [](auto x, auto y) { return x < y; });
  compare("le", [](auto x, auto y) { return x <= y; });
  compare("gt", [](auto x, auto y) { return x > y; });
  compare("ge", [](auto x, auto y) { return x >= y; });
  add_binary(rows, {.name = "logical_and", .dtypes = kAll, .out = bool_dtype,
                    .ref = binary_ref([](auto x, auto y) { return x != 0 && y != 0; })});
  add_binary(rows, {.name = "logical_or", .dtypes = kAll, .out = bool_dtype,
                    .ref = binary_ref([](auto x, auto y) { return x != 0 || y != 0; })});
  add_binary(rows, {.name = "logical_xor", .dtypes = kAll, .out = bool_dtype,
                    .ref = binary_ref([](auto x, auto y) { return (x != 0) != (y != 0); })});

  add_binary(rows, {.name = "atan2", .dtypes = kAll, .out = float_of_int, .in_place = true,
                    .in_place_rejects = kIntegral, .ref = binary_ref([](auto y, auto x) {
                      return std::atan2(static_cast<double>(y), static_cast<double>(x));
                    })});
  add_binary(rows, {.name = "logaddexp", .dtypes = kFloating, .ref = binary_ref([](double x, double y) {
                      if (std::isnan(x) || std::isnan(y)) return kNaN;
                      if (std::isinf(x) && x == y) return x;
                      return std::max(x, y) + std::log1p(std::exp(-std::fabs(x - y)));
                    })});

  // where(condition, self, other): self where the condition holds, all three broadcast.
  rows.push_back({
      .name = "where",
      .dtypes = kAll,
      .out_dtype = same_dtype,
      .samples = [](DType t, SampleSize size) {
        std::vector<Sample> out;
        auto add = [&](std::string name, Shape c, const Tensor& a, const Tensor& b) {
          out.push_back({std::move(name), {arg(make_input(c, DType::Bool)), arg(a), arg(b)}, {}});
        };
        if (size == SampleSize::Large) {
          add("large", {256, 400}, make_input({256, 400}, t), make_input({256, 400}, t, kTransposed));
          return out;
        }
        add("contiguous", {3, 5}, make_input({3, 5}, t), make_input({3, 5}, t));
        add("broadcast", {3, 1}, make_input({1, 4}, t), make_input({2, 3, 4}, t));
        add("transposed", {3, 5}, make_input({3, 5}, t, kTransposed), make_input({3, 5}, t, kSliced));
        add("empty", {0, 3}, make_input({0, 3}, t), make_input({1, 3}, t));
        add("0d", {}, make_input({}, t), make_input({}, t));
        add("scalar_other", {2, 3}, make_input({2, 3}, t), wrap_scalar(scalar_of(t, 1)));
        add("scalar_self", {2, 40}, wrap_scalar(scalar_of(t, 1)), make_input({2, 40}, t));
        add("bad_broadcast", {3, 5}, make_input({3, 5}, t), make_input({4, 5}, t));
        out.back().error = "cannot be broadcast";
        add("condition_not_bool", {3, 5}, make_input({3, 5}, t), make_input({3, 5}, t));
        out.back().args[0] = arg(make_input({3, 5}, DType::Float32));
        out.back().error = "bool";
        out.push_back(undefined_input(out.front(), 0));
        if (is_floating_point(t)) add("special", {12}, from_values({12}, t, kSpecials), make_input({12}, t));
        return out;
      },
      .reference = [](const RefArgs& a) -> Expected {
        const HostTensor c = a.tensor(0), x = a.tensor(1), y = a.tensor(2);
        const std::optional<Shape> s1 = broadcast(c.shape, x.shape);
        const std::optional<Shape> s = s1 ? broadcast(*s1, y.shape) : std::nullopt;
        if (!s) return Expected::raises("");
        HostTensor r(*s, a.out);
        for_each_index(*s, [&](const Shape& idx, int64_t k) {
          const HostTensor& from = c.i[source_index(idx, c.shape)] ? x : y;
          const int64_t j = source_index(idx, from.shape);
          if (from.floating()) r.set(k, from.f[j]);
          else r.set_int(k, from.i[j]);
        });
        return {{r}, false, ""};
      },
      .exact = true,
  });
}

}  // namespace ember::testing
