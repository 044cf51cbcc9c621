// The op-info linear-algebra rows' shared parts (tests/op_info_linalg_decompositions.cpp
// and tests/op_info_linalg_factorizations.cpp): the seeded, well-conditioned
// inputs, host-matrix helpers for the references and property checks, and
// how a row of the family is declared.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ember/generator.h"
#include "tests/linalg_reference.h"
#include "tests/op_info.h"

namespace ember::testing::linalg_rows {

using ref::Mat;

inline const std::vector<DType> kAll = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16,
                                        DType::Int32,   DType::Int64,   DType::UInt8,   DType::Bool};
inline const std::vector<DType> kRefused = {DType::Float16, DType::BFloat16, DType::Int32,
                                            DType::Int64,   DType::UInt8,    DType::Bool};
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- inputs ----

class Inputs {
 public:
  Inputs(const std::string& op, DType t, SampleSize size) : t_(t) {
    uint64_t h = 1469598103934665603ull;
    for (char c : op) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    gen_.manual_seed(h + 131 * static_cast<uint64_t>(t) + (size == SampleSize::Large ? 7 : 0));
  }
  DType dtype() const { return t_; }

  // Uniform in [-1, 1), in double.
  Tensor raw(Shape shape) { return ember::rand(shape, TensorOptions(kFloat64), &gen_) * 2 - 1; }

  // A double tensor stored in the sample's dtype; `transposed` stores its
  // transpose and returns a transposed (strided) view with the same values.
  Tensor store(const Tensor& d, bool transposed = false) const {
    if (!transposed) return d.to(t_);
    return d.transpose(-2, -1).contiguous().to(t_).transpose(-2, -1);
  }

  Tensor uniform(Shape shape, bool transposed = false) { return store(raw(std::move(shape)), transposed); }

  // Square matrices with a strictly dominant diagonal: invertible, condition number below ~3.
  Tensor invertible(Shape shape, bool transposed = false) {
    const int64_t n = shape.back();
    return store(raw(shape) + ember::eye(n, std::nullopt, kFloat64) * static_cast<double>(n), transposed);
  }

  // Symmetric matrices with eigenvalues within 0.2 of 1, 2, ..., n (the
  // perturbation's entries are below 0.2 / n, so its norm is below 0.2).
  Tensor symmetric_d(Shape shape) {
    const int64_t n = shape.back();
    const Tensor m = raw(shape) * (0.1 / static_cast<double>(n));
    const Tensor ramp = ember::arange(1, n + 1, 1, TensorOptions(kFloat64));
    return m + m.transpose(-2, -1) + ramp.unsqueeze(-1) * ember::eye(n, std::nullopt, kFloat64);
  }
  Tensor symmetric(Shape shape, bool transposed = false) { return store(symmetric_d(std::move(shape)), transposed); }

  // A symmetric matrix whose triangle that is not read (upper for `lower`)
  // holds `junk`.
  Tensor one_triangle(Shape shape, bool lower, double junk) {
    const Tensor s = symmetric_d(std::move(shape));
    const Tensor kept = lower ? s.tril() : s.triu();
    const Tensor rest = ember::ones_like(s) * junk;
    return store(kept + (lower ? rest.triu(1) : rest.tril(-1)));
  }

  // A rank-2 (n, n) matrix u v^T + w z^T.
  Tensor rank_two(int64_t n) {
    const Tensor a = raw({n, 2}), b = raw({2, n});
    return store(a.matmul(b));
  }

 private:
  DType t_;
  Generator gen_;
};


inline IValue arg(const Tensor& t) { return IValue::Payload(t); }
inline IValue flag(bool v) { return IValue::Payload(v); }
inline IValue str(const std::string& s) { return IValue::Payload(s); }
inline IValue opt_scalar(std::optional<double> v) { return v ? IValue::Payload(Scalar(*v)) : IValue(); }

// A batch whose matrix `bad` is replaced by `m` (both in double).
inline Tensor with_element(const Tensor& batch, int64_t bad, const Tensor& m) {
  Tensor out = batch.clone();
  out.select(0, bad).copy_(m);
  return out;
}

inline Tensor matrix(std::initializer_list<double> values, int64_t rows, int64_t cols) {
  return ember::tensor(values, TensorOptions(kFloat64)).view({rows, cols});
}

// ---- host matrices ----

inline Shape batch_of(const Shape& shape) { return Shape(shape.begin(), shape.end() - 2); }

inline Shape broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1, y = k < b.size() ? b[b.size() - 1 - k] : 1;
    out[out.size() - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

// Matrix b of a (*, rows, cols) host tensor whose batch dims broadcast to `batch`.
inline Mat matrix_at(const HostTensor& t, const Shape& batch, int64_t b) {
  const size_t own_dims = t.shape.size() - 2;
  Shape idx(batch.size());
  for (size_t d = batch.size(); d-- > 0;) {
    idx[d] = b % batch[d];
    b /= batch[d];
  }
  int64_t own = 0;
  for (size_t d = 0; d < own_dims; ++d) {
    own = own * t.shape[d] + (t.shape[d] == 1 ? 0 : idx[batch.size() - own_dims + d]);
  }
  const int64_t rows = t.shape[own_dims], cols = t.shape[own_dims + 1];
  Mat m(rows, cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m(i, j) = t.f[static_cast<size_t>((own * rows + i) * cols + j)];
  return m;
}

// Writes m as matrix b of a host tensor whose matrices are m-sized (or as
// row b when m is a single row standing for a vector).
inline void put(HostTensor& out, int64_t b, const Mat& m) {
  const int64_t size = m.rows * m.cols;
  for (int64_t k = 0; k < size; ++k) out.f[static_cast<size_t>(b * size + k)] = m.v[static_cast<size_t>(k)];
}

inline Shape with_tail(Shape batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

inline std::string batch_element(const Shape& batch, int64_t b) {
  return batch.empty() ? "" : "batch element " + std::to_string(b) + ": ";
}

inline double tolerance(DType t, const Mat& a) {
  const double size = static_cast<double>(std::max<int64_t>(1, std::max(a.rows, a.cols)));
  return (t == DType::Float32 ? 1e-4 : 1e-11) * size * std::max(1.0, ref::max_abs(a));
}

// gradcheck's arguments for ops reading one triangle of A: A becomes the
// symmetric matrix that triangle defines (with ember ops, so the gradient
// reaches only the triangle that was read).
inline void symmetrize(Stack& args, bool lower) {
  const Tensor A = args[0].tensor();
  const Tensor S = lower ? A.tril() + A.tril(-1).transpose(-2, -1) : A.triu() + A.triu(1).transpose(-2, -1);
  args[0] = IValue::Payload(S);
}

// K (Note [Tolerances]): an n x n factorisation or solve accumulates n^3
// rounding errors; n^2 covers how the samples' well-conditioned matrices spread them.
inline int64_t decomposition_length(const Sample& s) {
  const Shape a = arg_sizes(s, 0);
  const int64_t n = a.size() >= 2 ? std::max(a[a.size() - 1], a[a.size() - 2]) : 1;
  return n * n;
}

// Appends a row of the family: every dtype offered, the floating ones other
// than float32 and float64 (and the integers) refused, differentiable.
inline void add_row(std::vector<OpInfo>& rows, std::string name,
                    std::function<std::vector<Sample>(DType, SampleSize)> samples,
                    std::function<Expected(const RefArgs&)> ref) {
  rows.push_back({.name = std::move(name), .dtypes = kAll, .rejects = kRefused, .out_dtype = same_dtype,
                  .samples = std::move(samples), .reference = std::move(ref),
                  .accumulation = decomposition_length,
                  .differentiable = true});
}

}  // namespace ember::testing::linalg_rows
