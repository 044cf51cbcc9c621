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
#include "ember/unary_op_list.h"

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
// Draws 0 or 1 per element, 1 with probability p (in [0, 1]). bernoulli(p)
// returns draws of p's shape and dtype; bernoulli_ overwrites t (any dtype;
// a tensor p broadcasts to t's shape). Element i takes uniform number i of
// the generator's stream, so a seed gives the same draws in any layout.
Tensor bernoulli(const Tensor& p, Generator* generator = nullptr);
Tensor bernoulli(const Tensor& t, double p, Generator* generator = nullptr);
Tensor& bernoulli_(Tensor& t, double p = 0.5, Generator* generator = nullptr);
Tensor& bernoulli_(Tensor& t, const Tensor& p, Generator* generator = nullptr);
// int64 category indices drawn from the rows of `probs` (1-D, or 2-D: one
// row per distribution; non-negative weights, not necessarily normalised):
// (num_samples) or (rows, num_samples). Without replacement a category is
// drawn at most once per row (num_samples <= categories), in the order drawn.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   Generator* generator = nullptr);

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
// Bounds as tensors, broadcast with t (at least one given); a NaN bound gives NaN.
Tensor clamp(const Tensor& t, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
// The angle of the point (b, a) in [-pi, pi]; integer inputs give float32.
Tensor atan2(const Tensor& a, const Tensor& b);
// log(exp(a) + exp(b)), without overflow; floating inputs.
Tensor logaddexp(const Tensor& a, const Tensor& b);
// self + weight * (end - self), broadcast; self, end and a tensor weight share one floating dtype.
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
// self + value * tensor1 * tensor2 and self + value * tensor1 / tensor2,
// broadcast and promoted; addcdiv refuses two integer tensors, as PyTorch.
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1);
// The unary ops of ember/unary_op_list.h: exp(t), asinh(t), ...
#define EMBER_UNARY_FN(name) Tensor name(const Tensor& t);
EMBER_FORALL_UNARY_OPS(EMBER_UNARY_FN)
Tensor isnan(const Tensor& t);
Tensor isinf(const Tensor& t);
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
// beta * self + alpha * bmm(batch1, batch2); self broadcasts to (b, n, m). beta = 0 ignores self (NaN included).
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta = 1,
               const Scalar& alpha = 1);
// The Kronecker product: for (a0, a1, ...) and (b0, b1, ...), (a0 * b0, a1 * b1, ...) (the fewer dims padded with 1).
Tensor kron(const Tensor& a, const Tensor& b);
// A vector (n) becomes the (n + |d|)-square matrix with it on diagonal d;
// a matrix gives a copy of its diagonal d.
Tensor diag(const Tensor& t, int64_t diagonal = 0);
// The sum of a matrix's main diagonal (integers sum to int64).
Tensor trace(const Tensor& t);
// Einstein summation, as torch.einsum: "bij,bjk->bik", "ii->i" (diagonal),
// "ii" (trace), "...ij,...jk" (ellipsis: broadcast batch dims), implicit
// output (no "->": the labels used once, in alphabetical order, uppercase
// first). Operands are contracted two at a time with bmm, in the order
// that needs the fewest multiply-adds.
Tensor einsum(std::string_view equation, const TensorList& operands);
// The p-norm distance between every row of x1 (*, P, M) and of x2 (*, R, M):
// (*, P, R), batch dims broadcast. Computed from the differences (no
// ||x||^2 - 2 x.y + ||y||^2 shortcut), so equal rows give exactly 0.
Tensor cdist(const Tensor& x1, const Tensor& x2, double p = 2.0);

// ---- joining, triangles, sorting ----
Tensor cat(const TensorList& tensors, int64_t dim = 0);
// Joins tensors of one shape along a new dim.
Tensor stack(const TensorList& tensors, int64_t dim = 0);
// Views of consecutive pieces along dim: of split_size each (the last may be
// smaller), of the given sizes, or `chunks` pieces of ceil(size / chunks).
TensorList split(const Tensor& t, int64_t split_size, int64_t dim = 0);
TensorList split(const Tensor& t, IntArrayRef split_sizes, int64_t dim = 0);
TensorList split_with_sizes(const Tensor& t, IntArrayRef split_sizes, int64_t dim = 0);
TensorList chunk(const Tensor& t, int64_t chunks, int64_t dim = 0);
// Coordinate grids of 0-d or 1-d tensors (one dtype): output k holds input k
// along dim k ("ij") or, for "xy", with the first two dims swapped. The
// results are expanded views.
TensorList meshgrid(const TensorList& tensors, std::string_view indexing = "ij");
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1);
std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
// The indices of sort(t, dim, descending). Ties keep index order, stable or not.
Tensor argsort(const Tensor& t, int64_t dim = -1, bool descending = false, bool stable = false);
// The distinct values of the flattened tensor, ascending (also for sorted =
// false, a valid order there), then the int64 inverse (t's shape: the index
// of each element's value) and counts, each empty unless asked for. -0 and
// 0 are one value; every NaN is its own, after the numbers. Only the
// flattened form: a dim is an error.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false, std::optional<int64_t> dim = std::nullopt);
// For each value, the index where inserting it keeps sorted_sequence sorted:
// the first such index, or the last with right (or side "right"). A 1-D
// sequence serves every value; an N-D one has one row per row of values
// (whose leading dims must match). int64 indices, int32 with out_int32.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt);
Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& value, bool out_int32 = false, bool right = false,
                    std::optional<std::string_view> side = std::nullopt);
// The bucket of each value among the 1-D `boundaries`: searchsorted(boundaries, input, out_int32, right).
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32 = false, bool right = false);
Tensor bucketize(const Scalar& input, const Tensor& boundaries, bool out_int32 = false, bool right = false);

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

// ---- shape and comparison helpers, as torch:: (core/ops_views.cpp, core/ops_isclose.cpp) ----
// t.flatten(start_dim, end_dim).
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
// Elementwise |a - b| <= atol + rtol * |b| (broadcast; a bool tensor). Equal
// values are close (infinities of one sign included); NaNs are close to
// each other only with equal_nan. a and b must have one dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
// Whether every element of isclose(a, b, ...) is true.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);

}  // namespace ember
