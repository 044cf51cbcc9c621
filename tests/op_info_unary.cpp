// Op-info rows: unary elementwise ops, each with an in-place form name_
// (Note [The op-info table] in tests/op_info.h).
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

struct UnarySpec {
  const char* name;
  Domain domain;
  bool to_float;               // integer and bool inputs give float32 (exp); in place they are refused
  std::vector<DType> rejects;  // refused by both forms
  double (*fd)(double);
  int64_t (*fi)(int64_t);  // for integer and bool inputs of ops that keep the dtype
  std::vector<Divergence> divergences{};
};

double sign_d(double x) { return static_cast<double>((x > 0) - (x < 0)); }  // sign(NaN) = 0 in PyTorch 1.13
int64_t identity_i(int64_t x) { return x; }

const std::vector<Divergence> kSiluNegInf = {
    {"special", {}, "silu(-inf): torch 1.13 gives nan (-inf / inf); ember gives -0"}};

// abs, sign and the rounding ops keep bool as it is; torch 1.13 has no bool
// kernel for abs, floor, ceil, round and trunc (ember is more permissive).

const std::vector<UnarySpec>& unary_specs() {
  static const std::vector<UnarySpec> specs = {
      {"neg", Domain::Any, false, {DType::Bool}, [](double x) { return -x; }, [](int64_t x) { return -x; }, {}},
      {"abs", Domain::Any, false, {}, [](double x) { return std::fabs(x); },
       [](int64_t x) { return x < 0 ? -x : x; }, {}},
      {"sign", Domain::Any, false, {}, sign_d, [](int64_t x) -> int64_t { return (x > 0) - (x < 0); }, {}},
      {"exp", Domain::Any, true, {}, [](double x) { return std::exp(x); }, nullptr, {}},
      {"exp2", Domain::Any, true, {}, [](double x) { return std::exp2(x); }, nullptr, {}},
      {"log", Domain::Positive, true, {}, [](double x) { return std::log(x); }, nullptr, {}},
      {"log2", Domain::Positive, true, {}, [](double x) { return std::log2(x); }, nullptr, {}},
      {"log1p", Domain::Positive, true, {}, [](double x) { return std::log1p(x); }, nullptr, {}},
      {"expm1", Domain::Any, true, {}, [](double x) { return std::expm1(x); }, nullptr, {}},
      {"sqrt", Domain::Positive, true, {}, [](double x) { return std::sqrt(x); }, nullptr, {}},
      {"rsqrt", Domain::Positive, true, {}, [](double x) { return 1.0 / std::sqrt(x); }, nullptr, {}},
      {"reciprocal", Domain::NonZero, true, {}, [](double x) { return 1.0 / x; }, nullptr, {}},
      {"sin", Domain::Any, true, {}, [](double x) { return std::sin(x); }, nullptr, {}},
      {"cos", Domain::Any, true, {}, [](double x) { return std::cos(x); }, nullptr, {}},
      {"tan", Domain::Unit, true, {}, [](double x) { return std::tan(x); }, nullptr, {}},
      {"asin", Domain::Unit, true, {}, [](double x) { return std::asin(x); }, nullptr, {}},
      {"acos", Domain::Unit, true, {}, [](double x) { return std::acos(x); }, nullptr, {}},
      {"atan", Domain::Any, true, {}, [](double x) { return std::atan(x); }, nullptr, {}},
      {"sinh", Domain::Any, true, {}, [](double x) { return std::sinh(x); }, nullptr, {}},
      {"cosh", Domain::Any, true, {}, [](double x) { return std::cosh(x); }, nullptr, {}},
      {"tanh", Domain::Any, true, {}, [](double x) { return std::tanh(x); }, nullptr, {}},
      {"asinh", Domain::Any, true, {}, [](double x) { return std::asinh(x); }, nullptr, {}},
      {"acosh", Domain::AboveOne, true, {}, [](double x) { return std::acosh(x); }, nullptr, {}},
      {"atanh", Domain::Unit, true, {}, [](double x) { return std::atanh(x); }, nullptr, {}},
      {"sigmoid", Domain::Any, true, {}, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, nullptr, {}},
      {"relu", Domain::Any, false, {DType::Bool}, [](double x) { return x > 0 || x != x ? x : 0.0; },
       [](int64_t x) { return x > 0 ? x : 0; }, {}},
      {"silu", Domain::Any, true, kIntegral, [](double x) { return x / (1.0 + std::exp(-x)); }, nullptr,
       kSiluNegInf},
      {"erf", Domain::Any, true, {}, [](double x) { return std::erf(x); }, nullptr, {}},
      {"floor", Domain::Any, false, {}, [](double x) { return std::floor(x); }, identity_i, {}},
      {"ceil", Domain::Any, false, {}, [](double x) { return std::ceil(x); }, identity_i, {}},
      {"round", Domain::Any, false, {}, [](double x) { return std::nearbyint(x); }, identity_i, {}},  // half to even
      {"trunc", Domain::Any, false, {}, [](double x) { return std::trunc(x); }, identity_i, {}},
  };
  return specs;
}

}  // namespace

void add_unary_rows(std::vector<OpInfo>& rows) {
  // Ops whose results are input values, negated or rounded: exact (Note [Tolerances]).
  const std::set<std::string> moves_values = {"neg", "abs", "sign", "relu", "floor", "ceil", "round", "trunc"};
  for (const UnarySpec& u : unary_specs()) {
    for (const bool ip : {false, true}) {
      OpInfo r;
      r.name = ip ? std::string(u.name) + "_" : u.name;
      r.dtypes = kAll;
      r.rejects = u.rejects;
      if (ip && u.to_float) r.rejects = kIntegral;  // the float result cannot be written into self
      r.out_dtype = u.to_float && !ip ? float_of_int : same_dtype;
      r.kind = ip ? OpKind::InPlace : OpKind::Functional;
      r.samples = [d = u.domain, ip](DType t, SampleSize size) {
        std::vector<Sample> s = unary_samples(t, size, d);
        return size == SampleSize::Large ? s : joined(s, unary_error_samples(t, d, ip));
      };
      r.reference = [fd = u.fd, fi = u.fi](const RefArgs& a) {
        return map1(a.tensor(0), a.out, [fd, fi](auto x) {
          if constexpr (std::is_floating_point_v<decltype(x)>) return fd(x);
          else return fi(x);
        });
      };
      r.exact = moves_values.count(u.name) > 0;
      r.divergences = u.divergences;
      rows.push_back(std::move(r));
    }
  }
}

}  // namespace ember::testing
