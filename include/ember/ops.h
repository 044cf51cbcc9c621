// Free functions: factories and every op, as in the `torch::` namespace.
// Each op is dispatched (see core/dispatcher.h); `ember inspect dispatch`
// lists them with their schemas.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <tuple>

#include "ember/generator.h"
#include "ember/tensor.h"

namespace ember {

// ---- factories ----
Tensor empty(IntArrayRef sizes, TensorOptions options = {});
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {});
Tensor zeros(IntArrayRef sizes, TensorOptions options = {});
Tensor ones(IntArrayRef sizes, TensorOptions options = {});
Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions options = {});
// The dtype of arange/linspace follows PyTorch: int64 for integer bounds and
// step, float32 when any is floating, unless options set a dtype.
Tensor arange(const Scalar& end, TensorOptions options = {});
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, TensorOptions options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, TensorOptions options = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, TensorOptions options = {});
// Random factories draw from `generator`, or from the default one.
Tensor rand(IntArrayRef sizes, TensorOptions options = {}, Generator* generator = nullptr);
Tensor randn(IntArrayRef sizes, TensorOptions options = {}, Generator* generator = nullptr);
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, TensorOptions options = kInt64,
               Generator* generator = nullptr);
Tensor empty_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor ones_like(const Tensor& t, std::optional<TensorOptions> options = std::nullopt);
Tensor full_like(const Tensor& t, const Scalar& value, std::optional<TensorOptions> options = std::nullopt);
Tensor rand_like(const Tensor& t, Generator* generator = nullptr);
Tensor randn_like(const Tensor& t, Generator* generator = nullptr);
// Wraps memory the caller owns (no copy). `deleter`, when given, runs when the
// last tensor viewing it dies. Strides default to contiguous.
Tensor from_blob(void* data, IntArrayRef sizes, TensorOptions options = {},
                 std::function<void(void*)> deleter = nullptr);
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, TensorOptions options = {},
                 std::function<void(void*)> deleter = nullptr);
// A tensor holding a copy of the values: tensor({1.f, 2.f}), tensor({1, 2}, kInt32).
Tensor tensor(std::initializer_list<float> values, TensorOptions options = {});
Tensor tensor(std::initializer_list<double> values, TensorOptions options = kFloat64);
Tensor tensor(std::initializer_list<int> values, TensorOptions options = kInt64);
Tensor tensor(std::initializer_list<int64_t> values, TensorOptions options = kInt64);
Tensor tensor(std::initializer_list<bool> values, TensorOptions options = kBool);
Tensor scalar_tensor(const Scalar& value, TensorOptions options = {});
// Fills in place from a generator.
Tensor& uniform_(Tensor& t, double low = 0.0, double high = 1.0, Generator* generator = nullptr);
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* generator = nullptr);

// ---- type promotion ----
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

// ---- elementwise ----
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
// rounding_mode "trunc" (toward zero) or "floor" (toward -inf); integer inputs stay integer.
Tensor div(const Tensor& a, const Tensor& b, std::string_view rounding_mode);
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Scalar& b);
Tensor pow(const Scalar& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
Tensor masked_fill(const Tensor& t, const Tensor& mask, const Scalar& value);
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
#define EMBER_UNARY_FN(name) Tensor name(const Tensor& t);
EMBER_UNARY_FN(neg) EMBER_UNARY_FN(abs) EMBER_UNARY_FN(sign) EMBER_UNARY_FN(exp) EMBER_UNARY_FN(exp2)
EMBER_UNARY_FN(log) EMBER_UNARY_FN(log2) EMBER_UNARY_FN(log1p) EMBER_UNARY_FN(expm1) EMBER_UNARY_FN(sqrt)
EMBER_UNARY_FN(rsqrt) EMBER_UNARY_FN(reciprocal) EMBER_UNARY_FN(sin) EMBER_UNARY_FN(cos) EMBER_UNARY_FN(tan)
EMBER_UNARY_FN(tanh) EMBER_UNARY_FN(sigmoid) EMBER_UNARY_FN(relu) EMBER_UNARY_FN(silu) EMBER_UNARY_FN(erf)
EMBER_UNARY_FN(floor) EMBER_UNARY_FN(ceil) EMBER_UNARY_FN(round) EMBER_UNARY_FN(trunc) EMBER_UNARY_FN(isnan)
EMBER_UNARY_FN(isinf)
#undef EMBER_UNARY_FN
// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& t, std::string_view approximate = "none");
Tensor softplus(const Tensor& t, const Scalar& beta = 1, const Scalar& threshold = 20);

// ---- reductions ----
Tensor sum(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor prod(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor amax(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
std::tuple<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& t, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor var(const Tensor& t, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& t, IntArrayRef dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor norm(const Tensor& t, const Scalar& p = 2, IntArrayRef dims = {}, bool keepdim = false);
Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim = false);
Tensor all(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor any(const Tensor& t, IntArrayRef dims = {}, bool keepdim = false);
Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype = std::nullopt);

// ---- linear algebra ----
Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);
// beta * self + alpha * (m1 @ m2)
Tensor addmm(const Tensor& self, const Tensor& m1, const Tensor& m2, const Scalar& beta = 1, const Scalar& alpha = 1);
// input @ weight.T + bias
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt);
Tensor dot(const Tensor& a, const Tensor& b);
Tensor mv(const Tensor& m, const Tensor& v);
Tensor outer(const Tensor& a, const Tensor& b);

// ---- joining, triangles, sorting ----
Tensor cat(const TensorList& tensors, int64_t dim = 0);
Tensor stack(const TensorList& tensors, int64_t dim = 0);
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

// ---- gather, scatter, index_select, masked_select, repeat, flip, roll (core/ops_indexing.cpp) ----
// Index tensors hold int64 (index_select/index_add also take int32); an id
// outside [0, size) is an ember::Error naming the op, the id and the size.
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
// Repeated ids add up in index order, the same for any thread count.
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
// The elements where the bool mask (broadcast with self) is true, as a 1-D tensor.
Tensor masked_select(const Tensor& self, const Tensor& mask);
Tensor repeat(const Tensor& self, IntArrayRef repeats);
Tensor flip(const Tensor& self, IntArrayRef dims);
// Without dims, rolls the flattened tensor and restores its shape.
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});

}  // namespace ember
