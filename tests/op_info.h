// The op-info table: one row per dispatched op, saying what the op promises.
//
// Note [The op-info table]
// A row is data. It names an op as the dispatcher does ("add", "add_",
// "max_dim", "std"), lists the dtypes that have a CPU kernel, the ones of
// those the op refuses with an ember::Error (as PyTorch does: neg of a bool
// tensor, exp_ of an int tensor), the dtype of its first result for inputs
// of a dtype, and two functions:
//   samples(dtype, size)  argument lists in schema order (a boxed Stack):
//                         contiguous, broadcast, transposed, step-sliced,
//                         empty and 0-d inputs, Scalar operands, and special
//                         values (0, -0, +-inf, NaN) for floating dtypes;
//   reference(args)       the outputs, computed element by element on the
//                         host in double (int64 for integer and bool
//                         results) from the raw input values, never with
//                         ember ops; or the error the op must raise.
// Random ops (in place, or Sampled: new tensors) have a property check
// (range, moments, reproducibility) instead of a reference. The generic tests (tests/test_opinfo.cpp) call
// every sample through the dispatcher's boxed path, so a row also pins the
// op's schema.
//
// `differentiable` says the op has a derivative formula (autograd/formula.h):
// its floating results carry gradients, and tests/autograd_gradcheck.cpp
// runs gradcheck on the row's Float64 samples. It is set for every row but
// the ops whose results never require grad: comparisons, logical ops,
// isnan/isinf, argmax/argmin, all/any, nonzero, one_hot, unique,
// searchsorted and multinomial (the list is in op_infos()). Ops with a zero gradient (floor, sign, div with a rounding
// mode, the random fills) have a formula, so they are differentiable too.
//
// Known disagreements with PyTorch are listed in the row (`divergences`):
// the test expects the mismatch, and fails once the kernel is fixed, so the
// entry gets deleted rather than forgotten.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ivalue.h"
#include "ember/ember.h"

namespace ember::testing {

// ---- small helpers shared by the op-info rows ----
using Shape = std::vector<int64_t>;

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t v : s) n *= v;
  return n;
}

// x rounded to the floating dtype t (what storing it gives).
inline double round_to(DType t, double x) {
  switch (t) {
    case DType::Float32: return static_cast<float>(x);
    case DType::Float16: return static_cast<float>(Half(static_cast<float>(x)));
    case DType::BFloat16: return static_cast<float>(BFloat16(static_cast<float>(x)));
    default: return x;
  }
}

// Calls f(multi_index, linear_index) for every element of `shape`, in row-major order.
template <class F>
void for_each_index(const Shape& shape, F f) {
  const int64_t n = numel_of(shape);
  Shape idx(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    f(idx, k);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// The row-major position of multi-index idx in shape.
inline int64_t linear_index(const Shape& idx, const Shape& shape) {
  int64_t k = 0;
  for (size_t d = 0; d < shape.size(); ++d) k = k * shape[d] + idx[d];
  return k;
}

// A tensor's values, read from its memory through sizes and strides.
struct HostTensor {
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  std::vector<double> f;   // the values of a floating tensor
  std::vector<int64_t> i;  // the values of an integer or bool tensor (exact)

  HostTensor() = default;
  HostTensor(std::vector<int64_t> shape, DType dtype);  // all zeros
  int64_t numel() const;
  int64_t dim() const { return static_cast<int64_t>(shape.size()); }
  bool floating() const { return is_floating_point(dtype); }
  double at(int64_t k) const { return floating() ? f[k] : static_cast<double>(i[k]); }
  int64_t at_int(int64_t k) const { return floating() ? static_cast<int64_t>(f[k]) : i[k]; }
  // Store as a C++ conversion to the dtype would: integers truncate and wrap,
  // bool is "nonzero" (NaN is true). f16/bf16 keep the exact double.
  void set(int64_t k, double v);
  void set_int(int64_t k, int64_t v);
};
HostTensor to_host(const Tensor& t);

// One call of an op.
struct Sample {
  std::string name{};               // "contiguous", "broadcast", "transposed", "empty", "0d", "special", ...
  Stack args{};                     // every argument, in schema order
  std::optional<DType> out_dtype{}; // output 0's dtype when the sample overrides the row's rule
  std::string error{};              // non-empty: a bad input; the op must raise an ember::Error containing this
};

enum class SampleSize : uint8_t { Small, Large };  // Large: ~100k elements, for the thread-count test

// The sample's arguments as the reference sees them: tensors on the host.
class RefArgs {
 public:
  RefArgs(const Sample& s, DType out_dtype) : out(out_dtype), s_(s) {}
  const DType out;  // the declared dtype of output 0

  HostTensor tensor(size_t i) const;
  std::vector<std::optional<HostTensor>> tensors(size_t i) const;  // undefined entries are nullopt
  bool is_none(size_t i) const { return s_.args.at(i).is_none(); }
  double number(size_t i) const;    // a Scalar, float, int or bool
  int64_t integer(size_t i) const;  // an int, bool or Scalar (truncated)
  bool flag(size_t i) const;
  std::vector<int64_t> ints(size_t i) const;
  std::string str(size_t i) const;
  std::optional<DType> dtype_arg(size_t i) const;
  const Sample& sample() const { return s_; }

 private:
  const Sample& s_;
};

// What a sample must give: its outputs, or an ember::Error (whose message
// contains `error_part`).
struct Expected {
  std::vector<HostTensor> outputs{};
  bool fails = false;
  std::string error_part{};
  static Expected raises(std::string part) { return {{}, true, std::move(part)}; }
};

enum class OpKind : uint8_t {
  Functional,  // returns new tensors
  InPlace,     // writes argument 0 and returns it
  View,        // output 0 shares argument 0's storage
  Random,      // in place, checked by properties instead of a reference
  Sampled,     // returns new tensors drawn at random, checked by properties
  Factorization,  // returns factors unique only up to signs (qr, svd, eigh), checked by properties
};

// A known disagreement with PyTorch: for `sample` (and `dtypes`, all when
// empty) ember's output differs from the reference, which follows torch.
struct Divergence {
  std::string sample{};
  std::vector<DType> dtypes{};
  std::string what{};  // the input, torch's result and ember's
};

struct OpInfo {
  std::string name{};            // the dispatcher's name
  std::vector<DType> dtypes{};   // dtypes with a CPU kernel
  std::vector<DType> rejects{};  // of those, the ones the op refuses with an error
  DType (*out_dtype)(DType) = nullptr;
  OpKind kind = OpKind::Functional;
  std::function<std::vector<Sample>(DType, SampleSize)> samples{};
  std::function<Expected(const RefArgs&)> reference{};  // Random, Sampled and Factorization rows: only the errors
  // Random, Sampled and Factorization rows: properties of a sample's outputs
  // (the check may run fresh copies of the sample).
  std::function<::testing::AssertionResult(const Sample&, const TensorList&)> check{};
  // gradcheck calls the op on the arguments this rewrites (with ember ops, so
  // gradients flow through), as PyTorch's gradcheck_wrapper: an op that reads
  // one triangle of a symmetric matrix gets the matrix that triangle defines.
  std::function<void(Stack& args)> gradcheck_wrapper{};
  // How close the outputs must be to the reference (Note [Tolerances] in
  // tests/op_info.cpp): `exact` rows move, select or compare input values and
  // must give the reference's values exactly; the others say, per sample, how
  // many terms one output element accumulates (K: the reduced length, a
  // product's inner dim, C_in x kernel volume, the key count; none: 1).
  bool exact = false;
  std::function<int64_t(const Sample&)> accumulation{};
  bool narrow_intermediates = false;  // its float16/bfloat16 kernel rounds intermediates to the dtype
  std::vector<Divergence> divergences{};
  bool differentiable = false;  // has a derivative formula (see the Note)

  // The row's samples for `dtype`, from inputs seeded by the op's name and the dtype.
  std::vector<Sample> make_samples(DType dtype, SampleSize size) const;
  bool rejects_dtype(DType t) const;
  const Divergence* divergence(const std::string& sample, DType t) const;
};

const std::vector<OpInfo>& op_infos();
// Each family's rows, one file each (tests/op_info_<family>.cpp).
void add_binary_rows(std::vector<OpInfo>& rows);
void add_unary_rows(std::vector<OpInfo>& rows);
void add_elementwise_rows(std::vector<OpInfo>& rows);
void add_copy_and_random_rows(std::vector<OpInfo>& rows);
void add_view_rows(std::vector<OpInfo>& rows);
void add_advanced_index_rows(std::vector<OpInfo>& rows);
void add_reduction_rows(std::vector<OpInfo>& rows);
void add_shape_rows(std::vector<OpInfo>& rows);
void add_linalg_rows(std::vector<OpInfo>& rows);
void add_activation_rows(std::vector<OpInfo>& rows);
void add_attention_rows(std::vector<OpInfo>& rows);
void add_conv_rows(std::vector<OpInfo>& rows);
void add_fold_rows(std::vector<OpInfo>& rows);
void add_indexing_rows(std::vector<OpInfo>& rows);
void add_loss_rows(std::vector<OpInfo>& rows);
void add_norm_rows(std::vector<OpInfo>& rows);
void add_pooling_rows(std::vector<OpInfo>& rows);
void add_padding_rows(std::vector<OpInfo>& rows);
void add_pooling3d_rows(std::vector<OpInfo>& rows);
void add_rnn_rows(std::vector<OpInfo>& rows);
void add_linalg_decomposition_rows(std::vector<OpInfo>& rows);
void add_linalg_factorization_rows(std::vector<OpInfo>& rows);
const std::vector<OpInfo>& op_infos();
const OpInfo* find_op_info(std::string_view name);

// Sizes of a sample's tensor arguments, for rows' accumulation lengths (Note [Tolerances]).
inline Shape arg_sizes(const Sample& s, size_t i) {
  const IValue& v = s.args.at(i);
  return v.is_tensor() && v.tensor().defined() ? v.tensor().sizes().vec() : Shape{};
}
inline int64_t arg_numel(const Sample& s, size_t i) { return numel_of(arg_sizes(s, i)); }
// The product of the last n dims of tensor argument i (a plane or a window).
inline int64_t trailing_numel(const Sample& s, size_t i, size_t n) {
  const Shape sizes = arg_sizes(s, i);
  int64_t k = 1;
  for (size_t d = sizes.size() > n ? sizes.size() - n : 0; d < sizes.size(); ++d) k *= sizes[d];
  return k;
}
// The most elements any tensor argument has: a bound on the terms one output
// element can sum, for rows whose sums are short and irregular (pooling windows, losses).
inline int64_t largest_arg_numel(const Sample& s) {
  int64_t k = 1;
  for (size_t i = 0; i < s.args.size(); ++i) k = std::max(k, arg_numel(s, i));
  return k;
}
// The size of tensor argument i along the dim in int argument `dim_arg` (1 for a 0-d tensor or a bad dim).
inline int64_t arg_dim_size(const Sample& s, size_t i, size_t dim_arg) {
  const Shape sizes = arg_sizes(s, i);
  const int64_t n = static_cast<int64_t>(sizes.size()), d = std::get<int64_t>(s.args.at(dim_arg).payload());
  if (d < -n || d >= n) return 1;
  return sizes[static_cast<size_t>(d < 0 ? d + n : d)];
}

// Output-dtype rules.
DType same_dtype(DType t);
DType bool_dtype(DType t);
DType int64_dtype(DType t);
DType float_of_int(DType t);   // integers and bool -> float32 (exp, div)
DType int64_of_int(DType t);   // integers and bool -> int64 (sum, cumsum)
DType bool_or_uint8(DType t);  // all, any: uint8 stays uint8

// Runs a sample through the dispatcher (a boxed call; the Stack is copied but
// its tensors are shared, so an in-place op writes the sample's); returns
// every output.
TensorList run_sample(const OpInfo& op, const Sample& s);
TensorList run_sample(const std::string& op, const Sample& s);
// A fresh copy of a sample: tensor arguments cloned (for in-place and random ops).
Sample copy_sample(const Sample& s);

// What a comparison allows (Note [Tolerances] in tests/op_info.cpp).
struct Accuracy {
  bool exact = false;       // the same value as the reference rounded to the dtype
  int64_t accumulated = 1;  // K, the number of terms an output element sums
  bool narrow_intermediates = false;  // float16/bfloat16 intermediates are rounded to the dtype
};
// The tolerance for a floating dtype and K: |actual - expected| <= bound(expected).
struct Tolerance {
  double accumulation = 0;  // relative to 1 + |expected|
  double rounding = 0;      // relative to |expected|: the output's own rounding
  double bound(double expected) const {
    return accumulation * (1 + std::fabs(expected)) + rounding * std::fabs(expected);
  }
};
Tolerance tolerance(DType t, int64_t accumulated, bool narrow_intermediates = false);
// A row's accuracy for one of its samples.
Accuracy accuracy_of(const OpInfo& row, const Sample& s);

// Compares an output with the reference: shape, dtype, and values, exactly
// for integers, bool and `exact` rows, else within tolerance(), the
// expected value first rounded to the dtype; NaN matches NaN, inf only inf.
::testing::AssertionResult matches(const HostTensor& actual, const HostTensor& expected, Accuracy accuracy = {});
// True when two tensors have the same shape, dtype and bits, element by element.
bool bitwise_equal(const Tensor& a, const Tensor& b);

}  // namespace ember::testing
