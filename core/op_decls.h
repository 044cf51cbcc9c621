// Every dispatched op, declared once: C++ name, dtype rule, schema, C++ signature.
// The list generates `ember::op::<name>` (a TypedOp) for each entry; kernels
// register against these objects, public functions call them.
//
// Schema types: Tensor, Tensor? (optional), Tensor[] (list; in `index`, an
// undefined entry means "no index on this dim"), Scalar, Scalar?, int, int?,
// int[], float, bool, str, ScalarType?. `(a!)` marks an argument written in place.
#pragma once

#include "core/dispatcher.h"
#include "ember/unary_op_list.h"

namespace ember {
// Two or three results, e.g. (values, indices); a name keeps the macro arguments comma-free.
using TensorPair = std::tuple<Tensor, Tensor>;
using TensorTriple = std::tuple<Tensor, Tensor, Tensor>;
}  // namespace ember

// The neural-network families have one list per file, core/op_decls_<family>.h
// (same entry format, declared the same way); only the files that use a
// family include its header, so a change to one family rebuilds little.

// clang-format off
#define EMBER_BINARY_OPS(X) \
  X(add,  "add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(add_, "add_(Tensor(a!) self, Tensor other, Scalar alpha=1) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(sub,  "sub(Tensor self, Tensor other, Scalar alpha=1) -> Tensor", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(sub_, "sub_(Tensor(a!) self, Tensor other, Scalar alpha=1) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(mul,  "mul(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(mul_, "mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&)) \
  X(div,  "div(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(div_, "div_(Tensor(a!) self, Tensor other) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&)) \
  X(div_mode, "div_mode(Tensor self, Tensor other, str rounding_mode) -> Tensor", Tensor(const Tensor&, const Tensor&, std::string_view)) \
  X(pow,  "pow(Tensor self, Tensor exponent) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(pow_, "pow_(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&)) \
  X(maximum, "maximum(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(minimum, "minimum(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(remainder, "remainder(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(eq, "eq(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(ne, "ne(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(lt, "lt(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(le, "le(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(gt, "gt(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(ge, "ge(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(logical_and, "logical_and(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(logical_or,  "logical_or(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(logical_xor, "logical_xor(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(where, "where(Tensor condition, Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&, const Tensor&)) \
  X(atan2,  "atan2(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(atan2_, "atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&)) \
  X(logaddexp, "logaddexp(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&))

// Unary ops whose output dtype follows the input (integers promote to float32
// for the transcendental ones, as in PyTorch); each has an in-place form
// `name_`. The list is public (ember/unary_op_list.h): it also generates the
// free functions and Tensor methods.
#define EMBER_UNARY_OPS(X) EMBER_FORALL_UNARY_OPS(X)

#define EMBER_FIRST_TENSOR_OPS(X) \
  /* elementwise with extra arguments */ \
  X(gelu, "gelu(Tensor self, str approximate='none') -> Tensor", Tensor(const Tensor&, std::string_view)) \
  X(softplus, "softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", Tensor(const Tensor&, const Scalar&, const Scalar&)) \
  X(isnan, "isnan(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(isinf, "isinf(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(logical_not, "logical_not(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(clamp, "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&)) \
  X(clamp_, "clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", Tensor(const Tensor&, const std::optional<Scalar>&, const std::optional<Scalar>&)) \
  X(masked_fill, "masked_fill(Tensor self, Tensor mask, Scalar value) -> Tensor", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(masked_fill_, "masked_fill_(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&, const Scalar&)) \
  X(lerp, "lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", Tensor(const Tensor&, const Tensor&, const Tensor&)) \
  X(lerp_, "lerp_(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&, const Tensor&)) \
  /* copies and fills */ \
  X(copy_, "copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&, bool)) \
  X(fill_, "fill_(Tensor(a!) self, Scalar value) -> Tensor(a!)", Tensor(const Tensor&, const Scalar&)) \
  X(clone, "clone(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  X(uniform_, "uniform_(Tensor(a!) self, float low, float high, int seed, int offset) -> Tensor(a!)", Tensor(const Tensor&, double, double, int64_t, int64_t)) \
  X(normal_, "normal_(Tensor(a!) self, float mean, float std, int seed, int offset) -> Tensor(a!)", Tensor(const Tensor&, double, double, int64_t, int64_t)) \
  X(random_, "random_(Tensor(a!) self, int low, int high, int seed, int offset) -> Tensor(a!)", Tensor(const Tensor&, int64_t, int64_t, int64_t, int64_t)) \
  X(bernoulli_, "bernoulli_(Tensor(a!) self, Tensor p, int seed, int offset) -> Tensor(a!)", Tensor(const Tensor&, const Tensor&, int64_t, int64_t)) \
  X(multinomial, "multinomial(Tensor self, int num_samples, bool replacement, int seed, int offset) -> Tensor", Tensor(const Tensor&, int64_t, bool, int64_t, int64_t)) \
  /* views: share storage */ \
  X(view, "view(Tensor(a) self, int[] size) -> Tensor(a)", Tensor(const Tensor&, IntArrayRef)) \
  X(permute, "permute(Tensor(a) self, int[] dims) -> Tensor(a)", Tensor(const Tensor&, IntArrayRef)) \
  X(transpose, "transpose(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", Tensor(const Tensor&, int64_t, int64_t)) \
  X(slice, "slice(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)", Tensor(const Tensor&, int64_t, std::optional<int64_t>, std::optional<int64_t>, int64_t)) \
  X(select, "select(Tensor(a) self, int dim, int index) -> Tensor(a)", Tensor(const Tensor&, int64_t, int64_t)) \
  X(squeeze, "squeeze(Tensor(a) self) -> Tensor(a)", Tensor(const Tensor&)) \
  X(squeeze_dim, "squeeze_dim(Tensor(a) self, int dim) -> Tensor(a)", Tensor(const Tensor&, int64_t)) \
  X(unsqueeze, "unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", Tensor(const Tensor&, int64_t)) \
  X(expand, "expand(Tensor(a) self, int[] size) -> Tensor(a)", Tensor(const Tensor&, IntArrayRef)) \
  X(diagonal, "diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", Tensor(const Tensor&, int64_t, int64_t, int64_t)) \
  X(as_strided, "as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)", Tensor(const Tensor&, IntArrayRef, IntArrayRef, std::optional<int64_t>)) \
  /* indexing with tensors */ \
  X(index, "index(Tensor self, Tensor?[] indices) -> Tensor", Tensor(const Tensor&, const TensorList&)) \
  X(index_put_, "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)", Tensor(const Tensor&, const TensorList&, const Tensor&, bool)) \
  X(nonzero, "nonzero(Tensor self) -> Tensor", Tensor(const Tensor&)) \
  /* reductions */ \
  X(sum, "sum(Tensor self, int[] dim=[], bool keepdim=False, ScalarType? dtype=None) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool, std::optional<DType>)) \
  X(mean, "mean(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool)) \
  X(prod, "prod(Tensor self, int[] dim=[], bool keepdim=False, ScalarType? dtype=None) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool, std::optional<DType>)) \
  X(amax, "amax(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool)) \
  X(amin, "amin(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool)) \
  X(max_dim, "max_dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", TensorPair(const Tensor&, int64_t, bool)) \
  X(min_dim, "min_dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", TensorPair(const Tensor&, int64_t, bool)) \
  X(argmax, "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", Tensor(const Tensor&, std::optional<int64_t>, bool)) \
  X(argmin, "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", Tensor(const Tensor&, std::optional<int64_t>, bool)) \
  X(var, "var(Tensor self, int[] dim=[], int correction=1, bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, int64_t, bool)) \
  X(std_dev, "std(Tensor self, int[] dim=[], int correction=1, bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, int64_t, bool)) \
  X(norm, "norm(Tensor self, Scalar p=2, int[] dim=[], bool keepdim=False) -> Tensor", Tensor(const Tensor&, const Scalar&, IntArrayRef, bool)) \
  X(logsumexp, "logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool)) \
  X(all, "all(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool)) \
  X(any, "any(Tensor self, int[] dim=[], bool keepdim=False) -> Tensor", Tensor(const Tensor&, IntArrayRef, bool)) \
  X(cumsum, "cumsum(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", Tensor(const Tensor&, int64_t, std::optional<DType>)) \
  X(cumprod, "cumprod(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", Tensor(const Tensor&, int64_t, std::optional<DType>)) \
  /* triangles, one-hot, sorting */ \
  X(tril, "tril(Tensor self, int diagonal=0) -> Tensor", Tensor(const Tensor&, int64_t)) \
  X(triu, "triu(Tensor self, int diagonal=0) -> Tensor", Tensor(const Tensor&, int64_t)) \
  X(one_hot, "one_hot(Tensor self, int num_classes=-1) -> Tensor", Tensor(const Tensor&, int64_t)) \
  X(sort, "sort(Tensor self, int dim=-1, bool descending=False, bool stable=False) -> (Tensor values, Tensor indices)", TensorPair(const Tensor&, int64_t, bool, bool)) \
  X(topk, "topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)", TensorPair(const Tensor&, int64_t, int64_t, bool, bool)) \
  X(unique, "unique(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor values, Tensor inverse, Tensor counts)", TensorTriple(const Tensor&, bool, bool, bool)) \
  X(searchsorted, "searchsorted(Tensor sorted_sequence, Tensor self, bool out_int32=False, bool right=False) -> Tensor", Tensor(const Tensor&, const Tensor&, bool, bool))

#define EMBER_PROMOTE_OPS(X) \
  X(mm, "mm(Tensor self, Tensor mat2) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(bmm, "bmm(Tensor self, Tensor mat2) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(addmm, "addmm(Tensor self, Tensor mat1, Tensor mat2, Scalar beta=1, Scalar alpha=1) -> Tensor", Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&)) \
  X(dot, "dot(Tensor self, Tensor other) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(mv, "mv(Tensor self, Tensor vec) -> Tensor", Tensor(const Tensor&, const Tensor&)) \
  X(cat, "cat(Tensor[] tensors, int dim=0) -> Tensor", Tensor(const TensorList&, int64_t))
// clang-format on

namespace ember::op {

// Also used by the family headers (core/op_decls_<family>.h).
#define EMBER_DECLARE_OP(name, schema, sig) extern TypedOp<sig> name;
#define EMBER_DECLARE_UNARY(name)                      \
  extern TypedOp<Tensor(const Tensor&)> name;          \
  extern TypedOp<Tensor(const Tensor&)> name##_;
EMBER_BINARY_OPS(EMBER_DECLARE_OP)
EMBER_UNARY_OPS(EMBER_DECLARE_UNARY)
EMBER_FIRST_TENSOR_OPS(EMBER_DECLARE_OP)
EMBER_PROMOTE_OPS(EMBER_DECLARE_OP)
#undef EMBER_DECLARE_UNARY

}  // namespace ember::op
