// What the pooling and padding op-info rows (op_info_pooling.cpp,
// op_info_pooling3d.cpp, op_info_padding.cpp) share: their deterministic
// sample inputs, the row form, and the reference's output size.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "tests/op_info.h"

namespace ember::testing {

// Deterministic inputs for one (op, dtype, size): a 64-bit LCG seeded by them.
class PoolingInputs {
 public:
  PoolingInputs(const std::string& op, DType t, SampleSize size) : t_(t) {
    state_ = 1469598103934665603ull;
    for (char c : op) state_ = (state_ ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    state_ += 131 * static_cast<uint64_t>(t) + (size == SampleSize::Large ? 7 : 0);
  }
  DType dtype() const { return t_; }

  double uniform() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state_ >> 11) * 0x1.0p-53;
  }

  // Values of the dtype: multiples of 1/8 in [-4, 4) (exact in every floating
  // dtype), integers in [-9, 9] ([0, 19] for uint8), or bools.
  Tensor values(const Shape& shape, bool transposed = false) {
    std::vector<double> v(static_cast<size_t>(numel_of(stored(shape, transposed))));
    for (double& x : v) x = draw();
    return make(shape, v, transposed);
  }

  // Distinct values (a permutation of 0..n-1, times 1/4, centred): no ties.
  Tensor distinct(const Shape& shape, bool transposed = false) {
    const int64_t n = numel_of(shape);
    std::vector<double> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), 0.0);
    for (int64_t i = n - 1; i > 0; --i)
      std::swap(v[i], v[static_cast<int64_t>(uniform() * static_cast<double>(i + 1))]);
    for (double& x : v) x = 0.25 * x - 0.125 * static_cast<double>(n);
    return make(shape, v, transposed);
  }

  // int64 values in [0, bound).
  Tensor indices(const Shape& shape, int64_t bound) {
    std::vector<double> v(static_cast<size_t>(numel_of(shape)));
    for (double& x : v) x = std::floor(uniform() * static_cast<double>(bound));
    return from_doubles(shape, v).to(DType::Int64);
  }

  // A tensor holding `v` in row-major order (NaN and inf included).
  Tensor exact(const Shape& shape, const std::vector<double>& v) { return from_doubles(shape, v).to(t_); }

 private:
  static Shape stored(Shape s, bool transposed) {
    if (transposed) std::swap(s[s.size() - 1], s[s.size() - 2]);
    return s;
  }
  double draw() {
    const double u = uniform();
    if (is_floating_point(t_)) return std::floor(64.0 * u) / 8.0 - 4.0;
    if (t_ == DType::Bool) return u < 0.5 ? 0.0 : 1.0;
    if (t_ == DType::UInt8) return std::floor(20.0 * u);
    return std::floor(19.0 * u) - 9.0;
  }
  static Tensor from_doubles(const Shape& shape, const std::vector<double>& v) {
    Tensor d = ember::empty(shape, kFloat64);
    std::copy(v.begin(), v.end(), d.data_ptr<double>());
    return d;
  }
  // `v` fills the stored (contiguous) layout; transposed: a transposed view of it.
  Tensor make(const Shape& shape, const std::vector<double>& v, bool transposed) {
    const Tensor t = from_doubles(stored(shape, transposed), v).to(t_);
    return transposed ? t.transpose(-1, -2) : t;
  }

  DType t_;
  uint64_t state_;
};

// A differentiable row whose output has the input's dtype.
inline void add_pooling_family_row(std::vector<OpInfo>& rows, std::string name, std::vector<DType> dtypes,
                                   std::function<std::vector<Sample>(DType, SampleSize)> samples,
                                   std::function<Expected(const RefArgs&)> reference) {
  // Max pooling, nearest upsampling and padding move input values: exact (Note [Tolerances]).
  const bool moves = !name.ends_with("_backward") && (name.starts_with("max_pool") ||
                                                      name.find("nearest") != std::string::npos ||
                                                      name.find("pad") != std::string::npos);
  rows.push_back({.name = std::move(name),
                  .dtypes = std::move(dtypes),
                  .out_dtype = same_dtype,
                  .samples = std::move(samples),
                  .reference = std::move(reference),
                  .exact = moves,
                  .accumulation = largest_arg_numel,
                  .differentiable = true});
}

// The output length of one pooled dim, as PyTorch computes it (a ceil_mode
// window must start inside the input or its left padding).
inline int64_t pooled(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation, bool ceil_mode) {
  const double span = static_cast<double>(in + 2 * pad - dilation * (k - 1) - 1);
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(span / static_cast<double>(stride))
                                               : std::floor(span / static_cast<double>(stride))) +
                1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace ember::testing
