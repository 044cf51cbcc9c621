// Reductions and scans against naive float64 references written here:
// sum mean prod amax amin max min argmax argmin var std norm logsumexp all
// any cumsum cumprod. Each op runs over all dims, one dim, several dims and
// negative dims, keepdim both ways, contiguous, transposed and sliced-with-
// step inputs, 0-d and empty tensors, every dtype it supports, and the input
// shapes that take each loop of the driver (kernels/cpu/reduce/reduce_driver.h).
// Also pinned: output dtypes, NaN and inf behaviour, integer prod and cumprod
// wrapping around on overflow, bitwise equality of 1 and 2 threads, the
// accuracy of a 16M-element float sum, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

namespace ember {
namespace {

using ::ember::testing::all_close;
using ::ember::testing::values;
using Dims = std::vector<int64_t>;
using RefFn = std::function<double(const std::vector<double>&)>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A tensor of `shape` holding `v` (row-major), converted to `dtype`.
Tensor make(IntArrayRef shape, const std::vector<double>& v, DType dtype = kFloat32) {
  Tensor t = empty(shape, kFloat64);
  EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return t.to(dtype);
}

// Random values of a dtype: normal floats; integers in [-20, 20) (uint8 [0, 40), bool 0/1).
Tensor random(IntArrayRef shape, DType dtype, uint64_t seed = 1) {
  Generator g(seed);
  if (is_floating_point(dtype)) return randn(shape, kFloat32, &g).to(dtype);
  if (dtype == kBool) return randint(0, 2, shape, kInt64, &g).to(kBool);
  if (dtype == kUInt8) return randint(0, 40, shape, kInt64, &g).to(kUInt8);
  return randint(-20, 20, shape, kInt64, &g).to(dtype);
}

// The elements of x that each output of a reduction over dims (empty: all)
// folds, in row-major order, and the output's shape.
struct Groups {
  std::vector<int64_t> shape;
  std::vector<std::vector<double>> members;

  Groups(const Tensor& x, const Dims& dims, bool keepdim) {
    const std::vector<double> v = values(x);
    const int64_t nd = x.dim();
    std::vector<bool> red(static_cast<size_t>(nd), dims.empty());
    for (int64_t d : dims) {
      if (nd > 0) red[static_cast<size_t>(d < 0 ? d + nd : d)] = true;
    }
    std::vector<int64_t> kept_stride(static_cast<size_t>(nd), 0);
    int64_t num_out = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (!red[d]) {
        kept_stride[d] = num_out;
        num_out *= x.size(d);
      }
    }
    for (int64_t d = 0; d < nd; ++d) {
      if (!red[d]) shape.push_back(x.size(d));
      else if (keepdim) shape.push_back(1);
    }
    members.resize(static_cast<size_t>(num_out));
    for (int64_t lin = 0; lin < static_cast<int64_t>(v.size()); ++lin) {
      int64_t rest = lin, o = 0;
      for (int64_t d = nd - 1; d >= 0; --d) {
        o += (rest % x.size(d)) * kept_stride[d];
        rest /= x.size(d);
      }
      members[o].push_back(v[lin]);
    }
  }
  // fn of each output's elements, as a float64 tensor of the result's shape.
  Tensor apply(const RefFn& fn) const {
    std::vector<double> out;
    for (const auto& g : members) out.push_back(fn(g));
    return make(shape, out, kFloat64);
  }
};

Tensor reference(const Tensor& x, const Dims& dims, bool keepdim, const RefFn& fn) {
  return Groups(x, dims, keepdim).apply(fn);
}

// ---- float64 references ----

double ref_sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
double ref_mean(const std::vector<double>& v) { return ref_sum(v) / static_cast<double>(v.size()); }
double ref_prod(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 1.0, std::multiplies<double>());
}
double ref_max(const std::vector<double>& v) {
  double m = -kInf;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, x);
  }
  return m;
}
double ref_min(const std::vector<double>& v) {
  double m = kInf;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::min(m, x);
  }
  return m;
}
RefFn ref_var(int64_t correction, bool take_sqrt) {
  return [=](const std::vector<double>& v) {
    const double mean = ref_mean(v);
    double m2 = 0;
    for (double x : v) m2 += (x - mean) * (x - mean);
    const double r = m2 / std::max(0.0, static_cast<double>(v.size()) - static_cast<double>(correction));
    return take_sqrt ? std::sqrt(r) : r;
  };
}
RefFn ref_norm(double p) {
  return [=](const std::vector<double>& v) {
    if (p == kInf || p == -kInf) {
      std::vector<double> a;
      for (double x : v) a.push_back(std::fabs(x));
      return p > 0 ? ref_max(a) : ref_min(a);
    }
    double s = 0;
    for (double x : v) s += p == 0 ? (x != 0) : std::pow(std::fabs(x), p);
    return p == 0 ? s : std::pow(s, 1 / p);
  };
}
double ref_logsumexp(const std::vector<double>& v) {
  const double m = ref_max(v);
  if (std::isnan(m) || std::isinf(m)) return m;
  double s = 0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}
double ref_all(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return x != 0; });
}
double ref_any(const std::vector<double>& v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return x != 0; });
}
// Position of the max (min): the first NaN, else the first of the equal extremes.
double ref_argext(const std::vector<double>& v, bool largest) {
  size_t best = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) return static_cast<double>(i);
    if (largest ? v[i] > v[best] : v[i] < v[best]) best = i;
  }
  return static_cast<double>(best);
}

// Relative tolerance of a result stored in `dtype` (reduced-precision
// results are rounded once; float32 sums of a few hundred values drift a little).
double tol(DType dtype) {
  switch (dtype) {
    case kFloat16: return 2e-3;
    case kBFloat16: return 1.6e-2;
    case kFloat32: return 2e-5;
    case kFloat64: return 1e-12;
    default: return 0;
  }
}

// The inputs every reduction runs over: (name, tensor). Shapes are chosen so
// that each loop of the driver runs: Rows (contiguous and strided), Rows with
// chunks, Columns, Columns with row chunks and several column blocks.
std::vector<std::pair<std::string, Tensor>> inputs(DType dtype) {
  std::vector<std::pair<std::string, Tensor>> r;
  r.emplace_back("3x4x5", random({3, 4, 5}, dtype, 11));
  r.emplace_back("transposed", random({5, 4, 3}, dtype, 12).transpose(0, 2));
  r.emplace_back("sliced_step", random({6, 9, 5}, dtype, 13).slice(1, 1, 9, 3).slice(0, 0, 6, 2));
  r.emplace_back("0d", random({}, dtype, 14));
  r.emplace_back("empty", random({3, 0, 2}, dtype, 15));
  return r;
}
const std::vector<std::pair<Dims, bool>> kDimCases = {{{}, false},     {{}, true},      {{1}, false},      {{-1}, true},
                                                      {{0, 2}, false}, {{2, -3}, true}, {{0, 1, 2}, false}};

// Runs `op` on every input and dim case, comparing with `ref`; `empty_ok`
// false skips reductions over an empty dim (ops without an identity).
void check_op(const std::string& name, DType dtype, DType out_dtype,
              const std::function<Tensor(const Tensor&, IntArrayRef, bool)>& op, const RefFn& ref, bool empty_ok = true,
              double rtol = -1) {
  if (rtol < 0) rtol = tol(out_dtype);
  for (const auto& [label, x] : inputs(dtype)) {
    for (const auto& [dims, keepdim] : kDimCases) {
      Dims d = dims;
      if (x.dim() == 0) {
        if (d.size() > 1) continue;
        if (d.size() == 1) d = {keepdim ? -1 : 0};
      }
      if (x.dim() != 0 && x.dim() < 3) continue;
      if (!empty_ok && x.numel() == 0) {
        bool reduces_empty = d.empty();
        for (int64_t k : d) reduces_empty = reduces_empty || x.size(k) == 0;
        if (reduces_empty) continue;
      }
      SCOPED_TRACE(name + " " + std::string(dtype_name(dtype)) + " " + label + " dims " + ::testing::PrintToString(d) +
                   (keepdim ? " keepdim" : ""));
      const Tensor got = op(x, d, keepdim);
      EXPECT_EQ(got.dtype(), out_dtype);
      EXPECT_TRUE(all_close(got, reference(x, d, keepdim, ref), rtol, rtol));
    }
  }
}

DType sum_dtype(DType t) { return is_integral(t, true) ? kInt64 : t; }

const std::vector<DType> kAll = {kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kUInt8, kBool};
const std::vector<DType> kFloats = {kFloat32, kFloat64, kFloat16, kBFloat16};

// ---- sum, mean, prod ----

TEST(Reduce, SumEveryDtypeAndLayout) {
  for (DType t : kAll) {
    check_op(
        "sum", t, sum_dtype(t), [](const Tensor& x, IntArrayRef d, bool k) { return x.sum(d, k); }, ref_sum);
  }
}

TEST(Reduce, SumWithDtypeConvertsTheInputFirst) {
  const Tensor x = make({4}, {1.5, 2.5, -0.5, 3.0});
  Tensor s = sum(x, {}, false, kInt32);  // each element truncated first: 1 + 2 + 0 + 3
  EXPECT_EQ(s.dtype(), kInt32);
  EXPECT_EQ(s.item<int32_t>(), 6);
  const Tensor h = make({3}, {1, 2, 3}, kFloat16);
  EXPECT_EQ(h.sum({}, false, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(h.sum({}, false, kFloat64).item<double>(), 6.0);
  const Tensor u = make({2}, {200, 100}, kUInt8);
  EXPECT_EQ(u.sum().item<int64_t>(), 300);                  // int64 by default
  EXPECT_EQ(u.sum({}, false, kUInt8).item<int64_t>(), 44);  // wraps as uint8, like PyTorch
  EXPECT_EQ(make({3}, {1, 0, 1}, kBool).sum({}, false, kBool).dtype(), kBool);
  // int64 overflow wraps around, as in PyTorch.
  Tensor big = empty({2}, kInt64);
  big.data_ptr<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  big.data_ptr<int64_t>()[1] = 1;
  EXPECT_EQ(big.sum().item<int64_t>(), std::numeric_limits<int64_t>::min());
  big.data_ptr<int64_t>()[0] = int64_t{1} << 62;
  big.data_ptr<int64_t>()[1] = 4;
  EXPECT_EQ(big.prod().item<int64_t>(), 0);
  EXPECT_EQ(values(big.cumprod(0))[1], 0.0);
}

TEST(Reduce, SumOfEmptyIsZeroAndNaNInfPropagate) {
  EXPECT_TRUE(all_close(zeros({0, 3}).sum({0}), zeros({3})));
  EXPECT_EQ(zeros({0}).sum().item<float>(), 0.f);
  EXPECT_EQ(zeros({0}, kInt32).sum().dtype(), kInt64);
  const Tensor x = make({2, 3}, {1, kInf, kNaN, kInf, -kInf, 2});
  EXPECT_TRUE(all_close(x.sum({1}), make({2}, {kNaN, kNaN})));
  EXPECT_EQ(make({2}, {kInf, 1}).sum().item<float>(), std::numeric_limits<float>::infinity());
}

TEST(Reduce, MeanOfFloats) {
  for (DType t : kFloats) {
    check_op(
        "mean", t, t, [](const Tensor& x, IntArrayRef d, bool k) { return x.mean(d, k); }, ref_mean);
  }
  EXPECT_TRUE(std::isnan(zeros({0}).mean().item<float>()));
  EXPECT_TRUE(all_close(zeros({3, 0}).mean({1}), make({3}, {kNaN, kNaN, kNaN})));
}

TEST(Reduce, ProdEveryDtype) {
  for (DType t : kAll) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    Generator g(5);
    // Factors near 1 (or small integers) keep the products representable.
    const Tensor x = is_floating_point(t) ? (rand({3, 4, 5}, kFloat32, &g) * 0.8 + 0.6).to(t)
                     : t == kBool         ? random({3, 4, 5}, t, 6)
                                          : random({3, 4, 5}, t, 6).remainder(Scalar(3)).to(t);
    for (const auto& [dims, keepdim] : kDimCases) {
      const Tensor got = x.prod(dims, keepdim);
      EXPECT_EQ(got.dtype(), sum_dtype(t));
      EXPECT_TRUE(all_close(got, reference(x, dims, keepdim, ref_prod), tol(t) * 4, 1e-6));
    }
  }
  EXPECT_EQ(zeros({0}).prod().item<float>(), 1.f);
  EXPECT_EQ(make({2, 2}, {2, 3, 4, 5}, kInt32).prod().item<int64_t>(), 120);
}

// ---- amax, amin, max(), min() ----

TEST(Reduce, AmaxAminEveryDtype) {
  for (DType t : kAll) {
    check_op(
        "amax", t, t, [](const Tensor& x, IntArrayRef d, bool k) { return x.amax(d, k); }, ref_max, false);
    check_op(
        "amin", t, t, [](const Tensor& x, IntArrayRef d, bool k) { return x.amin(d, k); }, ref_min, false);
  }
}

TEST(Reduce, AmaxPropagatesNaNOnEveryPath) {
  // Long enough for the vectorised row loop, NaN in the middle and at the end.
  std::vector<double> v(100, 1.0);
  v[57] = kNaN;
  EXPECT_TRUE(std::isnan(make({100}, v).amax().item<float>()));
  EXPECT_TRUE(std::isnan(make({100}, v).amin().item<float>()));
  v[57] = 1;
  v[99] = kNaN;
  EXPECT_TRUE(std::isnan(make({100}, v).max().item<float>()));
  EXPECT_TRUE(std::isnan(make({100}, v).min().item<float>()));
  // Columns: dim 0 of [4, 32].
  std::vector<double> c(128, 0.0);
  c[2 * 32 + 5] = kNaN;
  const Tensor m = make({4, 32}, c).amax({0});
  EXPECT_TRUE(std::isnan(values(m)[5]));
  EXPECT_EQ(values(m)[4], 0.0);
  EXPECT_EQ(make({3}, {-kInf, -kInf, -kInf}).amax().item<float>(), -std::numeric_limits<float>::infinity());
}

TEST(Reduce, MaxMinWithoutDimAreAmaxAmin) {
  const Tensor x = random({7, 9}, kFloat32, 3);
  EXPECT_EQ(x.max().item<float>(), x.amax().item<float>());
  EXPECT_EQ(x.min().item<float>(), x.amin().item<float>());
  EXPECT_EQ(x.max().dim(), 0);
  EXPECT_EQ(make({3}, {2, 7, 5}, kInt32).max().item<int32_t>(), 7);
  EXPECT_EQ(make({2}, {1, 0}, kBool).min().item<bool>(), false);
}

// ---- max(dim), min(dim), argmax, argmin ----

// Values and indices of x.max(dim)/min(dim) against the reference.
void check_extremum_dim(const Tensor& x, int64_t dim, bool keepdim, bool largest) {
  SCOPED_TRACE(std::string(largest ? "max" : "min") + " dim " + std::to_string(dim) + " " +
               std::string(dtype_name(x.dtype())));
  auto [v, i] = largest ? x.max(dim, keepdim) : x.min(dim, keepdim);
  EXPECT_EQ(v.dtype(), x.dtype());
  EXPECT_EQ(i.dtype(), kInt64);
  const Dims d = {dim};
  EXPECT_TRUE(all_close(v, reference(x, d, keepdim, largest ? ref_max : ref_min), 0, 0));
  EXPECT_TRUE(all_close(
      i, reference(x, d, keepdim, [&](const std::vector<double>& g) { return ref_argext(g, largest); }), 0, 0));
  const Tensor a = largest ? x.argmax(dim, keepdim) : x.argmin(dim, keepdim);
  EXPECT_TRUE(all_close(a, i, 0, 0));
}

TEST(Reduce, MaxMinDimValuesAndIndices) {
  for (DType t : kAll) {
    for (const auto& [label, x] : inputs(t)) {
      SCOPED_TRACE(label);
      if (x.dim() == 0) {
        check_extremum_dim(x, 0, false, true);
        check_extremum_dim(x, -1, true, false);
        continue;
      }
      for (int64_t dim = -x.dim(); dim < x.dim(); ++dim) {
        if (x.size(dim) == 0) continue;
        for (bool keepdim : {false, true}) {
          check_extremum_dim(x, dim, keepdim, true);
          check_extremum_dim(x, dim, keepdim, false);
        }
      }
    }
  }
}

TEST(Reduce, MaxDimTiesGiveTheFirstIndexAndNaNWins) {
  auto [v, i] = make({2, 4}, {1, 3, 3, 2, 5, 5, 5, 5}).max(1);
  EXPECT_EQ(values(i), (std::vector<double>{1, 0}));
  auto [v2, i2] = make({1, 4}, {1, 1, 3, 1}).min(1);
  EXPECT_EQ(values(i2), (std::vector<double>{0}));
  // NaN: the first NaN and its index (PyTorch 1.13).
  auto [vn, in] = make({2, 4}, {1, kNaN, 3, kNaN, 2, kNaN, 1, kNaN}).min(1);
  EXPECT_TRUE(std::isnan(values(vn)[0]) && std::isnan(values(vn)[1]));
  EXPECT_EQ(values(in), (std::vector<double>{1, 1}));
  EXPECT_EQ(make({4}, {1, kNaN, 0.5, kNaN}).argmax().item<int64_t>(), 1);
  EXPECT_EQ(make({4}, {1, kNaN, 0.5, kNaN}).argmin().item<int64_t>(), 1);
  // Columns: dim 0 of [5, 40] with ties and a NaN.
  std::vector<double> c(200, 1.0);
  c[3 * 40 + 7] = kNaN;
  c[4 * 40 + 7] = kNaN;
  c[2 * 40 + 9] = 2.0;
  c[4 * 40 + 9] = 2.0;
  auto [vc, ic] = make({5, 40}, c).max(0);
  EXPECT_EQ(values(ic)[0], 0);
  EXPECT_EQ(values(ic)[7], 3);
  EXPECT_EQ(values(ic)[9], 2);
}

TEST(Reduce, ArgmaxWithoutDimIndexesTheFlattenedTensor) {
  // Transposed: the index is row-major in the logical (transposed) shape.
  const Tensor x = make({2, 3}, {0, 9, 2, 3, 4, 5}).t();  // [[0, 3], [9, 4], [2, 5]]
  EXPECT_EQ(x.argmax().item<int64_t>(), 2);
  EXPECT_EQ(x.argmin().item<int64_t>(), 0);
  const Tensor k = x.argmax(std::nullopt, true);
  EXPECT_EQ(k.sizes(), IntArrayRef({1, 1}));
  EXPECT_EQ(k.dtype(), kInt64);
  EXPECT_EQ(make({}, {3.5}).argmax().item<int64_t>(), 0);
  for (DType t : kAll) {
    const Tensor r = random({6, 7}, t, 21).slice(1, 0, 7, 2);
    EXPECT_EQ(r.argmax().item<int64_t>(), ref_argext(values(r), true)) << dtype_name(t);
    EXPECT_EQ(r.argmin().item<int64_t>(), ref_argext(values(r), false)) << dtype_name(t);
  }
}

// ---- var, std ----

TEST(Reduce, VarStdWithCorrections) {
  for (DType t : kFloats) {
    for (int64_t c : {0, 1, 2}) {
      check_op(
          "var", t, t, [c](const Tensor& x, IntArrayRef d, bool k) { return x.var(d, c, k); }, ref_var(c, false));
      check_op(
          "std", t, t, [c](const Tensor& x, IntArrayRef d, bool k) { return x.std(d, c, k); }, ref_var(c, true));
    }
  }
}

TEST(Reduce, VarEdgeCasesMatchPyTorch) {
  const Tensor x = make({3}, {1, 2, 4});
  EXPECT_EQ(x.var({}, 3).item<float>(), std::numeric_limits<float>::infinity());  // N - c = 0, m2 > 0
  EXPECT_TRUE(std::isnan(ones({3}).var({}, 3).item<float>()));                    // 0 / 0
  EXPECT_EQ(ones({3}).var({}, -1).item<float>(), 0.f);
  EXPECT_TRUE(std::isnan(make({}, {3}).std().item<float>()));  // one element, correction 1
  EXPECT_EQ(make({}, {3}).std({}, 0).item<float>(), 0.f);
  EXPECT_TRUE(std::isnan(make({2}, {1, kInf}).var().item<float>()));
  EXPECT_TRUE(all_close(zeros({0, 3}).std({0}), make({3}, {kNaN, kNaN, kNaN})));
  // A large offset does not cancel: var of 1e6 + {0, 1, 2} in float32 (computed in double).
  EXPECT_NEAR(make({3}, {1e6, 1e6 + 1, 1e6 + 2}).var().item<float>(), 1.0, 1e-6);
}

// ---- norm ----

TEST(Reduce, NormEveryOrder) {
  for (DType t : kFloats) {
    for (double p : {2.0, 1.0, kInf, -kInf, 0.0, 3.0, 0.5, -1.0}) {
      const bool has_identity = p >= 0 && p != kInf;
      check_op(
          "norm", t, t, [p](const Tensor& x, IntArrayRef d, bool k) { return x.norm(p, d, k); }, ref_norm(p),
          has_identity, tol(t) * 2);
    }
  }
}

TEST(Reduce, NormSpecialValues) {
  // float32 squares overflow as in PyTorch's vector_norm (the golden case pins inf).
  EXPECT_EQ(make({3}, {3e30, 4e30, 1e-30}).norm().item<float>(), std::numeric_limits<float>::infinity());
  EXPECT_NEAR(make({2}, {3e30, 4e30}, kFloat64).norm().item<double>(), 5e30, 1e18);
  EXPECT_EQ(make({3}, {1, -2, 0}).norm(0).item<float>(), 2.f);
  EXPECT_EQ(make({2}, {kNaN, 1}).norm(0).item<float>(), 2.f);  // NaN != 0 counts
  EXPECT_EQ(make({3}, {1, -2, 0}).norm(-1).item<float>(), 0.f);
  EXPECT_TRUE(std::isnan(make({3}, {1, kNaN, 0.5}).norm(kInf).item<float>()));
  EXPECT_TRUE(std::isnan(make({2}, {kNaN, 1}).norm(-kInf).item<float>()));
  EXPECT_EQ(zeros({0}).norm().item<float>(), 0.f);
  EXPECT_EQ(zeros({0}).norm(0).item<float>(), 0.f);
}

// ---- logsumexp ----

TEST(Reduce, LogsumexpOfFloatsAndIntegers) {
  for (DType t : kFloats) {
    check_op(
        "logsumexp", t, t, [](const Tensor& x, IntArrayRef d, bool k) { return x.logsumexp(d, k); }, ref_logsumexp);
  }
  for (DType t : {kInt32, kInt64, kUInt8, kBool}) {  // computed in float32, as PyTorch 1.13
    check_op(
        "logsumexp", t, kFloat32, [](const Tensor& x, IntArrayRef d, bool k) { return x.logsumexp(d, k); },
        ref_logsumexp);
  }
}

TEST(Reduce, LogsumexpIsStableWithInfinities) {
  const Tensor x = make({5, 3}, {1000, 1000.5, -1000, -kInf, -kInf, -kInf, -kInf, 0, 1, kInf, 1, 2, kNaN, kInf, 0});
  const std::vector<double> expect = {1000.5 + std::log1p(std::exp(-0.5)), -kInf, 1 + std::log1p(std::exp(-1.0)), kInf,
                                      kNaN};
  EXPECT_TRUE(all_close(x.logsumexp({1}), make({5}, expect), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(x.t().contiguous().logsumexp({0}), make({5}, expect), 1e-6, 1e-6));
  EXPECT_EQ(make({2}, {kInf, kInf}).logsumexp({0}).item<float>(), std::numeric_limits<float>::infinity());
  EXPECT_EQ(zeros({0}).logsumexp({0}).item<float>(), -std::numeric_limits<float>::infinity());
  // Every row -inf, long enough for the vector loops, in both layouts.
  const Tensor ninf = full({40, 40}, -kInf);
  EXPECT_TRUE(all_close(ninf.logsumexp({1}), full({40}, -kInf)));
  EXPECT_TRUE(all_close(ninf.logsumexp({0}), full({40}, -kInf)));
  // Columns with an inf and a NaN in some columns.
  std::vector<double> c(4 * 32, 0.0);
  c[1 * 32 + 3] = kInf;
  c[2 * 32 + 4] = kNaN;
  const std::vector<double> col = values(make({4, 32}, c).logsumexp({0}));
  EXPECT_EQ(col[3], kInf);
  EXPECT_TRUE(std::isnan(col[4]));
  EXPECT_NEAR(col[0], std::log(4.0), 1e-6);
}

// ---- all, any ----

TEST(Reduce, AllAnyEveryDtype) {
  for (DType t : kAll) {
    const DType out = t == kUInt8 ? kUInt8 : kBool;  // PyTorch 1.13 keeps uint8 for uint8 inputs
    check_op(
        "all", t, out, [](const Tensor& x, IntArrayRef d, bool k) { return x.all(d, k); }, ref_all);
    check_op(
        "any", t, out, [](const Tensor& x, IntArrayRef d, bool k) { return x.any(d, k); }, ref_any);
  }
  const Tensor f = make({2, 3}, {1, kNaN, 0, 2, -0.0, 0});
  EXPECT_EQ(values(f.all({0})), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(values(f.any({0})), (std::vector<double>{1, 1, 0}));
  EXPECT_TRUE(zeros({0}, kBool).all().item<bool>());
  EXPECT_FALSE(zeros({0}, kBool).any().item<bool>());
}

// ---- cumsum, cumprod ----

// Scan of x along dim in float64.
Tensor ref_scan(const Tensor& x, int64_t dim, bool prod) {
  const std::vector<double> v = values(x);
  std::vector<double> out(v.size());
  if (x.dim() == 0) return make({}, v, kFloat64);
  const int64_t d = dim < 0 ? dim + x.dim() : dim;
  int64_t inner = 1;
  for (int64_t i = d + 1; i < x.dim(); ++i) inner *= x.size(i);
  const int64_t len = x.size(d);
  for (size_t lin = 0; lin < v.size(); ++lin) {
    const int64_t pos = (static_cast<int64_t>(lin) / inner) % len;
    out[lin] = pos == 0 ? v[lin] : (prod ? out[lin - inner] * v[lin] : out[lin - inner] + v[lin]);
  }
  return make(x.sizes(), out, kFloat64);
}

TEST(Reduce, CumsumCumprodEveryDtypeAndDim) {
  for (DType t : kAll) {
    for (const auto& [label, x0] : inputs(t)) {
      const Tensor x = t == kUInt8 || t == kBool || !is_floating_point(t) ? x0 : x0 * 0.5;
      for (int64_t dim = -std::max<int64_t>(x.dim(), 1); dim < std::max<int64_t>(x.dim(), 1); ++dim) {
        SCOPED_TRACE(std::string(dtype_name(t)) + " " + label + " dim " + std::to_string(dim));
        const Tensor s = x.cumsum(dim), p = x.cumprod(dim);
        EXPECT_EQ(s.dtype(), sum_dtype(t));
        EXPECT_EQ(p.dtype(), sum_dtype(t));
        EXPECT_TRUE(all_close(s, ref_scan(x, dim, false), tol(t) * 4, tol(t) * 4));
        EXPECT_TRUE(all_close(p, ref_scan(x, dim, true), tol(t) * 4, tol(t) * 4));
      }
    }
  }
  // Columns of a wide scan (inner > kScanColumns).
  const Tensor w = random({6, 3, 1100}, kFloat32, 31);
  EXPECT_TRUE(all_close(w.cumsum(1), ref_scan(w, 1, false), 1e-5, 1e-5));
  EXPECT_TRUE(all_close(w.cumsum(0), ref_scan(w, 0, false), 1e-5, 1e-5));
}

TEST(Reduce, CumsumDtypeArgument) {
  const Tensor x = make({2}, {1.5, 2.5});
  EXPECT_EQ(values(x.cumsum(0, kInt32)), (std::vector<double>{1, 3}));
  EXPECT_EQ(x.cumsum(0, kInt32).dtype(), kInt32);
  EXPECT_EQ(make({2}, {1, 2}, kInt32).cumprod(0, kFloat64).dtype(), kFloat64);
  EXPECT_EQ(values(make({3}, {200, 200, 200}, kUInt8).cumsum(0)), (std::vector<double>{200, 400, 600}));
}

// ---- integer overflow in prod and cumprod ----

// Integer products wrap around (two's complement), as in PyTorch. The
// expected values are computed here in unsigned arithmetic, where wrapping is
// defined. The factors are odd, so no product collapses to 0.

// A row-major (rows, cols) matrix of odd factors in [-999, 999], from a seeded LCG.
std::vector<int64_t> odd_factors(int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<int64_t> v(static_cast<size_t>(rows * cols));
  uint64_t s = seed;
  for (int64_t& x : v) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<int64_t>((s >> 33) % 1000) * 2 - 999;
  }
  return v;
}

// The (rows, cols) matrix v as `dtype`, transposed in memory when `strided`.
Tensor int_matrix(const std::vector<int64_t>& v, int64_t rows, int64_t cols, DType dtype, bool strided = false) {
  Tensor t = empty({rows, cols}, kInt64);
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return strided ? t.to(dtype).t().contiguous().t() : t.to(dtype);
}

// A tensor's elements (row-major), as the unsigned type of the same width.
template <class S, class U>
std::vector<U> bits_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const S* p = c.data_ptr<S>();
  std::vector<U> out;
  for (int64_t i = 0; i < c.numel(); ++i) out.push_back(static_cast<U>(p[i]));
  return out;
}

// prod over dim 0 or 1 of the (rows, cols) matrix v, wrapped to the width of U.
template <class U>
std::vector<U> wrapped_prod(const std::vector<int64_t>& v, int64_t rows, int64_t cols, int64_t dim) {
  std::vector<U> out(static_cast<size_t>(dim == 0 ? cols : rows), U(1));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      U& p = out[static_cast<size_t>(dim == 0 ? j : i)];
      p = static_cast<U>(p * static_cast<U>(v[i * cols + j]));
    }
  }
  return out;
}

// cumprod along dim 0 or 1 of the (rows, cols) matrix v, wrapped to the width of U.
template <class U>
std::vector<U> wrapped_cumprod(const std::vector<int64_t>& v, int64_t rows, int64_t cols, int64_t dim) {
  std::vector<U> out(v.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t k = i * cols + j;
      const bool first = dim == 0 ? i == 0 : j == 0;
      const U before = first ? U(1) : out[k - (dim == 0 ? cols : 1)];
      out[k] = static_cast<U>(before * static_cast<U>(v[k]));
    }
  }
  return out;
}

TEST(Reduce, IntegerProdAndCumprodWrapAroundOnOverflow) {
  // Shapes that take each loop of the driver: rows, rows cut into chunks,
  // strided rows, columns, and columns whose rows are cut into chunks.
  struct Case {
    const char* name;
    int64_t rows, cols, dim;
    bool strided;
  };
  const std::vector<Case> cases = {{"rows", 3, 40, 1, false},          {"rows_chunked", 2, 40000, 1, false},
                                   {"rows_strided", 3, 40, 1, true},   {"columns", 100, 200, 0, false},
                                   {"columns_row_chunks", 300, 200, 0, false}};
  uint64_t seed = 1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<int64_t> v = odd_factors(c.rows, c.cols, seed++);
    const int64_t n = c.rows * c.cols;
    const Tensor x64 = int_matrix(v, c.rows, c.cols, kInt64, c.strided);
    EXPECT_EQ((bits_of<int64_t, uint64_t>(x64.prod({c.dim}))), wrapped_prod<uint64_t>(v, c.rows, c.cols, c.dim));
    EXPECT_EQ((bits_of<int64_t, uint64_t>(x64.prod())), wrapped_prod<uint64_t>(v, 1, n, 1));
    // int32 gives int64 by default (wrapping at 64 bits); with dtype int32 it wraps at 32 bits.
    const Tensor x32 = int_matrix(v, c.rows, c.cols, kInt32, c.strided);
    const Tensor p64 = x32.prod({c.dim}), p32 = x32.prod({c.dim}, false, kInt32);
    EXPECT_EQ(p64.dtype(), kInt64);
    EXPECT_EQ(p32.dtype(), kInt32);
    EXPECT_EQ((bits_of<int64_t, uint64_t>(p64)), wrapped_prod<uint64_t>(v, c.rows, c.cols, c.dim));
    EXPECT_EQ((bits_of<int32_t, uint32_t>(p32)), wrapped_prod<uint32_t>(v, c.rows, c.cols, c.dim));
    EXPECT_EQ((bits_of<int32_t, uint32_t>(x32.prod({}, false, kInt32))), wrapped_prod<uint32_t>(v, 1, n, 1));
  }
  // cumprod along rows (the scanned dim innermost) and down columns.
  const int64_t rows = 30, cols = 50;
  const std::vector<int64_t> v = odd_factors(rows, cols, 99);
  for (const int64_t dim : {0, 1}) {
    SCOPED_TRACE("cumprod dim " + std::to_string(dim));
    const Tensor x64 = int_matrix(v, rows, cols, kInt64), x32 = int_matrix(v, rows, cols, kInt32);
    EXPECT_EQ((bits_of<int64_t, uint64_t>(x64.cumprod(dim))), wrapped_cumprod<uint64_t>(v, rows, cols, dim));
    EXPECT_EQ((bits_of<int64_t, uint64_t>(x32.cumprod(dim))), wrapped_cumprod<uint64_t>(v, rows, cols, dim));
    const Tensor c32 = x32.cumprod(dim, kInt32);
    EXPECT_EQ(c32.dtype(), kInt32);
    EXPECT_EQ((bits_of<int32_t, uint32_t>(c32)), wrapped_cumprod<uint32_t>(v, rows, cols, dim));
  }
}

// ---- the driver's loops ----

// Shapes that reach each loop and chunking rule of reduce_driver.h.
TEST(Reduce, EveryDriverLoopMatchesTheReference) {
  struct Case {
    const char* name;
    Tensor x;
    Dims dims;
  };
  const std::vector<Case> cases = {
      {"rows", random({37, 129}, kFloat32, 41), {1}},
      {"rows_chunked", random({3, 40000}, kFloat32, 42), {1}},
      {"rows_several_reduced_dims", random({6, 5, 7}, kFloat32, 43), {0, 2}},
      {"rows_strided", random({300, 5}, kFloat32, 44).t(), {1}},
      {"rows_strided_chunked", random({20000, 3}, kFloat32, 45).t(), {1}},
      {"columns", random({100, 200}, kFloat32, 46), {0}},
      {"columns_row_chunks", random({300, 200}, kFloat32, 47), {0}},
      {"columns_outer_tasks", random({50, 8, 600}, kFloat32, 48), {1}},
      {"columns_blocks", random({9, 3, 4200}, kFloat32, 52), {1}},
      {"columns_blocks_row_chunks", random({130, 4100}, kFloat32, 49), {0}},
      {"columns_transposed", random({129, 300}, kFloat32, 50).t(), {1}},
      {"columns_several_reduced_dims", random({7, 11, 40}, kFloat32, 53).slice(1, 0, 11, 2), {0, 1}},
      {"expanded", random({1, 64}, kFloat32, 51).expand({50, 64}), {0}},
  };
  for (const Case& c : cases) {
    for (DType t : {kFloat32, kFloat64, kBFloat16, kInt32}) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(dtype_name(t)));
      const Tensor x = t == kInt32 ? (c.x * 10).to(kInt32) : c.x.to(t);
      const double rt = t == kBFloat16 ? 2e-2 : t == kFloat32 ? 1e-4 : 1e-12;
      const Groups g(x, c.dims, false);
      EXPECT_TRUE(all_close(x.sum(c.dims), g.apply(ref_sum), rt, rt));
      EXPECT_TRUE(all_close(x.amax(c.dims), g.apply(ref_max), 0, 0));
      if (is_floating_point(t)) {
        EXPECT_TRUE(all_close(x.var(c.dims), g.apply(ref_var(1, false)), rt, rt));
        EXPECT_TRUE(all_close(x.logsumexp(c.dims), g.apply(ref_logsumexp), rt, rt));
        EXPECT_TRUE(all_close(x.norm(2, c.dims), g.apply(ref_norm(2)), rt, rt));
      }
      if (c.dims.size() == 1) {
        auto [v, i] = x.max(c.dims[0]);
        EXPECT_TRUE(all_close(i, g.apply([](const std::vector<double>& m) { return ref_argext(m, true); }), 0, 0));
      }
    }
  }
}

// ---- determinism and accuracy ----

// The bytes of a contiguous copy.
std::vector<unsigned char> bytes(const Tensor& t) {
  const Tensor c = t.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  return std::vector<unsigned char>(p, p + c.nbytes());
}

TEST(Reduce, OneAndTwoThreadsGiveTheSameBits) {
  const int saved = get_num_threads();
  const Tensor big = random({1 << 20}, kFloat32, 61);
  const Tensor mat = random({2000, 700}, kFloat32, 62);
  const Tensor tall = random({50000, 20}, kFloat32, 63);
  const std::vector<std::function<Tensor()>> ops = {
      [&] { return big.sum(); },
      [&] { return big.mean(); },
      [&] { return big.logsumexp({0}); },
      [&] { return big.var(); },
      [&] { return big.norm(); },
      [&] { return big.to(kFloat16).sum(); },
      [&] { return big.to(kFloat64).sum(); },
      [&] { return mat.sum({0}); },
      [&] { return mat.sum({1}); },
      [&] { return mat.t().sum({1}); },
      [&] { return mat.logsumexp({0}); },
      [&] { return mat.var({0}); },
      [&] { return tall.sum({0}); },
      [&] { return tall.t().sum({1}); },
      [&] { return std::get<1>(mat.max(0)); },
      [&] { return mat.argmax(); },
      [&] { return mat.cumsum(0); },
      [&] { return mat.cumsum(1); },
  };
  for (size_t k = 0; k < ops.size(); ++k) {
    set_num_threads(1);
    const std::vector<unsigned char> one = bytes(ops[k]());
    set_num_threads(2);
    const std::vector<unsigned char> two = bytes(ops[k]());
    EXPECT_EQ(one, two) << "op " << k;
  }
  set_num_threads(saved);
}

TEST(Reduce, SumOf16MFloatsIsAccurate) {
  Generator g(71);
  const Tensor x = rand({1 << 24}, kFloat32, &g);
  const float* p = x.data_ptr<float>();
  double exact = 0;
  for (int64_t i = 0; i < x.numel(); ++i) exact += p[i];
  const double got = x.sum().item<double>();
  EXPECT_LE(std::fabs(got - exact) / exact, 1e-6) << got << " vs " << exact;
  const double mean = x.mean().item<double>();
  EXPECT_LE(std::fabs(mean - exact / x.numel()) / (exact / x.numel()), 1e-6);
  // Down the columns too: dim 0 of [2^14, 2^10] (every column 16384 values).
  const Tensor cols = x.view({1 << 14, 1 << 10}).sum({0});
  const std::vector<double> cv = values(cols);
  for (int64_t j = 0; j < 1024; j += 97) {
    double e = 0;
    for (int64_t i = 0; i < (1 << 14); ++i) e += p[i * 1024 + j];
    EXPECT_LE(std::fabs(cv[j] - e) / e, 1e-6) << "column " << j;
  }
}

// ---- bad inputs ----

TEST(Reduce, ErrorsNameTheOp) {
  const Tensor x = ones({2, 3});
  EXPECT_EMBER_ERROR(x.sum({2}), "sum", "out of range");
  EXPECT_EMBER_ERROR(x.sum({0, -2}), "sum", "multiple times");
  EXPECT_EMBER_ERROR(x.mean({1, 1}), "mean", "multiple times");
  EXPECT_EMBER_ERROR(x.amax({-3}), "amax", "out of range");
  EXPECT_EMBER_ERROR(x.logsumexp({0, 0}), "logsumexp", "multiple times");
  EXPECT_EMBER_ERROR(x.max(5), "max", "out of range");
  EXPECT_EMBER_ERROR(x.argmin(-3), "argmin", "out of range");
  EXPECT_EMBER_ERROR(x.cumsum(2), "cumsum", "out of range");
  EXPECT_EMBER_ERROR(x.all({7}), "all", "out of range");
  EXPECT_EMBER_ERROR(make({}, {1}).sum({1}), "sum", "out of range");

  const Tensor e = zeros({0, 3});
  EXPECT_EMBER_ERROR(e.amax(), "amax", "size 0");
  EXPECT_EMBER_ERROR(e.amin({0}), "amin", "dim 0", "size 0");
  EXPECT_EMBER_ERROR(e.max(), "max", "empty");
  EXPECT_EMBER_ERROR(e.min(), "min", "empty");
  EXPECT_EMBER_ERROR(e.max(0), "max", "dim 0", "size 0");
  EXPECT_EMBER_ERROR(e.argmax(), "argmax", "empty");
  EXPECT_EMBER_ERROR(e.argmin(0), "argmin", "size 0");
  EXPECT_EMBER_ERROR(e.norm(kInf), "norm", "size 0");
  EXPECT_EMBER_ERROR(e.norm(-1, {0}), "norm", "size 0");
  // Reductions over the non-empty dim of an empty tensor are fine.
  EXPECT_EQ(e.amax({1}).sizes(), IntArrayRef({0}));
  EXPECT_EQ(std::get<1>(e.max(1)).sizes(), IntArrayRef({0}));

  const Tensor i = ones({2, 3}, kInt32);
  EXPECT_EMBER_ERROR(i.mean(), "mean", "floating-point", "int32");
  EXPECT_EMBER_ERROR(i.var(), "var", "floating-point");
  EXPECT_EMBER_ERROR(i.std(), "std", "floating-point");
  EXPECT_EMBER_ERROR(i.norm(), "norm", "floating-point");
  EXPECT_EMBER_ERROR(ones({2}, kBool).mean(), "mean", "bool");
}

}  // namespace
}  // namespace ember
